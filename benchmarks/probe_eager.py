"""Developer probe: host cost of an eager call and eager-minus-graph time at 1 row (the eager-overhead target).

    python benchmarks/probe_eager.py [--out DIR]
Times ``gvr_topk.run_varlen`` and ``torch.ops.gvr.topk_varlen`` (1 x N, K=2048, hint-free, ``max_seq_len`` given):
host microseconds per call (median of back-to-back calls), and device-observed time of one call from an idle GPU
(eager) against a CUDA-graph replay of the same call, both with L2 flushed.
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

import gvr_topk


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    res = []
    for n, k in ((16387, 2048), (131075, 2048), (131075, 512)):
        logits = torch.randn(1, n, device=dev)
        kv = torch.tensor([n], dtype=torch.int32, device=dev)
        out = torch.empty(1, k, dtype=torch.int32, device=dev)
        calls = {"run_varlen": lambda: gvr_topk.run_varlen(logits, None, kv, out, max_seq_len=n),
                 "torch.ops": lambda: torch.ops.gvr.topk_varlen(logits, None, kv, out, None, 1, 1, n)}
        for name, fn in calls.items():
            fn()
            torch.cuda.synchronize()
            host = []
            for _ in range(args.reps):
                t0 = time.perf_counter_ns()
                fn()
                host.append((time.perf_counter_ns() - t0) / 1e3)
            torch.cuda.synchronize()
            eager = []
            for _ in range(args.reps):
                flush.zero_()
                torch.cuda.synchronize()
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                fn()
                b.record()
                b.synchronize()
                eager.append(a.elapsed_time(b) * 1e3)
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                fn()
            torch.cuda.current_stream().wait_stream(s)
            with torch.cuda.graph(g):
                fn()
            graph = []
            for _ in range(args.reps):
                flush.zero_()
                torch.cuda.synchronize()
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                g.replay()
                b.record()
                b.synchronize()
                graph.append(a.elapsed_time(b) * 1e3)
            r = dict(n=n, k=k, call=name, host_us=statistics.median(host), eager_us=statistics.median(eager),
                     graph_us=statistics.median(graph))
            r["eager_minus_graph_us"] = r["eager_us"] - r["graph_us"]
            res.append(r)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "probe_eager.json"), "w") as f:
            json.dump(res, f, indent=1)
    print(f"{'call':11s} {'n':>7s} {'K':>5s} {'host us':>8s} {'eager':>8s} {'graph':>8s} {'eager-graph':>12s}")
    for r in res:
        print(f"{r['call']:11s} {r['n']:7d} {r['k']:5d} {r['host_us']:8.1f} {r['eager_us']:8.1f} {r['graph_us']:8.1f} "
              f"{r['eager_minus_graph_us']:12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
