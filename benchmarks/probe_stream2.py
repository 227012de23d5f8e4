"""Developer probe: the two-kernel streaming form (stage + select) against the launch families, same inputs.

Checks every variant for exactness and times CUDA-graph replays with L2 flushed (median of --reps); prints a table
last and writes JSON to --out. Used while re-tuning the streaming families (results go to benchmarks/NOTES.md).
    python benchmarks/probe_stream2.py [--out DIR] [--quick]
"""

import argparse
import json
import os
import sys

import torch

from gvr_topk import dispatch
from gvr_topk import tuning
from gvr_topk.bench import timing
from gvr_topk.bench.cases import grid_cases
from gvr_topk.bench.data import make_inputs
from gvr_topk.kernels.split import _gvr_split_kernel
from gvr_topk.kernels.stream import _gvr_select_kernel
from gvr_topk.kernels.stream import _gvr_stage_kernel
from gvr_topk.kernels.stream import _gvr_threshold_kernel
from gvr_topk.bench.exact import check_exact_fast as check_exact


def cold_replay_us(fn, flush, reps):
    """(median us, graph) of CUDA-graph replays of fn() with the L2 flushed before each (the benchmark's timing)."""
    fn()
    graph, _ = timing.capture(fn)
    return timing.time_graph(graph, flush, reps).median_us, graph


