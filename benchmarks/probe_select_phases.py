"""Developer probe (GPU only): where the streaming family's select kernel spends its time, row by row.

The real threshold and stage kernels fill the workspace of a launch (hint-free, no values, no programmatic
dependent launch); then an instrumented copy of the select's accept path (``_timed_select`` of
``probe_phases.py``: the staged select of ``kernels/_common.py`` with ``%globaltimer`` at each phase boundary), one
program per row with the plan's warps and register cap, selects every row whose candidates fit its tile. The three
launches are captured into one CUDA graph; per cell the graph is replayed with the L2 flushed (its median time, and
the product's own graph time on the same rows, are printed beside it), then once more for the timestamps.

Per row it records the program's start, its SM (``%smid``), the counter exchange, slot load and min/max, the
histogram and crossing bin, the crossing bin's compaction, its radix select, and the emission. Printed per cell: the
select launch's span, the start offsets (how many waves), each phase's median and p90 in us, and the most programs
one SM ran at once. Written for NOTES entry 21's first "next" item (the select at 512 rows is ~57 us whatever the
row length; which of its steps take that time under two programs per SM?).

    python benchmarks/probe_select_phases.py [--cells 512x16387x2048,512x131075x2048] [--reps 15] [--out DIR]
"""

import argparse
import json
import os
import sys

import torch
import triton
import triton.language as tl

import gvr_topk
from gvr_topk import tuning
from gvr_topk.bench import timing
from gvr_topk.bench.cases import Case
from gvr_topk.bench.data import make_inputs
from gvr_topk.bench.exact import check_exact_fast
from gvr_topk.kernels import stream as stream_kernels
from gvr_topk.launch import stream as stream_launch
from gvr_topk.launch.common import param_names
from gvr_topk.launch.common import static_kwargs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_phases import NT  # noqa: E402  (benchmarks/, the script's own directory)
from probe_phases import _now  # noqa: E402
from probe_phases import _timed_select  # noqa: E402

#: Module constants the kernel reads (a ``@triton.jit`` function may read globals only as constexprs).
_NT = tl.constexpr(NT)
_CROSS_CAP = tl.constexpr(tuning.CROSS_CAP)
DEFAULT_CELLS = "512x16387x2048,512x131075x2048,512x131075x512,64x131075x2048"
#: Timestamp slots of ``_timed_select`` (``probe_phases.py``): 4 counter exchanged, 5 slot loaded and min/max, 6
#: histogram and crossing bin, 7 crossing bin compacted, 8 its select, 9 emitted, 10 crossing bin size, 11 count.
PHASES = (("xchg", 0, 4), ("load_minmax", 4, 5), ("hist", 5, 6), ("compact", 6, 7), ("small_select", 7, 8),
          ("emit", 8, 9), ("total", 0, 9))


@triton.jit
def _smid():
    return tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _timed_stream_select_kernel(indices_ptr, logits_ptr, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, t_ptr, sm_ptr,
                                row_stride, out_stride, K: tl.constexpr, CAP: tl.constexpr,
                                SEL_TILE: tl.constexpr):
    row = tl.program_id(0)
    tp = t_ptr + row * _NT
    tl.store(tp + 0, _now())
    tl.store(sm_ptr + row, _smid())
    count = tl.atomic_xchg(ws_count_ptr + row, 0, sem="relaxed")  # the kernel boundary orders the staging
    tl.store(tp + 4, _now())
    tl.store(tp + 11, count.to(tl.int64))
    if (count >= K) & (count <= SEL_TILE):
        _timed_select(indices_ptr + row.to(tl.int64) * out_stride, logits_ptr + row.to(tl.int64) * row_stride,
                      ws_keys_ptr + row.to(tl.int64) * CAP, ws_cols_ptr + row.to(tl.int64) * CAP, count, tp, K,
                      SEL_TILE, _CROSS_CAP)


def _quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else None


