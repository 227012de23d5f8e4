"""Host replay, no GPU: the crossing bin the split family's cooperative form leaves to its finisher, per row
histogram size, on the benchmark's decode rows.

For each cell (rows x N x K of the benchmark's grid data) and each number of histogram bits, every row's crossing
bin is computed as the kernel computes it (``gvr_topk.reference.coop_crossing_bin``: the sample threshold and
window, the staged keys, the histogram). Printed per cell and bits: the crossing bin's size (median, p90, max),
how many rows need the whole bin (no finisher select), and how many bins exceed 64 candidates (the finisher's
all-pairs rank bound, ``tuning.SPLIT_COOP_RANK_MAX``) and CROSS_CAP (the whole select on one program). Used to
choose ``tuning.SPLIT_COOP_BIN_BITS`` (benchmarks/NOTES.md, entry 27).

    python benchmarks/sim_crossing_bin.py [--cells 64x16387x512,64x131075x2048] [--bits 7,10]
"""

import argparse
import sys

import torch

from gvr_topk import dispatch
from gvr_topk import reference
from gvr_topk import tuning
from gvr_topk.bench.cases import Case
from gvr_topk.bench.data import make_inputs


def replay(logits: torch.Tensor, k: int, bits: int) -> dict:
    """Crossing-bin statistics of one cell's rows (full length) at ``bits`` histogram bits."""
    rows, n = logits.shape
    plan = dispatch.plan_for("split", 1, n, n, k)  # the per-row parameters of a split launch at this length
    keys = reference.order_keys(logits).to(torch.int64)
    got = [reference.coop_crossing_bin(keys[r], k, plan, bits) for r in range(rows)]
    sizes = sorted(size for size, _ in got)
    return dict(median=sizes[rows // 2], p90=sizes[min(rows - 1, int(0.9 * rows))], max=sizes[-1],
                whole=sum(size == need for size, need in got), over_64=sum(s > 64 for s in sizes),
                over_cap=sum(s > tuning.CROSS_CAP for s in sizes), rows=rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default="64x16387x512,64x16387x2048,64x131075x512,64x131075x2048",
                    help="comma-separated ROWSxNxK cells of the benchmark's grid data")
    ap.add_argument("--bits", default=f"{tuning.SELECT_BIN_BITS},{tuning.SPLIT_COOP_BIN_BITS}",
                    help="comma-separated histogram bits to compare")
    args = ap.parse_args()
    print("cell                 bits  median   p90   max  whole  >64  >CROSS_CAP")
    for cell in args.cells.split(","):
        rows, n, k = (int(v) for v in cell.split("x"))
        logits = make_inputs(Case("grid", rows, n, k), k, device="cpu").logits[:, :n]
        for bits in (int(b) for b in args.bits.split(",")):
            s = replay(logits, k, bits)
            print(f"{cell:20s} {bits:4d} {s['median']:7d} {s['p90']:5d} {s['max']:5d} {s['whole']:3d}/{s['rows']}"
                  f" {s['over_64']:4d} {s['over_cap']:6d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
