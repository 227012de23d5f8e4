"""Developer probe (GPU only): where the time of a split-family launch goes, from timestamps taken inside it.

An instrumented copy of the split family's accept path (``kernels/split.py`` with the staged select of
``kernels/_common.py``; no retry ladder, hint-free, no values) writes ``%globaltimer`` (ns) at each phase boundary:
per program the start, the sample threshold, the staged share and the arrival; for the finisher the slot load and
min/max, the histogram and crossing bin, the crossing bin's compaction, its select and the emission. One CUDA-graph
replay after an L2 flush is read back per (cell, warps); the graph time of the copy is printed beside it (the copy
lacks the ladder's registers, so it can run a little faster than the product kernel). Used for NOTES entry 12.

    python benchmarks/probe_phases.py [OUT_DIR]
"""
import json
import os
import sys

import torch
import triton
import triton.language as tl

import gvr_topk
from gvr_topk.kernels._common import (_emit_selected, _load_slot, _minmax, _sample_rank, _sample_threshold,
                                      _select_tile, _share_bounds, _split_at_crossing_bin, _stage_share)
from gvr_topk.bench import timing
from gvr_topk.bench.cases import Case
from gvr_topk.bench.data import make_inputs
from gvr_topk.bench.exact import check_exact_fast
from gvr_topk.launch.common import stage_lanes

NT = 12


@triton.jit
def _now():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _timed_select(out_ptr, row_ptr, slot_keys, slot_cols, count, tp, K: tl.constexpr, CAP: tl.constexpr,
                  CROSS_CAP: tl.constexpr):
    keys, cols, live = _load_slot(slot_keys, slot_cols, count, CAP)
    lo, hi = _minmax(keys, live)
    tl.store(tp + 5, _now())
    certain, cross, need, in_b = _split_at_crossing_bin(keys, live, lo, hi, K)
    tl.store(tp + 6, _now())
    tl.store(tp + 10, in_b.to(tl.int64))
    if in_b <= CROSS_CAP:
        tl.debug_barrier()
        cpos = tl.cumsum(cross.to(tl.int32), 0) - 1
        tl.store(slot_keys + cpos, keys.to(tl.int32, bitcast=True), mask=cross)
        tl.store(slot_cols + cpos, cols, mask=cross)
        tl.debug_barrier()
        tl.store(tp + 7, _now())
        j = tl.arange(0, CROSS_CAP)
        small = j < in_b
        skeys = tl.load(slot_keys + j, mask=small, other=0, cache_modifier=".cg").to(tl.uint32, bitcast=True)
        scols = tl.load(slot_cols + j, mask=small, other=0, cache_modifier=".cg")
        ssel = _select_tile(tl.where(small, skeys, 0), scols, small, need)
        tl.store(tp + 8, _now())
        base = _emit_selected(out_ptr, out_ptr, row_ptr, cols, certain, 0, False)
        _emit_selected(out_ptr, out_ptr, row_ptr, scols, ssel, base, False)
    else:
        sel = certain | _select_tile(keys, cols, cross, need)
        tl.store(tp + 8, _now())
        _emit_selected(out_ptr, out_ptr, row_ptr, cols, sel, 0, False)
    tl.store(tp + 9, _now())