def run_cell(rows: int, n: int, k: int, flush, reps: int) -> dict:
    dev = torch.device("cuda")
    inp = make_inputs(Case("grid", rows, n, k), k_max=2048, device=dev)
    x, kv = inp.logits, inp.kv_lens
    plan = gvr_topk.route(rows, n, n, k)
    if plan.family != "stream" or rows > tuning.STREAM_CHUNK_ROWS:
        raise SystemExit(f"probe_select_phases: {rows}x{n}x{k} is not one streaming chunk ({plan.family})")
    # The select tile the product takes for a row of the aim's size (``_select_staged``).
    sel_tile = tuning.SELECT_MIN_TILE if (plan.aim <= tuning.SELECT_MIN_TILE and k <= tuning.SELECT_MIN_TILE) \
        else plan.cap // 2
    idx = torch.full((rows, k), -1, dtype=torch.int32, device=dev)
    ws = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=dev)
    views = stream_launch.workspace_kwargs(plan, rows, ws)
    args = dict(indices_ptr=idx, values_ptr=idx, logits_ptr=x, pre_idx_ptr=idx, kv_lens_ptr=kv, **views,
                **static_kwargs(k=k, next_n=1, cr_shift=0, n_uniform=n, n_bound=n, row_stride=x.stride(0),
                                out_stride=idx.stride(0), val_stride=idx.stride(0), pre_stride=idx.stride(0),
                                hint_free=True, varlen=False, has_values=False),
                **stream_launch.family_kwargs(plan, rows, device=None))
    thr_k, stage_k = stream_kernels._gvr_threshold_kernel, stream_kernels._gvr_stage_kernel
    a_thr = {name: args[name] for name in param_names(thr_k) if name in args}
    a_stage = {name: args[name] for name in param_names(stage_k) if name in args}
    t = torch.zeros(rows * NT, dtype=torch.int64, device=dev)
    sm = torch.zeros(rows, dtype=torch.int32, device=dev)
    cap = dict(maxnreg=plan.select_maxnreg) if plan.select_maxnreg else {}
    stage_cap = dict(maxnreg=tuning.STREAM_STAGE_MAXNREG) if tuning.STREAM_STAGE_MAXNREG else {}

    def call():
        thr_k[(rows,)](row0=0, num_warps=tuning.THRESHOLD_WARPS, **a_thr)
        stage_k[(plan.split, rows)](row0=0, num_warps=plan.num_warps, **stage_cap, **a_stage)
        _timed_stream_select_kernel[(rows,)](idx, x, views["ws_count_ptr"], views["ws_keys_ptr"],
                                             views["ws_cols_ptr"], t, sm, x.stride(0), idx.stride(0), K=k,
                                             CAP=plan.cap, SEL_TILE=sel_tile, num_warps=plan.select_warps, **cap)

    g, _ = timing.capture(call)
    probe_us = timing.time_graph(g, flush, reps).median_us
    # The product on the same rows, same process.
    pidx = torch.empty(rows, k, dtype=torch.int32, device=dev)
    product = lambda: gvr_topk.run_varlen(x, None, kv, pidx, max_seq_len=n)  # noqa: E731
    gp, _ = timing.capture(product)
    product_us = timing.time_graph(gp, flush, reps).median_us
    # Timestamps of one replay after a flush.
    t.zero_()
    idx.fill_(-1)
    flush()
    g.replay()
    torch.cuda.synchronize()
    T = t.view(rows, NT).cpu().tolist()
    sms = sm.cpu().tolist()
    done = [r for r in range(rows) if T[r][9]]
    exact = len(done) == rows and not check_exact_fast(x, idx, kv_lens=kv)
    t0 = min(T[r][0] for r in range(rows))
    phases = {}
    for name, a, b in PHASES:
        v = [(T[r][b] - T[r][a]) / 1e3 for r in done if T[r][a] and T[r][b]]
        phases[name] = dict(median=round(_quantile(v, 0.5), 2), p90=round(_quantile(v, 0.9), 2)) if v else None
    starts = sorted((T[r][0] - t0) / 1e3 for r in range(rows))
    # Programs one SM ran at once: the most overlapping [start, end] intervals of rows on the same SM.
    per_sm = {}
    for r in done:
        per_sm.setdefault(sms[r], []).append((T[r][0], T[r][9]))
    most = 0
    for spans in per_sm.values():
        for s0, _ in spans:
            most = max(most, sum(1 for a, b in spans if a <= s0 < b))
    return dict(rows=rows, n=n, k=k, plan=f"split{plan.split}/sel{plan.select_warps}w/maxnreg{plan.select_maxnreg}",
                sel_tile=sel_tile, probe_graph_us=round(probe_us, 2), product_graph_us=round(product_us, 2),
                rows_selected=len(done), exact=exact,
                select_span_us=round((max(T[r][9] for r in done) - t0) / 1e3, 2) if done else None,
                start_offsets_us=dict(p10=round(_quantile(starts, 0.1), 2), p50=round(_quantile(starts, 0.5), 2),
                                      p90=round(_quantile(starts, 0.9), 2), max=round(starts[-1], 2)),
                phases_us=phases, most_programs_per_sm=most,
                crossing_bin=dict(median=_quantile([T[r][10] for r in done], 0.5),
                                  max=max((T[r][10] for r in done), default=None)),
                count=dict(min=min(T[r][11] for r in range(rows)), max=max(T[r][11] for r in range(rows))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default=DEFAULT_CELLS, help=f"comma-separated ROWSxNxK cells (default {DEFAULT_CELLS})")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    flush = timing.L2Flush(torch.device("cuda"))
    res = []
    for c in args.cells.split(","):
        rows, n, k = (int(v) for v in c.split("x"))
        rec = run_cell(rows, n, k, flush, args.reps)
        res.append(rec)
        print(json.dumps(rec), flush=True)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, "probe_select_phases.json"), "w") as fh:
                json.dump(res, fh, indent=1)
    names = [p[0] for p in PHASES]
    print(f"\n{'cell':>17} {'graph':>6} {'prod':>6} {'span':>6} " + " ".join(f"{m:>12}" for m in names)
          + "  (median/p90 us)")
    for r in res:
        ph = r["phases_us"]
        print(f"{r['rows']:>4}x{r['n']:>6}x{r['k']:>5} {r['probe_graph_us']:6.1f} {r['product_graph_us']:6.1f} "
              f"{(r['select_span_us'] or 0):6.1f} "
              + " ".join(f"{ph[m]['median']:5.1f}/{ph[m]['p90']:5.1f}" if ph[m] else f"{'-':>11}" for m in names))
    bad = [r for r in res if not r["exact"]]
    print(f"{len(res) - len(bad)} of {len(res)} cells exact with every row selected by the instrumented copy")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
