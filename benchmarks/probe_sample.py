"""Developer probe: the sample's group width and the survivor aim, A/B on the benchmark's decode data.

Arms (each the public ``run_varlen`` with its own tuning, hint-free, ``max_seq_len`` given), on the same inputs in
one process, each captured into its own CUDA graph and replayed with the L2 flushed (the benchmark's timing):

* ``g8/m2048``: sample groups of 8 adjacent scores, aim K + 2048 (the kernels of 2026-11-30, session 2),
* ``g1/m2048``: single-score groups, same aim (what the group width alone changes),
* ``g1/m1024``: single-score groups, aim K + 1024 (tuning.py since session 3),
* ``g2/m1024``: groups of 2, aim K + 1024,

plus ``torch.topk`` over the same rows. Every arm's output is checked exact after its timed replays. Prints a table
last and writes ``probe_sample.json`` to ``--out``.

    python benchmarks/probe_sample.py [--out DIR] [--reps 15]
"""

import argparse
import contextlib
import json
import os
import sys

import torch

import gvr_topk
from gvr_topk import tuning
from gvr_topk.bench import timing
from gvr_topk.bench.cases import Case
from gvr_topk.bench.data import make_inputs
from gvr_topk.bench.exact import check_exact_fast

ARMS = {"g8/m2048": (8, 2048), "g1/m2048": (1, 2048), "g1/m1024": (1, 1024), "g2/m1024": (2, 1024)}
CELLS = [(rows, n, k) for n in (16387, 131075, 262143) for rows in (1, 8, 64, 512) for k in (512, 2048)
         if not (n == 262143 and rows in (8, 512))]


@contextlib.contextmanager
def tuned(group: int, margin: int):
    """Run with another sample group / aim margin: prepared launches are dropped so plans are rebuilt."""
    saved = tuning.SAMPLE_GROUP, tuning.AIM_MARGIN
    tuning.SAMPLE_GROUP, tuning.AIM_MARGIN = group, margin
    gvr_topk.clear_launch_cache()
    try:
        yield
    finally:
        tuning.SAMPLE_GROUP, tuning.AIM_MARGIN = saved
        gvr_topk.clear_launch_cache()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = timing.L2Flush(dev)
    results = []
    for rows, n, k in CELLS:
        inp = make_inputs(Case("grid", rows, n, k), k_max=2048, device=dev)
        x, kv = inp.logits, inp.kv_lens
        rec = dict(rows=rows, n=n, k=k, family=gvr_topk.route(rows, n, n, k).family, us={}, exact={})
        torch.topk(x, k, dim=1, sorted=False)
        g, _ = timing.capture(lambda: torch.topk(x, k, dim=1, sorted=False))
        rec["us"]["torch"] = round(timing.time_graph(g, flush, args.reps).median_us, 2)
        for arm, (group, margin) in ARMS.items():
            idx = torch.empty(rows, k, dtype=torch.int32, device=dev)
            with tuned(group, margin):
                call = lambda: gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n)  # noqa: E731
                call()
                g, _ = timing.capture(call)
            rec["us"][arm] = round(timing.time_graph(g, flush, args.reps).median_us, 2)
            idx.fill_(-7)
            g.replay()
            torch.cuda.synchronize()
            rec["exact"][arm] = not check_exact_fast(x, idx, kv_lens=kv)
            del g
        results.append(rec)
        print(json.dumps(rec), flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "probe_sample.json"), "w") as fh:
            json.dump(results, fh, indent=1)
    names = list(ARMS)
    print(f"\n{'rows':>4} {'n':>7} {'k':>5} {'family':6} {'torch':>7} " + " ".join(f"{a:>9}" for a in names))
    for r in results:
        print(f"{r['rows']:4d} {r['n']:7d} {r['k']:5d} {r['family']:6} {r['us']['torch']:7.1f} "
              + " ".join(f"{r['us'][a]:8.1f}{'' if r['exact'][a] else '!'}" for a in names))
    for a in names:
        gm = 1.0
        for r in results:
            gm *= r["us"]["torch"] / r["us"][a]
        print(f"{a}: geomean speed-up over torch.topk {gm ** (1 / len(results)):.2f}x")
    bad = [(r["rows"], r["n"], r["k"], a) for r in results for a in names if not r["exact"][a]]
    print(f"{len(results) * len(names) - len(bad)} arm outputs exact, {len(bad)} not exact {bad[:5]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