@triton.jit
def _timed_split_kernel(indices_ptr, logits_ptr, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, t_ptr, n, row_stride,
                        out_stride, aim, K: tl.constexpr, TILE: tl.constexpr, CAP: tl.constexpr,
                        SAMPLE: tl.constexpr, SPLIT: tl.constexpr, SEL_TILE: tl.constexpr, LANES: tl.constexpr):
    part = tl.program_id(0)
    row = tl.program_id(1)
    tp = t_ptr + (row * SPLIT + part) * 12
    tl.store(tp + 0, _now())
    row_ptr = logits_ptr + row.to(tl.int64) * row_stride
    thr = _sample_threshold(row_ptr, n, _sample_rank(n, aim, SAMPLE), SAMPLE, 1, 0)
    tl.store(tp + 1, _now())
    count_ptr = ws_count_ptr + row * 2
    slot_keys = ws_keys_ptr + row.to(tl.int64) * CAP
    slot_cols = ws_cols_ptr + row.to(tl.int64) * CAP
    start, end = _share_bounds(n, part, SPLIT, TILE)
    _stage_share(row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP, TILE, LANES)
    tl.store(tp + 2, _now())
    tl.debug_barrier()
    arrived = tl.atomic_add(count_ptr + 1, 1, sem="acq_rel")
    tl.store(tp + 3, _now())
    if arrived == SPLIT - 1:
        count = tl.atomic_xchg(count_ptr, 0, sem="acq_rel")
        tl.atomic_xchg(count_ptr + 1, 0, sem="relaxed")
        tl.store(tp + 4, _now())
        tl.store(tp + 11, count.to(tl.int64))
        if (count >= K) & (count <= SEL_TILE):
            _timed_select(indices_ptr + row.to(tl.int64) * out_stride, row_ptr, slot_keys, slot_cols, count, tp,
                          K, SEL_TILE, 512)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    dev = torch.device("cuda")
    flush = timing.L2Flush(dev)
    res = []
    for rows, n, k in ((1, 16387, 512), (1, 16387, 2048), (1, 131075, 2048), (8, 131075, 2048), (1, 131075, 512)):
        inp = make_inputs(Case("grid", rows, n, k), k_max=2048, device=dev)
        x = inp.logits
        plan = gvr_topk.route(rows, n, n, k)
        sel_tile = 2048 if (plan.aim + 512 <= 2048 and k <= 2048) else plan.cap // 2
        for warps in (16, 8, 4):
            ws = torch.zeros(64 + 2 * rows * plan.cap, dtype=torch.int32, device=dev)
            cnt, keys, cols = ws[:64], ws[64:64 + rows * plan.cap], ws[64 + rows * plan.cap:]
            t = torch.zeros(rows * plan.split * NT, dtype=torch.int64, device=dev)
            idx = torch.full((rows, k), -1, dtype=torch.int32, device=dev)
            call = lambda: _timed_split_kernel[(plan.split, rows)](  # noqa: E731
                idx, x, cnt, keys, cols, t, n, x.stride(0), idx.stride(0), plan.aim, K=k, TILE=plan.block,
                CAP=plan.cap, SAMPLE=plan.sample, SPLIT=plan.split, SEL_TILE=sel_tile,
                LANES=stage_lanes(plan.block, warps), num_warps=warps)
            g, _ = timing.capture(call)
            us = timing.time_graph(g, flush, 15).median_us
            # one more replay after a flush, timestamps of that replay only
            t.zero_()
            flush()
            g.replay()
            torch.cuda.synchronize()
            exact = not check_exact_fast(x, idx, kv_lens=inp.kv_lens)
            T = t.view(rows, plan.split, NT).cpu()
            t0 = int(T[:, :, 0].min())
            fin = [(r, p) for r in range(rows) for p in range(plan.split) if int(T[r, p, 4]) != 0]
            rec = dict(rows=rows, n=n, k=k, warps=warps, split=plan.split, sel_tile=sel_tile, graph_us=round(us, 2),
                       exact=exact,
                       start_spread_us=round((int(T[:, :, 0].max()) - t0) / 1e3, 2),
                       thr_us_median=round(float((T[:, :, 1] - T[:, :, 0]).double().median()) / 1e3, 2),
                       stage_us_median=round(float((T[:, :, 2] - T[:, :, 1]).double().median()) / 1e3, 2),
                       last_arrival_us=round((int(T[:, :, 3].max()) - t0) / 1e3, 2))
            fins = []
            for r, p in fin:
                v = [int(T[r, p, i]) for i in range(NT)]
                fins.append(dict(arrive=round((v[3] - t0) / 1e3, 2), xchg=round((v[4] - v[3]) / 1e3, 2),
                                 load_minmax=round((v[5] - v[4]) / 1e3, 2), hist=round((v[6] - v[5]) / 1e3, 2),
                                 compact=round((v[7] - v[6]) / 1e3, 2) if v[7] else None,
                                 small_select=round((v[8] - (v[7] or v[6])) / 1e3, 2),
                                 emit=round((v[9] - v[8]) / 1e3, 2), end=round((v[9] - t0) / 1e3, 2),
                                 in_b=v[10], count=v[11]))
            rec["finishers"] = fins[:3]
            res.append(rec)
            print(json.dumps(rec), flush=True)
    if out:
        os.makedirs(out, exist_ok=True)
        json.dump(res, open(os.path.join(out, "probe_phases.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
