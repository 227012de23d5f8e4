"""Developer probe: latency of Triton block primitives on a register tile, one program, on the GPU.

Each kernel repeats one primitive REPS times on a tile of order keys (the data changes every repetition so nothing
is hoisted); the time per primitive is (t(REPS=33) - t(REPS=1)) / 32, from CUDA-graph replays. This is what decides
how a selection on a staged tile should be built (histogram vs reductions vs scans vs atomics).
    python benchmarks/probe_primitives.py [--out DIR]
"""

import argparse
import json
import os
import sys

import torch
import triton
import triton.language as tl

from gvr_topk.bench import timing


@triton.jit
def _combine2(a, b, c, d):
    return a + c, b + d


@triton.jit
def _combine4(a0, a1, a2, a3, b0, b1, b2, b3):
    return a0 + b0, a1 + b1, a2 + b2, a3 + b3


@triton.jit
def _prim_kernel(x_ptr, out_ptr, scratch_ptr, REPS: tl.constexpr, TILE: tl.constexpr, OP: tl.constexpr):
    i = tl.arange(0, TILE)
    keys = tl.load(x_ptr + i).to(tl.uint32, bitcast=True)
    acc = tl.zeros([], tl.int32)
    for r in range(REPS):
        k = keys ^ (acc & 1).to(tl.uint32)  # depends on the previous repetition: nothing can be hoisted
        if OP == 0:  # block sum
            acc += tl.sum((k > 0x80000000).to(tl.int32), 0)
        elif OP == 1:  # min + max as one tuple reduction
            a, b = tl.reduce((k, k), 0, _combine2)
            acc += (a ^ b).to(tl.int32)
        elif OP == 2:  # masked 256-bin histogram + crossing scan
            h = tl.histogram(((k >> 24) & 255).to(tl.int32), 256, mask=k > 5)
            acc += tl.sum(tl.cumsum(h, 0), 0)
        elif OP == 3:  # block cumsum
            acc += tl.sum(tl.where(i == TILE - 1, tl.cumsum((k > 0x80000000).to(tl.int32), 0), 0), 0)
        elif OP == 4:  # four counts in one tuple reduction
            c0, c1, c2, c3 = tl.reduce(((k > 0x40000000).to(tl.int32), (k > 0x80000000).to(tl.int32),
                                        (k > 0xA0000000).to(tl.int32), (k > 0xC0000000).to(tl.int32)), 0, _combine4)
            acc += c0 + c1 + c2 + c3
        elif OP == 5:  # warp-row 2-D: sum + cumsum along rows of 128
            k2 = tl.reshape(k, [TILE // 128, 128])
            s = (k2 > 0x80000000).to(tl.int32)
            acc += tl.sum(tl.sum(tl.cumsum(s, 1), 1) & 1, 0)
        elif OP == 6:  # histogram by global atomics (256 words of scratch), read back after a barrier
            tl.atomic_add(scratch_ptr + ((k >> 24) & 255).to(tl.int32), 1, mask=k > 5, sem="relaxed")
            tl.debug_barrier()
            h = tl.load(scratch_ptr + tl.arange(0, 256), cache_modifier=".cg")
            acc += tl.sum(h, 0)
        elif OP == 7:  # sort of the tile
            acc += tl.sum((tl.sort(k, 0) > 0x80000000).to(tl.int32), 0)
        elif OP == 8:  # bisection step shape: 8 sequential block sums
            for t in tl.static_range(8):
                acc += tl.sum((k > (0x10000000 * t)).to(tl.int32), 0)
    tl.store(out_ptr, acc)


OPS = {0: "sum", 1: "minmax", 2: "histogram256+scan", 3: "cumsum", 4: "4 counts tuple", 5: "2-D warp-row scan",
       6: "atomic histogram", 7: "sort", 8: "8 sums (per sum)"}


def time_us(fn, reps=20):
    """Median us of CUDA-graph replays of fn() (no L2 flush: the tile lives in registers)."""
    graph, _ = timing.capture(fn)
    return timing.time_graph(graph, lambda: None, reps).median_us


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    x = torch.randn(16384, device="cuda")
    out = torch.zeros(1, dtype=torch.int32, device="cuda")
    scratch = torch.zeros(256, dtype=torch.int32, device="cuda")
    res = []
    for tile in (512, 2048, 8192):
        for warps in (4, 8, 16):
            for op, name in OPS.items():
                if op == 7 and tile > 2048:
                    continue
                try:
                    t1 = time_us(lambda: _prim_kernel[(1,)](x, out, scratch, REPS=1, TILE=tile, OP=op, num_warps=warps))
                    t33 = time_us(lambda: _prim_kernel[(1,)](x, out, scratch, REPS=33, TILE=tile, OP=op,
                                                             num_warps=warps))
                    per = (t33 - t1) / 32 / (8 if op == 8 else 1)
                    res.append({"tile": tile, "warps": warps, "op": name, "us": round(per, 3)})
                except Exception as e:
                    res.append({"tile": tile, "warps": warps, "op": name, "error": f"{type(e).__name__}: {e}"[:200]})
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "probe_primitives.json"), "w") as f:
            json.dump(res, f, indent=1)
    print(f"{'op':22s} " + " ".join(f"{t}/{w:<2d}" .rjust(9) for t in (512, 2048, 8192) for w in (4, 8, 16)))
    for name in OPS.values():
        cells = []
        for t in (512, 2048, 8192):
            for w in (4, 8, 16):
                r = next((r for r in res if r["tile"] == t and r["warps"] == w and r["op"] == name), None)
                cells.append("-" if r is None else ("ERR" if "error" in r else f"{r['us']:.2f}"))
        print(f"{name:22s} " + " ".join(c.rjust(9) for c in cells))
    for r in res:
        if "error" in r:
            print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
