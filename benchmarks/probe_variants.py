"""Developer probe, no GPU: the Triton kernel variants a deployment's warm-up compiles, and what compiling them costs.

    python benchmarks/probe_variants.py [--config deepseek-v3.2] [--sizes pow2|vllm|1,2,4] [--max-seq-len 131072]
                                        [--dtype bfloat16] [--with-values] [--out DIR]
    python benchmarks/probe_variants.py ... --compile [--jobs 2]     (under the Triton the GPU uses, e.g. 3.6)

Runs ``gvr_topk.warmup_for_config`` on the CPU with every kernel launch recorded instead of run (the Triton
interpreter's launch entry is replaced, so nothing executes), and counts the distinct compiled variants per kernel:
two launches share a variant when Triton would reuse one compiled kernel for both (``launch.cache.static_key``:
constexpr values, launch options, pointer dtypes, and each other int's class and divisibility by 16). What a GPU
launches differently from the interpreter is mapped back: the split family's cooperative form runs as three phased
launches under the interpreter and as one launch on the GPU, so ``PHASE`` is left out of the key; the streaming
family's ``PDL`` is the same constant in every variant either way.

``--sizes``: ``pow2`` = 1, 2, 4, ..., 512 requests; ``vllm`` = 1, 2, 4 and every multiple of 8 up to 512 (the
batch sizes a vLLM-style engine captures CUDA graphs for); or a comma list.

``--compile`` then compiles every variant for sm_90 with ``triton.compile`` in worker processes (no GPU needed;
pointer types from the recorded dtypes, ints as i32) and prints the compile time per kernel and in all: what a
cold Triton cache costs the deployment's first start (later starts load the compiled kernels from Triton's disk
cache). Writes ``probe_variants.json`` to ``--out``.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import time

SIZES = {"pow2": [1 << i for i in range(10)], "vllm": [1, 2, 4] + list(range(8, 513, 8))}
_TORCH_TO_TRITON = {"torch.float32": "*fp32", "torch.bfloat16": "*bf16", "torch.float16": "*fp16",
                    "torch.int32": "*i32", "torch.uint8": "*u8", "torch.int64": "*i64"}
#: Launch keywords that are options of the launch, not kernel arguments.
OPTIONS = ("num_warps", "maxnreg", "launch_pdl", "launch_cooperative_grid")


def record_variants(config: str, sizes, max_seq_len: int, dtype: str, with_values: bool) -> list:
    """Distinct variants the warm-up launches: one dict per variant (kernel module and name, constexprs, launch
    options, pointer dtypes, ints), in first-launch order. Needs ``TRITON_INTERPRET=1`` before triton's import."""
    import torch
    import triton.runtime.interpreter as interp

    import gvr_topk
    from gvr_topk.launch import cache

    seen, variants = set(), []

    def record(self, *args, grid, warmup, **kwargs):
        if args:
            raise RuntimeError("probe_variants: a positional kernel launch (the library launches by keyword)")
        fn = self.fn
        const = cache.constexpr_names(self)
        tensors = {k: str(v.dtype) for k, v in kwargs.items() if isinstance(v, torch.Tensor)}
        scalars = {k: v for k, v in kwargs.items() if not isinstance(v, torch.Tensor) and k != "PHASE"}
        key = (fn.__module__, fn.__name__, cache.static_key(self, "cuda:0", scalars, tensors))
        if key not in seen:
            seen.add(key)
            # The GPU's one cooperative launch is PHASE 0.
            phase = {"PHASE": 0} if "PHASE" in kwargs else {}
            variants.append(dict(module=fn.__module__, kernel=fn.__name__, tensors=tensors,
                                 constexprs={k: v for k, v in scalars.items() if k in const} | phase,
                                 ints=sorted(k for k, v in scalars.items() if k not in const and k not in OPTIONS),
                                 options={k: v for k, v in scalars.items() if k in OPTIONS}))
        return None

    interp.InterpretedFunction.run = record
    gvr_topk.warmup_for_config(config, batch_sizes=sizes, max_seq_len=max_seq_len, with_values=[with_values],
                               dtype=getattr(torch, dtype), device="cpu")
    return variants


