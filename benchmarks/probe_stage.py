"""Developer probe: the staging pass alone, in variants, on the same decode rows and thresholds (NOTES entry 14).

    python benchmarks/probe_stage.py [OUT_DIR]

One kernel, grid (SPLIT, rows), streams each row's share against a per-row threshold (the order key of the row's
3072nd largest score, as the sample aims) and stages the survivors, as ``_gvr_stage_kernel`` does; every arm runs on
the same inputs in one process, captured in a CUDA graph and replayed 20 times with the L2 flushed (median). Each
arm's survivor counts are checked against a host count, and for the 2-D arms the staged columns of the first and last
row against the exact survivor set. Variants (``V``):

* 0: the 1-D tile of order keys that staging used before entry 14 (one lane-wide scan per register of a thread);
* 1: the package's ``_stage_share`` (2-D tile, one float compare per score, a running sum per thread);
* 2: variant 1 with the next tile's load issued before this tile's atomic (software-pipelined);
* 3: variant 1 with (column, raw bits) packed into one 8-byte store per survivor.

An arm also sets warps, tile, the split multiplier and a register cap (``maxnreg``). Prints a table last; writes
``stage_probe.json`` to OUT_DIR when given.
"""
import json
import os
import sys

import torch
import triton
import triton.language as tl

from gvr_topk import reference
from gvr_topk.bench import timing
from gvr_topk.bench.cases import Case
from gvr_topk.bench.data import make_inputs
from gvr_topk.kernels._common import _key_floor
from gvr_topk.kernels._common import _order_key
from gvr_topk.kernels._common import _share_bounds
from gvr_topk.kernels._common import _stage_share


@triton.jit
def _old_share(row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr, TILE: tl.constexpr):
    """Variant 0: staging before NOTES entry 14 (1-D tile, order keys, positions by a lane-wide scan)."""
    offs = tl.arange(0, TILE)
    for s in range(start, end, TILE):
        cols = s + offs
        live = cols < end
        keys = _order_key(tl.load(row_ptr + cols, mask=live, other=0.0).to(tl.float32))
        surv = live & (keys >= thr)
        c = tl.sum(surv.to(tl.int32), 0)
        if c > 0:
            base = tl.atomic_add(count_ptr, c, sem="relaxed")
            pos = base + tl.cumsum(surv.to(tl.int32), 0) - 1
            keep = surv & (pos < CAP)
            tl.store(slot_keys + pos, keys.to(tl.int32, bitcast=True), mask=keep)
            tl.store(slot_cols + pos, cols, mask=keep)


@triton.jit
def _tile_v(row_ptr, cols, end, f, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr, MASKED: tl.constexpr,
            PACK: tl.constexpr):
    """Variants 2 and 3's tile: a frozen copy of ``_common._stage_tile`` with the packed store as an option. A copy on
    purpose: factoring the package's tile to share it changed the split kernel's code on Triton 3.6, and the probe's
    variants should not move when the package does."""
    if MASKED:
        live = cols < end
        x = tl.load(row_ptr + cols, mask=live, other=0.0).to(tl.float32)
        flag = tl.where(live & ~(x < f), 1.0, 0.0).to(tl.int32)
    else:
        x = tl.load(row_ptr + cols).to(tl.float32)
        flag = tl.where(x < f, 0.0, 1.0).to(tl.int32)
    per_lane = tl.sum(flag, 0)
    base = tl.atomic_add(count_ptr, tl.sum(per_lane, 0), sem="relaxed")
    pos = base + (tl.cumsum(per_lane, 0) - per_lane)[None, :] + tl.cumsum(flag, 0) - 1
    TILE: tl.constexpr = cols.shape[0] * cols.shape[1]
    pos = tl.reshape(tl.minimum(pos, CAP - 1), [TILE])
    keep = tl.reshape(flag, [TILE]) != 0
    if PACK:
        bits = tl.reshape(x, [TILE]).to(tl.uint32, bitcast=True).to(tl.int64)
        packed = (tl.reshape(cols, [TILE]).to(tl.int64) << 32) | bits
        tl.store(slot_keys.to(tl.pointer_type(tl.int64)) + pos, packed, mask=keep)
    else:
        tl.store(slot_keys + pos, tl.reshape(x, [TILE]).to(tl.int32, bitcast=True), mask=keep)
        tl.store(slot_cols + pos, tl.reshape(cols, [TILE]), mask=keep)


