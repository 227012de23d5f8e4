"""Build a tiny TensorRT network with the ``gvr::topk_varlen`` plugin and compare it with the torch op.

    python examples/tensorrt_plugin.py                # JIT and AOT engines, hint-free and hinted
    python examples/tensorrt_plugin.py --mode aot     # only the ahead-of-time (Python-free) engine

Needs TensorRT 10.12 or later with ``tensorrt.plugin`` (installed from NVIDIA's package index, not PyPI) and a CUDA
GPU. Where either is missing it says so and exits 0. Exit status 1 means the engine's output differs from the torch
op's.
"""

import argparse
import sys


def _tensorrt_or_none():
    try:
        import tensorrt
        import tensorrt.plugin  # noqa: F401
    except ImportError as e:
        print(f"TensorRT is not installed here ({e}); nothing to run. Install TensorRT 10.12+ from NVIDIA's package "
              "index (see plugin/README.md) to build the example engine.")
        return None
    return tensorrt


def build_engine(trt, rows, npad, batch, attrs, aot):
    """Serialized engine: inputs logits/kv_lens/pre_idx, output indices, one plugin layer."""
    import tensorrt.plugin as trtp

    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    # TensorRT 10 needs the strongly-typed flag asked for; TensorRT 11 networks are always strongly typed.
    flag = getattr(trt.NetworkDefinitionCreationFlag, "STRONGLY_TYPED", None)
    network = builder.create_network(0 if flag is None else 1 << int(flag))
    logits = network.add_input("logits", trt.float32, (rows, npad))
    kv_lens = network.add_input("kv_lens", trt.int32, (batch,))
    pre_idx = network.add_input("pre_idx", trt.int32, (batch, attrs["k"]))
    op = trtp.op.gvr.topk_varlen(logits, kv_lens, pre_idx, **attrs)
    layer = network.add_plugin(op, aot=aot)
    out = layer.get_output(0)
    out.name = "indices"
    network.mark_output(out)
    blob = builder.build_serialized_network(network, builder.create_builder_config())
    if blob is None:
        raise RuntimeError("TensorRT could not build the engine (see the log above)")
    return trt.Runtime(logger).deserialize_cuda_engine(blob)


def run_engine(engine, tensors):
    import torch

    ctx = engine.create_execution_context()
    for name, t in tensors.items():
        ctx.set_tensor_address(name, t.data_ptr())
    stream = torch.cuda.current_stream()
    if not ctx.execute_async_v3(stream.cuda_stream):
        raise RuntimeError("TensorRT execution failed")
    stream.synchronize()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("jit", "aot", "both"), default="both")
    p.add_argument("--rows", type=int, default=8)
    p.add_argument("--npad", type=int, default=8192)
    p.add_argument("--k", type=int, default=512)
    args = p.parse_args(argv)

    trt = _tensorrt_or_none()
    if trt is None:
        return 0
    import torch

    if not torch.cuda.is_available():
        print("TensorRT is installed but no CUDA GPU is visible; building an engine needs one. Nothing to run.")
        return 0

    import gvr_topk
    import gvr_topk_plugin
    from gvr_topk.testing import check_exact

    gvr_topk_plugin.register()
    next_n, cr = 2, 4
    rows = args.rows - args.rows % next_n
    batch = rows // next_n
    max_seq_len = args.npad * cr
    torch.manual_seed(0)
    logits = torch.randn(rows, args.npad, device="cuda")
    kv_lens = torch.randint(0, max_seq_len + 1, (batch,), dtype=torch.int32, device="cuda")
    pre_idx = torch.randint(-1, args.npad, (batch, args.k), dtype=torch.int32, device="cuda")

    failures = 0
    modes = ("jit", "aot") if args.mode == "both" else (args.mode,)
    for aot in (m == "aot" for m in modes):
        for hint_free in (1, 0):
            attrs = dict(k=args.k, next_n=next_n, compress_ratio=cr, max_seq_len=max_seq_len, hint_free=hint_free)
            engine = build_engine(trt, rows, args.npad, batch, attrs, aot)
            got = torch.full((rows, args.k), -7, dtype=torch.int32, device="cuda")
            run_engine(engine, {"logits": logits, "kv_lens": kv_lens, "pre_idx": pre_idx, "indices": got})
            want = torch.empty_like(got)
            gvr_topk.run_varlen(logits, None if hint_free else pre_idx, kv_lens, want, next_n=next_n,
                                compress_ratio=cr, max_seq_len=max_seq_len)
            problems = check_exact(logits, got, kv_lens=kv_lens, next_n=next_n, compress_ratio=cr)
            # The tie rule fixes the chosen set, so the engine and the torch op must agree row by row.
            differ = [r for r in range(rows) if set(got[r].tolist()) != set(want[r].tolist())]
            ok = not problems and not differ
            failures += not ok
            label = f"{'AOT' if aot else 'JIT'} engine, {'hint-free' if hint_free else 'hinted'}"
            print(f"{label}: {'exact, equal to torch.ops.gvr.topk_varlen' if ok else 'MISMATCH'}"
                  + ("" if ok else f" problems={problems[:3]} rows differing from the torch op={differ[:8]}"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
