"""``gvr-topk demo``: a few decode steps of a small synthetic indexer through the op, checked for exactness.

Uses the GPU when there is one, else the CPU (the Triton interpreter when ``TRITON_INTERPRET=1``, otherwise the
torch reference). With a model config (default: the package's default model) it takes K, next_n and the
compression ratio from it.
"""

import time


def add_arguments(parser) -> None:
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda if available)")
    parser.add_argument("--config", default=None, help="model YAML (default: the package's default model config)")
    parser.add_argument("--batch", type=int, default=2, help="requests per step")
    parser.add_argument("--context", type=int, default=None, help="KV length of the longest request (tokens)")
    parser.add_argument("--steps", type=int, default=3, help="decode steps")


def _model_settings(path):
    """(name, K, next_n, compress_ratio) from a model config; the V3.2 defaults when configs are unavailable."""
    try:
        from .policy import default_config_path
        from .policy import load_config
    except ImportError:
        return "DeepSeek-V3.2 (built-in defaults)", 2048, 2, 1
    cfg = load_config(path or default_config_path())
    return cfg.model.name, cfg.k, cfg.next_n, cfg.compress_ratio(cfg.indexer_layers[0])


def main(args) -> int:
    import torch

    import gvr_topk
    from gvr_topk.testing import check_exact

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    name, k, next_n, cr = _model_settings(args.config)
    context = args.context or (131072 if device == "cuda" else 4 * k * cr + 4000)
    g = torch.Generator().manual_seed(0)
    batch = args.batch
    dim = 32
    keys = torch.randn(context // cr + 8, dim, generator=g)
    q = torch.randn(batch * next_n, dim, generator=g)
    kv = torch.tensor([context - 997 * i for i in range(batch)], dtype=torch.int32)
    print(f"model {name}: K={k} next_n={next_n} compress_ratio={cr}; device={device}, batch={batch}, "
          f"context={context}, interpreter={gvr_topk.kernels_interpreted()}")
    prev = None
    for step in range(args.steps):
        q = q + 0.2 * torch.randn(q.shape, generator=g)  # queries drift between steps
        logits = torch.relu(q @ keys.t()).to(device)
        kv_dev = (kv + step).to(device)
        t0 = time.perf_counter()
        idx, _ = gvr_topk.topk(logits, k, kv_lens=kv_dev, pre_idx=prev, next_n=next_n, compress_ratio=cr)
        if device == "cuda":
            torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) * 1e3
        problems = check_exact(logits, idx, kv_lens=kv_dev, next_n=next_n, compress_ratio=cr)
        mode = "hint-free" if prev is None else "hinted"
        print(f"step {step}: {mode:9s} {tuple(idx.shape)} in {dt:8.2f} ms  {'exact' if not problems else problems}")
        if problems:
            return 1
        prev = idx[next_n - 1::next_n].contiguous()  # the last MTP row of each request hints the next step
    print("all steps exact")
    return 0
