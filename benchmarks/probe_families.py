"""Developer probe: force each kernel family over a few shapes, check exactness, time graph replays (cold L2).

Smaller and faster than bench_gvr_topk.py; used while tuning (results go to benchmarks/NOTES.md).
    python benchmarks/probe_families.py [--out DIR] [--cells 512x16384x2048,...] [--families reg,stream]
"""

import argparse
import json
import os
import sys
import time

import torch

import gvr_topk
from gvr_topk import dispatch
from gvr_topk import tuning
from gvr_topk.bench import timing
from gvr_topk.testing import check_exact

_FLUSH = []


def cold_replay_us(fn, reps=20):
    """Median microseconds of a CUDA-graph replay of fn(), L2 flushed before each replay (the benchmark's timing)."""
    if not _FLUSH:
        _FLUSH.append(timing.L2Flush(torch.device("cuda")))
    graph, _ = timing.capture(fn)
    return timing.time_graph(graph, _FLUSH[0], reps).median_us


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cells", default=None, help="comma-separated ROWSxNxK cells (default: rows {1, 8, 64, 512} x "
                    "N {4111, 16387, 65536, 131075, 262143} x K {512, 2048}, K 2048 only with --quick)")
    ap.add_argument("--families", default=",".join(dispatch.FAMILIES), help="comma-separated families to force")
    args = ap.parse_args()
    torch.manual_seed(0)
    if args.cells:
        cells = [tuple(int(v) for v in c.split("x")) for c in args.cells.split(",")]
    else:
        cells = [(rows, n, k) for rows in (1, 8, 64, 512) for n in (4111, 16387, 65536, 131075, 262143)
                 for k in ((2048,) if args.quick else (512, 2048))]
    wanted = args.families.split(",")
    results = []
    shapes = {}
    for rows, n, k in cells:
        shapes.setdefault((rows, n), []).append(k)
    for (rows, n), ks in shapes.items():
        x = torch.randn(rows, n, device="cuda") - 2.0
        kv = torch.full((rows,), n, dtype=torch.int32, device="cuda")
        for k in ks:
            fams = [f for f in wanted if not (f == "reg" and n > tuning.REG_MAX_N)]
            fams = [f for f in fams if not (f == "split" and rows > dispatch.split_rows_max())]
            auto = dispatch.route(rows, n, n, k).family
            idx = torch.empty(rows, k, dtype=torch.int32, device="cuda")
            t_topk = cold_replay_us(lambda: torch.topk(x, k, dim=1, sorted=False))
            for fam in fams:
                idx.fill_(-7)
                t0 = time.time()
                gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, family=fam)
                torch.cuda.synchronize()
                first = time.time() - t0
                probs = check_exact(x, idx, kv_lens=kv, max_report=2) if rows * n <= 64 * 131075 else \
                    check_exact(x[:4], idx[:4], kv_lens=kv[:4], max_report=2)
                us = cold_replay_us(lambda: gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, family=fam))
                rec = dict(rows=rows, n=n, k=k, family=fam, auto=fam == auto, us=round(us, 2),
                           topk_us=round(t_topk, 2), exact=not probs, first_call_s=round(first, 2),
                           problems=probs[:2])
                results.append(rec)
                print(json.dumps(rec), flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "probe.json"), "w") as f:
            json.dump(results, f, indent=1)
    print("\nrows      n     k  family   us   topk_us  speedup exact")
    for r in results:
        print(f"{r['rows']:4d} {r['n']:7d} {r['k']:5d} {r['family']:6s}{'*' if r['auto'] else ' '} {r['us']:7.1f} "
              f"{r['topk_us']:7.1f} {r['topk_us'] / r['us']:6.2f}x {r['exact']}")
    bad = [r for r in results if not r["exact"]]
    print(f"{len(results) - len(bad)} exact, {len(bad)} not exact")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
