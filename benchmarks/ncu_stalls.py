"""Developer tool (no GPU): where a kernel's warps stall, from Nsight Compute's per-instruction source export.

Reads the CSV that ``ncu --import REPORT --page source --csv --print-source sass`` writes for a report taken with
``--section WarpStateStats --section SourceCounters`` and prints the stall reasons summed over the kernel (share of
all warp stall samples), then the instructions with the most samples, each with its executed count and the
reasons that make up most of its samples. Used for NOTES entry 20 (``results/h200/2026-12-01-session13/call8``).

    python benchmarks/ncu_stalls.py STAGE_SASS.csv [--top 25]
"""

import argparse
import collections
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def _num(v: str) -> float:
    try:
        return float(v.replace(",", ""))
    except ValueError:
        return 0.0


def summarize(path: str, top: int = 25) -> dict:
    """Stall reasons and hottest instructions of one kernel's source CSV.

    Returns
    -------
    dict
        ``samples`` (total), ``instructions`` (static count), ``executed_once`` (instructions executed at least
        once), ``reasons`` ([(reason, samples)], most first), ``hottest`` ([(samples, address, sass, executed,
        {reason: samples})], most first, ``top`` of them).
    """
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    # The first row names the kernel; the second holds the column names.
    header = next(i for i, r in enumerate(rows) if SAMPLES in r)
    col = {h: i for i, h in enumerate(rows[header])}
    reasons = [h for h in rows[header] if h.startswith("stall_") and "Not Issued" not in h]
    data = [r for r in rows[header + 1:] if len(r) == len(rows[header])]
    total = collections.Counter()
    hottest = []
    for r in data:
        s = _num(r[col[SAMPLES]])
        by_reason = {h[len("stall_"):]: _num(r[col[h]]) for h in reasons}
        total.update({k: v for k, v in by_reason.items()})
        main = {k: int(v) for k, v in by_reason.items() if v > 0.15 * max(s, 1.0)}
        hottest.append((s, r[col["Address"]], r[col["Source"]].strip(), _num(r[col[EXECUTED]]), main))
    hottest.sort(key=lambda h: h[0], reverse=True)
    return dict(samples=sum(h[0] for h in hottest), instructions=len(data),
                executed_once=sum(1 for h in hottest if h[3] > 0), reasons=total.most_common(),
                hottest=hottest[:top])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    s = summarize(args.csv, args.top)
    total = max(s["samples"], 1.0)
    print(f"{s['samples']:.0f} samples over {s['instructions']} instructions ({s['executed_once']} executed)")
    for reason, v in s["reasons"][:10]:
        print(f"  {reason:20s} {v:8.0f} {100 * v / total:5.1f}%")
    for samples, addr, sass, executed, main_reasons in s["hottest"]:
        print(f"  {100 * samples / total:5.1f}% {addr[-6:]} {sass[:60]:60s} executed {executed:10.0f} {main_reasons}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