def two_kernel(logits, hint, kv, out, k, n_env, split, cap, aim, sample, tile, warps_stage, warps_select, ws,
               chunk, stage_tile=2048, group=tuning.SAMPLE_GROUP):
    rows, npad = logits.shape
    kb = max(16, 1 << (k - 1).bit_length())
    words = ws.view(torch.int32)
    counters = words[:chunk]
    thr = words[chunk:2 * chunk]
    keys = words[2 * chunk:2 * chunk + chunk * cap]
    cols = words[2 * chunk + chunk * cap:2 * chunk + 2 * chunk * cap]
    common = dict(indices_ptr=out, values_ptr=out, logits_ptr=logits, kv_lens_ptr=kv, ws_count_ptr=counters,
                  ws_keys_ptr=keys, ws_cols_ptr=cols, n_bound=n_env, row_stride=logits.stride(0),
                  out_stride=out.stride(0), val_stride=0, n_uniform=0, next_n=1, cr_shift=0, K=k, KB=kb,
                  TILE=tile, CAP=cap, VARLEN=True, HAS_VALUES=False)
    for r0 in range(0, rows, chunk):
        m = min(chunk, rows - r0)
        _gvr_threshold_kernel[(m,)](logits, kv, thr, row0=r0, n_bound=n_env, row_stride=logits.stride(0),
                                    n_uniform=0, next_n=1, cr_shift=0, aim=aim, CAP=cap, SAMPLE=sample,
                                    SAMPLE_GROUP=group, VARLEN=True, num_warps=4)
        _gvr_stage_kernel[(split, m)](row0=r0, SPLIT=split, ws_thr_ptr=thr, num_warps=warps_stage,
                                      **dict(common, TILE=stage_tile))
        select_args = {name: v for name, v in common.items() if name != "TILE"}
        _gvr_select_kernel[(m,)](row0=r0, pre_idx_ptr=hint if hint is not None else out,
                                 pre_stride=hint.stride(0) if hint is not None else 0, HINT_FREE=hint is None,
                                 aim=aim, SAMPLE=sample, SAMPLE_GROUP=group, MIN_TILE=tuning.SELECT_MIN_TILE,
                                 REFINE_TILE=tile, num_warps=warps_select, **select_args)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = timing.L2Flush(dev)
    rows_list = [1, 8, 64, 512]
    if args.quick:
        rows_list = [1, 64, 512]
    ns = [16387, 131075] if args.quick else [16387, 65536, 131075, 262143]
    ks = [512, 2048]
    results = []
    for case in grid_cases(rows=rows_list, ns=ns, ks=ks):
        inp = make_inputs(case, k_max=2048, device=dev)
        logits, kv = inp.logits, inp.kv_lens
        rows, npad = logits.shape
        k = case.k
        out = torch.empty((rows, k), dtype=torch.int32, device=dev)
        rec = {"case": case.name, "rows": rows, "n": case.n, "k": k, "arms": {}}
        torch.cuda.synchronize()
        torch.topk(logits, k, dim=1, sorted=False)
        ttorch, _ = cold_replay_us(lambda: torch.topk(logits, k, dim=1, sorted=False), flush, args.reps)
        rec["arms"]["torch"] = ttorch
        arms = {}
        plan = dispatch.route(rows, case.n, npad, k)
        cap, aim, sample = plan.cap, plan.aim, plan.sample
        if rows <= 32:
            counters = torch.zeros(64, dtype=torch.int32, device=dev)
            skeys = torch.empty(rows * cap, dtype=torch.int32, device=dev)
            scols = torch.empty(rows * cap, dtype=torch.int32, device=dev)
            for tile, w in ((2048, 8), (2048, 16), (4096, 16), (8192, 16)):
                arms[f"split/t{tile}/w{w}"] = (
                    lambda tile=tile, w=w: _gvr_split_kernel[(plan.split, rows)](
                        indices_ptr=out, values_ptr=out, logits_ptr=logits, pre_idx_ptr=out, kv_lens_ptr=kv,
                        ws_count_ptr=counters, ws_keys_ptr=skeys, ws_cols_ptr=scols, n_bound=case.n,
                        row_stride=logits.stride(0), out_stride=out.stride(0), val_stride=0, pre_stride=0,
                        n_uniform=0, next_n=1, cr_shift=0, aim=aim, K=k, KB=max(16, 1 << (k - 1).bit_length()),
                        TILE=tile, CAP=cap, SAMPLE=sample, SAMPLE_GROUP=tuning.SAMPLE_GROUP,
                        MIN_TILE=tuning.SELECT_MIN_TILE, RANK_MAX=0, SPLIT=plan.split,
                        HINT_FREE=True, VARLEN=True, HAS_VALUES=False, num_warps=w))
        ws = torch.zeros(4 * (512 + 2 * 256 * cap), dtype=torch.uint8, device=dev)
        splan = dispatch.plan_for("stream", rows, case.n, npad, k)
        for tile, w_stage in ((2048, 4), (4096, 4), (8192, 4), (8192, 8)):
            arms[f"3k/s{splan.split}/t{tile}/w{w_stage}"] = (
                lambda tile=tile, w_stage=w_stage: two_kernel(logits, None, kv, out, k, case.n, splan.split, cap, aim,
                                                              sample, 2048, w_stage, 16, ws, 256, tile))
        for name, fn in arms.items():
            try:
                out.fill_(-7)
                fn()
                torch.cuda.synchronize()
                probs = check_exact(logits, out, kv_lens=kv)
                t, g = cold_replay_us(fn, flush, args.reps)
                out.fill_(-7)
                g.replay()
                torch.cuda.synchronize()
                probs += check_exact(logits, out, kv_lens=kv)
                rec["arms"][name] = t if not probs else f"INEXACT {probs[:2]}"
            except Exception as e:  # keep probing the other arms
                rec["arms"][name] = f"ERROR {type(e).__name__}: {str(e)[:200]}"
        results.append(rec)
        print(json.dumps(rec), flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "probe_stream2.json"), "w") as f:
            json.dump(results, f, indent=1)
    print("\ncase                          torch  | best arms (us)")
    for rec in results:
        a = {k: v for k, v in rec["arms"].items() if isinstance(v, float)}
        bad = [k for k, v in rec["arms"].items() if not isinstance(v, float)]
        best = sorted((v, k) for k, v in a.items() if k != "torch")[:4]
        print(f"{rec['case']:28s} {a.get('torch', 0):7.1f} | " + "  ".join(f"{k}={v:.1f}" for v, k in best)
              + (f"  BAD: {bad}" if bad else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