def _compile_one(v: dict) -> float:
    """Seconds to compile one recorded variant for sm_90 (in this process, a fresh Triton cache)."""
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    kernel = getattr(importlib.import_module(v["module"]), v["kernel"])
    sig = {}
    for name in kernel.arg_names:
        if name in v["constexprs"]:
            sig[name] = "constexpr"
        elif name in v["tensors"]:
            sig[name] = _TORCH_TO_TRITON[v["tensors"][name]]
        else:
            sig[name] = "i32"
    opts = {k: v["options"][k] for k in ("num_warps", "maxnreg") if v["options"].get(k)}
    t0 = time.perf_counter()
    triton.compile(ASTSource(fn=kernel, signature=sig, constexprs=v["constexprs"]),
                   target=GPUTarget("cuda", 90, 32), options=opts)
    return time.perf_counter() - t0


def _worker(path: str) -> int:
    with open(path) as f:
        batch = json.load(f)
    for v in batch:
        v["compile_s"] = _compile_one(v)
    with open(path, "w") as f:
        json.dump(batch, f)
    return 0


def compile_all(variants: list, jobs: int) -> float:
    """Compile every variant in ``jobs`` worker processes (each with its own empty Triton cache, without the
    interpreter); sets ``compile_s`` on each and returns the wall seconds."""
    import tempfile

    tmp = tempfile.mkdtemp(prefix="probe_variants_")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    procs, paths = [], []
    t0 = time.perf_counter()
    for j in range(jobs):
        path = os.path.join(tmp, f"batch{j}.json")
        with open(path, "w") as f:
            json.dump(variants[j::jobs], f)
        env_j = dict(env, TRITON_CACHE_DIR=os.path.join(tmp, f"cache{j}"))
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker", path], env=env_j))
        paths.append(path)
    for p in procs:
        if p.wait() != 0:
            raise SystemExit("probe_variants: a compile worker failed")
    wall = time.perf_counter() - t0
    for j, path in enumerate(paths):
        with open(path) as f:
            for v, done in zip(variants[j::jobs], json.load(f)):
                v["compile_s"] = done["compile_s"]
    return wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="deepseek-v3.2")
    ap.add_argument("--sizes", default="vllm")
    ap.add_argument("--max-seq-len", type=int, default=131072)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--with-values", action="store_true")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return _worker(args.worker)
    if os.environ.get("TRITON_INTERPRET") != "1":
        # The recording replaces the interpreter's launch entry: re-run this script under the interpreter.
        env = dict(os.environ, TRITON_INTERPRET="1")
        return subprocess.call([sys.executable, __file__, *(sys.argv[1:] if argv is None else argv)], env=env)
    sizes = SIZES[args.sizes] if args.sizes in SIZES else [int(s) for s in args.sizes.split(",")]
    variants = record_variants(args.config, sizes, args.max_seq_len, args.dtype, args.with_values)
    wall = compile_all(variants, args.jobs) if args.compile else None
    per = collections.OrderedDict()
    for v in variants:
        c, s = per.get(v["kernel"], (0, 0.0))
        per[v["kernel"]] = (c + 1, s + v.get("compile_s", 0.0))
    import triton

    print(f"{args.config}, {len(sizes)} batch sizes ({args.sizes}), max_seq_len {args.max_seq_len}, {args.dtype}, "
          f"values {'on' if args.with_values else 'off'}, Triton {triton.__version__}")
    print(f"{'kernel':28s} {'variants':>8s}" + (f" {'compile s (sum)':>16s}" if args.compile else ""))
    for name, (c, s) in per.items():
        print(f"{name:28s} {c:8d}" + (f" {s:16.1f}" if args.compile else ""))
    total = sum(c for c, _ in per.values())
    line = f"{'total':28s} {total:8d}"
    if args.compile:
        line += f" {sum(s for _, s in per.values()):16.1f}   wall {wall:.1f} s on {args.jobs} worker(s)"
    print(line)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "probe_variants.json"), "w") as f:
            json.dump(dict(config=args.config, sizes=sizes, max_seq_len=args.max_seq_len, dtype=args.dtype,
                           with_values=args.with_values, triton=triton.__version__, wall_s=wall,
                           variants=variants), f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
