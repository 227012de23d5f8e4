"""Developer probe: host cost of an eager call and eager-minus-graph time at 1 row (the eager-overhead target).

    python benchmarks/probe_eager.py [--out DIR]
Times ``gvr_topk.run_varlen`` and ``torch.ops.gvr.topk_varlen`` (1 x N, K=2048, hint-free, ``max_seq_len`` given):
host microseconds per call and device-observed time of one call from an idle GPU (eager), against a CUDA-graph
replay of the same call, both with L2 flushed (``gvr_topk.bench.timing``, as the benchmark's eager arm); each call
through the regular launch path and with direct launches (``gvr_topk/launch/direct.py``), in one process.
"""

import argparse
import json
import os
import sys

import torch

import gvr_topk
from gvr_topk.bench import timing
from gvr_topk.launch import direct


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = timing.L2Flush(dev)
    res = []
    for n, k in ((16387, 2048), (131075, 2048), (131075, 512)):
        logits = torch.randn(1, n, device=dev)
        kv = torch.tensor([n], dtype=torch.int32, device=dev)
        out = torch.empty(1, k, dtype=torch.int32, device=dev)
        calls = {"run_varlen": lambda: gvr_topk.run_varlen(logits, None, kv, out, max_seq_len=n),
                 "torch.ops": lambda: torch.ops.gvr.topk_varlen(logits, None, kv, out, None, 1, 1, n)}
        for name, fn in calls.items():
            for on in (False, True):  # the regular launch path, then direct launches (launch/direct.py)
                direct.ENABLED = on
                gvr_topk.clear_launch_cache()
                fn()
                fn()  # the second hot call builds the direct launch
                eager = timing.time_eager(fn, flush, args.reps)
                graph, _ = timing.capture(fn)
                replay = timing.time_graph(graph, flush, args.reps)
                r = dict(n=n, k=k, call=name + ("/direct" if on else ""), host_us=eager.host_us,
                         eager_us=eager.median_us, graph_us=replay.median_us)
                r["eager_minus_graph_us"] = r["eager_us"] - r["graph_us"]
                res.append(r)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "probe_eager.json"), "w") as f:
            json.dump(res, f, indent=1)
    print(f"{'call':18s} {'n':>7s} {'K':>5s} {'host us':>8s} {'eager':>8s} {'graph':>8s} {'eager-graph':>12s}")
    for r in res:
        print(f"{r['call']:18s} {r['n']:7d} {r['k']:5d} {r['host_us']:8.1f} {r['eager_us']:8.1f} {r['graph_us']:8.1f} "
              f"{r['eager_minus_graph_us']:12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