@triton.jit
def _share_pf(row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr, TILE: tl.constexpr,
              LANES: tl.constexpr):
    """software-pipelined: the next tile's load is issued before this tile's atomic."""
    f = _key_floor(thr)
    offs = tl.arange(0, TILE // LANES)[:, None] * LANES + tl.arange(0, LANES)[None, :]
    full = start + (end - start) // TILE * TILE
    nxt = tl.load(row_ptr + start + offs, mask=(start + offs) < full, other=0.0).to(tl.float32)
    for s in range(start, full, TILE):
        x = nxt
        nxt = tl.load(row_ptr + s + TILE + offs, mask=(s + TILE + offs) < full, other=0.0).to(tl.float32)
        flag = tl.where(x < f, 0.0, 1.0).to(tl.int32)
        per_lane = tl.sum(flag, 0)
        base = tl.atomic_add(count_ptr, tl.sum(per_lane, 0), sem="relaxed")
        pos = base + (tl.cumsum(per_lane, 0) - per_lane)[None, :] + tl.cumsum(flag, 0) - 1
        pos = tl.reshape(tl.minimum(pos, CAP - 1), [TILE])
        keep = tl.reshape(flag, [TILE]) != 0
        tl.store(slot_keys + pos, tl.reshape(x, [TILE]).to(tl.int32, bitcast=True), mask=keep)
        tl.store(slot_cols + pos, tl.reshape(s + offs, [TILE]), mask=keep)
    if full < end:
        _tile_v(row_ptr, full + offs, end, f, count_ptr, slot_keys, slot_cols, CAP, True, False)


@triton.jit
def _share_v(row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr, TILE: tl.constexpr,
             LANES: tl.constexpr, PACK: tl.constexpr):
    f = _key_floor(thr)
    offs = tl.arange(0, TILE // LANES)[:, None] * LANES + tl.arange(0, LANES)[None, :]
    full = start + (end - start) // TILE * TILE
    for s in range(start, full, TILE):
        _tile_v(row_ptr, s + offs, end, f, count_ptr, slot_keys, slot_cols, CAP, False, PACK)
    if full < end:
        _tile_v(row_ptr, full + offs, end, f, count_ptr, slot_keys, slot_cols, CAP, True, PACK)


@triton.jit
def stage_k(logits_ptr, thr_ptr, count_ptr, keys_ptr, cols_ptr, n, row_stride,
            CAP: tl.constexpr, TILE: tl.constexpr, SPLIT: tl.constexpr, LANES: tl.constexpr, V: tl.constexpr):
    part = tl.program_id(0)
    row = tl.program_id(1)
    row_ptr = logits_ptr + row.to(tl.int64) * row_stride
    thr = tl.load(thr_ptr + row).to(tl.uint32, bitcast=True)
    start, end = _share_bounds(n, part, SPLIT, TILE)
    sk = keys_ptr + row.to(tl.int64) * CAP * 2
    sc = cols_ptr + row.to(tl.int64) * CAP
    if V == 0:
        _old_share(row_ptr, start, end, thr, count_ptr + row, sk, sc, CAP, TILE)
    elif V == 1:
        _stage_share(row_ptr, start, end, thr, count_ptr + row, sk, sc, CAP, TILE, LANES)
    elif V == 2:
        _share_pf(row_ptr, start, end, thr, count_ptr + row, sk, sc, CAP, TILE, LANES)
    else:
        _share_v(row_ptr, start, end, thr, count_ptr + row, sk, sc, CAP, TILE, LANES, True)


def main():
    dev = torch.device("cuda")
    cells = [(512, 131075), (64, 131075), (512, 16387)]
    arms = [  # name, V, warps, TILE, SPLIT, maxnreg
        ("old", 0, 1, 1024, None, 0), ("new", 1, 1, 1024, None, 0), ("new/r128", 1, 1, 1024, None, 128),
        ("new/r96", 1, 1, 1024, None, 96), ("new/t512", 1, 1, 512, None, 0), ("new/t2048", 1, 1, 2048, None, 0),
        ("new/w2", 1, 2, 2048, None, 0), ("new/w4", 1, 4, 4096, None, 0), ("new/w2t1024", 1, 2, 1024, None, 0),
        ("new/sx2", 1, 1, 1024, 2, 0), ("new/sx2t512", 1, 1, 512, 2, 0),
        ("pf", 2, 1, 1024, None, 0), ("pf/t512", 2, 1, 512, None, 0), ("pack", 3, 1, 1024, None, 0),
        ("pack/r128", 3, 1, 1024, None, 128), ("old/t512", 0, 1, 512, None, 0),
    ]
    flush = timing.L2Flush(dev)
    res = {}
    for rows, n in cells:
        inp = make_inputs(Case("grid", rows, n, 2048), k_max=2048, device=dev)
        x = inp.logits
        kth = torch.topk(x[:, :n], 3072, dim=1).values[:, -1]
        thr = reference.order_keys(kth).to(torch.int64)
        thr32 = torch.where(thr >= 2**31, thr - 2**32, thr).to(torch.int32)
        want = (reference.order_keys(x[:, :n]) >= thr[:, None]).sum(1).to(torch.int32)
        CAP = 8192
        keys = torch.zeros(rows * CAP * 2, dtype=torch.int32, device=dev)
        cols = torch.zeros(rows * CAP, dtype=torch.int32, device=dev)
        base_split = {512: 4, 64: 32}[rows]
        for name, V, warps, tile, sx, maxnreg in arms:
            split = base_split * (sx or 1)
            count = torch.zeros(rows, dtype=torch.int32, device=dev)
            kw = dict(CAP=CAP, TILE=tile, SPLIT=split, LANES=min(tile, 32 * warps), V=V, num_warps=warps)
            if maxnreg:
                kw["maxnreg"] = maxnreg
            call = lambda: stage_k[(split, rows)](x, thr32, count, keys, cols, n, x.stride(0), **kw)  # noqa: E731
            try:
                call()
                torch.cuda.synchronize()
                ok = bool(torch.equal(count, want))
                if V != 0 and V != 3:
                    # staged columns are exactly the survivors (per row, as sets), checked on row 0 and the last
                    for r in (0, rows - 1):
                        got = torch.sort(cols[r * CAP: r * CAP + int(count[r])]).values
                        ref = torch.nonzero(reference.order_keys(x[r, :n]) >= thr[r]).flatten().to(torch.int32)
                        ok = ok and torch.equal(got, ref)
                count.zero_()
                g, _ = timing.capture(lambda: (call(), count.zero_()))
                t = timing.time_graph(g, flush, reps=20)
                res[f"{rows}x{n}/{name}"] = dict(us=t.median_us, ok=ok)
                print(f"{rows}x{n} {name:12s} {t.median_us:8.1f} us ok={ok}", flush=True)
            except Exception as e:
                print(f"{rows}x{n} {name} FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)
    if len(sys.argv) > 1:
        json.dump(res, open(os.path.join(sys.argv[1], "stage_probe.json"), "w"), indent=1)
    print()
    print("arm           " + "  ".join(f"{r}x{n:>6}" for r, n in cells))
    for name, *_ in arms:
        us = [res.get(f"{r}x{n}/{name}", {}).get("us", float("nan")) for r, n in cells]
        print(f"{name:12s} " + "  ".join(f"{u:10.1f}" for u in us))


if __name__ == "__main__":
    main()
