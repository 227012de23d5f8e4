"""Host simulation: how many scores survive the sample threshold, per tuning setting, on the benchmark's decode rows.

No GPU needed. For each cell (rows x N x K of the benchmark's grid data) and each arm (tuning settings, written as
in ``probe_sample.py``), every row's threshold is computed exactly as the kernels compute it
(``gvr_topk.reference.sample_threshold``; a test checks it against the streaming family's own thresholds) and its
survivors are counted. Printed per arm and cell: the survivor count over the aim (min, p10, median, p90, max) and
how many rows fall under K (the retry ladder), within half the capacity (half-tile select), within the capacity,
or over it (the whole-row exact path). Used to choose ``SAMPLE_GROUP``, ``AIM_MARGIN`` and the capacity before
measuring them (benchmarks/NOTES.md, entry 8).

    python benchmarks/sim_survivors.py [--arms g8/m2048,g1/m1024] [--cells 64x131075x2048,64x262143x512]
                                       [--levels 8x2,7x2,6x3] [--stop 0,8] [--low 0,128]

``--levels BITSxLEVELS,...`` repeats every arm per histogram shape of the sample threshold (``tuning.SAMPLE_BIN_BITS``
bits per level, ``tuning.SAMPLE_LEVELS`` levels; compiled into the kernels, so not a ``probe_sample.py`` arm), and
``--stop D,...`` per early stop of its levels (``tuning.SAMPLE_STOP_DIV``) and ``--low G,...`` per start of its
first window (``tuning.SAMPLE_LOW_GROUPS``), both compiled in too, and ``--maxima G,...`` per group maxima its levels
run over in launches of any row count (``tuning.SAMPLE_MAXIMA``; default: as ``Plan.maxima`` plans each cell);
each line also gives the share of rows whose threshold took fewer levels than the shape has ("fewer levels":
stopped early, or a window that closed).
"""

import argparse
import sys

import torch

import gvr_topk
from gvr_topk import reference
from gvr_topk import tuning
from gvr_topk.bench.cases import Case
from gvr_topk.bench.data import make_inputs
from probe_sample import parse_arm
from probe_sample import tuned


def simulate(logits: torch.Tensor, k: int) -> dict:
    """Survivor statistics of one cell's rows (full length) under the current tuning."""
    rows, n = logits.shape
    plan = gvr_topk.route(rows, n, n, k)
    if plan.family == "reg":
        return dict(plan=plan, note="register family: the row is held in registers, no sample")
    if n <= plan.cap:
        return dict(plan=plan, note="rows fit the staging slot: everything is staged, no sample")
    keys = reference.order_keys(logits)
    rank = reference.sample_rank(n, plan.aim, plan.sample)
    ratios, classes, early = [], dict(under_k=0, half=0, full=0, over=0), 0
    for r in range(rows):
        thr, levels = reference.sample_threshold_levels(keys[r], rank, plan.sample, tuning.SAMPLE_GROUP, plan.maxima)
        early += levels < tuning.SAMPLE_LEVELS
        c = int((keys[r] >= thr).sum())
        ratios.append(c / plan.aim)
        cls = "under_k" if c < k else "half" if c <= plan.cap // 2 else "full" if c <= plan.cap else "over"
        classes[cls] += 1
    ratios.sort()
    q = [ratios[min(len(ratios) - 1, int(p * len(ratios)))] for p in (0.1, 0.5, 0.9)]
    return dict(plan=plan, rank=rank, min=ratios[0], p10=q[0], p50=q[1], p90=q[2], max=ratios[-1],
                early=early / rows, **classes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arms", default="g8/m2048,g1/m1024", help="comma-separated tuning arms (probe_sample.py syntax)")
    ap.add_argument("--cells", default="64x16387x2048,64x131075x512,64x131075x2048,64x262143x2048",
                    help="comma-separated ROWSxNxK cells of the benchmark's grid data")
    ap.add_argument("--levels", default=f"{tuning.SAMPLE_BIN_BITS}x{tuning.SAMPLE_LEVELS}",
                    help="comma-separated BITSxLEVELS shapes of the sample threshold's histograms")
    ap.add_argument("--stop", default=str(tuning.SAMPLE_STOP_DIV),
                    help="comma-separated SAMPLE_STOP_DIV values (0: every level runs)")
    ap.add_argument("--data", default="decode",
                    help="comma-separated: decode rows (default) and / or the benchmark's adversarial kinds")
    ap.add_argument("--low", default=str(tuning.SAMPLE_LOW_GROUPS),
                    help="comma-separated SAMPLE_LOW_GROUPS values (0: the first window starts at the minimum)")
    ap.add_argument("--maxima", default="plan",
                    help="comma-separated SAMPLE_MAXIMA values for launches of any row count (0: the levels over "
                         "every sampled key); 'plan' (default): as the dispatcher plans each cell")
    args = ap.parse_args()
    # --maxima: "plan" keeps the dispatcher's choice; a number applies those maxima to launches of any row count.
    maxima = [{} if mx == "plan" else dict(SAMPLE_MAXIMA=int(mx), SAMPLE_MAXIMA_MAX_ROWS=1 << 30)
              for mx in args.maxima.split(",")]
    shapes = [tuple(int(v) for v in sh.split("x")) + (int(d), int(g), mx)
              for sh in args.levels.split(",") for d in args.stop.split(",") for g in args.low.split(",")
              for mx in maxima]
    for cell, data in [(c, d) for c in args.cells.split(",") for d in args.data.split(",")]:
        rows, n, k = (int(v) for v in cell.split("x"))
        suite = "grid" if data == "decode" else "adversarial"
        logits = make_inputs(Case(suite, rows, n, k, data=data), k_max=2048, device="cpu").logits
        for spec, (bits, levels, stop, low, mx) in [(a, sh) for a in args.arms.split(",") for sh in shapes]:
            with tuned(dict(parse_arm(spec), SAMPLE_BIN_BITS=bits, SAMPLE_LEVELS=levels, SAMPLE_STOP_DIV=stop,
                            SAMPLE_LOW_GROUPS=low, **mx)):
                s = simulate(logits, k)
            p = s["plan"]
            head = (f"{spec:>18} {bits}x{levels} stop {stop} low {low} maxima {p.maxima} {rows}x{n} K={k} {data} "
                    f"{p.family} cap {p.cap} aim {p.aim} sample {p.sample}")
            if "note" in s:
                print(f"{head}: {s['note']}")
                continue
            print(f"{head} rank {s['rank']}: count/aim {s['min']:.2f} {s['p10']:.2f} {s['p50']:.2f} {s['p90']:.2f} "
                  f"{s['max']:.2f}; rows under K {s['under_k']}, half tile {s['half']}, full tile {s['full']}, "
                  f"over capacity {s['over']}; fewer levels {s['early']:.0%}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
