"""Scratch probe: a batch split into S row ranges, each on its own CUDA stream (caller workspaces), against one call.
Graph replay, L2 flushed, same inputs, every output checked exact."""
import argparse
import json
import multiprocessing as mp
import os
import sys
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import torch  # noqa: E402

import gvr_topk  # noqa: E402


def parse_arm(arm):
    return int(arm[1:].rstrip("f")), arm.endswith("f")


def _compile(job):
    rows, n, k, force = job
    try:
        x = torch.randn(rows, n, device="cuda")
        kv = torch.full((rows,), n, dtype=torch.int32, device="cuda")
        idx = torch.empty(rows, k, dtype=torch.int32, device="cuda")
        gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, family="stream" if force else None)
        torch.cuda.synchronize()
        return ""
    except Exception as e:
        return f"{job}: {type(e).__name__}: {str(e)[:200]}"


def make_call(x, kv, idx, n, k, s, force, side, dev):
    rows = x.shape[0]
    bounds = [(rows * i // s, rows * (i + 1) // s) for i in range(s)]
    wss = [torch.zeros(gvr_topk.workspace_bytes(b - a, k), dtype=torch.uint8, device=dev) for a, b in bounds]
    fam = "stream" if force else None
    if s == 1:
        return lambda: gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, workspace=wss[0], family=fam)

    def call():
        main = torch.cuda.current_stream()
        for i, (a, b) in enumerate(bounds):
            st = main if i == 0 else side[i]
            if i:
                st.wait_stream(main)
            with torch.cuda.stream(st):
                gvr_topk.run_varlen(x[a:b], None, kv[a:b], idx[a:b], max_seq_len=n, workspace=wss[i], family=fam)
        for i in range(1, s):
            main.wait_stream(side[i])
    return call


def main():
    from gvr_topk.bench import timing
    from gvr_topk.bench.exact import check_exact_fast
    import probe_sample

    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", default="512x131075x2048,512x131075x512,512x16387x2048,512x16387x512,"
                    "256x131075x2048,64x131075x2048,128x65536x2048")
    ap.add_argument("--arms", default="s1,s2f,s4f,s8f")
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--reps", type=int, default=25)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    cells = [tuple(int(v) for v in c.split("x")) for c in args.cells.split(",")]
    arms = args.arms.split(",")
    if args.jobs:
        jobs = set()
        for rows, n, k in cells:
            for arm in arms:
                s, force = parse_arm(arm)
                if rows % s == 0:
                    jobs.add((rows // s, n, k, force))
        with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("spawn")) as pool:
            for err in pool.map(_compile, sorted(jobs)):
                if err:
                    print("precompile:", err, flush=True)
    dev = torch.device("cuda")
    flush = timing.L2Flush(dev)
    side = [torch.cuda.Stream(dev) for _ in range(8)]
    results = []
    for rows, n, k in cells:
        x, kv, torch_us = probe_sample.cell(rows, n, k, "decode", flush, args.reps)
        rec = dict(rows=rows, n=n, k=k, us={"torch": torch_us}, exact={}, plan={})
        for arm in arms:
            s, force = parse_arm(arm)
            if rows % s:
                continue
            p = gvr_topk.route(rows // s, n, n, k)
            rec["plan"][arm] = f"{'stream' if force else p.family}/split{p.split}/w{p.num_warps}/sw{p.select_warps}"
            idx = torch.empty(rows, k, dtype=torch.int32, device=dev)
            try:
                call = make_call(x, kv, idx, n, k, s, force, side, dev)
                call()
                torch.cuda.synchronize()
                g, _ = timing.capture(call)
                rec["us"][arm] = round(timing.time_graph(g, flush, args.reps).median_us, 2)
                idx.fill_(-7)
                g.replay()
                torch.cuda.synchronize()
                rec["exact"][arm] = not check_exact_fast(x, idx, kv_lens=kv)
                del g
            except Exception as e:
                rec["us"][arm] = None
                rec["exact"][arm] = f"{type(e).__name__}: {str(e)[:300]}"
        results.append(rec)
        print(json.dumps(rec), flush=True)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, "probe_streams.json"), "w") as fh:
                json.dump(results, fh, indent=1)
    print(f"\n{'cell':>18} {'torch':>7} " + " ".join(f"{a:>8}" for a in arms))
    for r in results:
        print(f"{r['rows']:>4}x{r['n']:>6}x{r['k']:>5} {r['us']['torch']:7.1f} " + " ".join(
            f"{(r['us'].get(a) or 0):7.1f}{'' if r['exact'].get(a, True) is True else '!'}" for a in arms))


if __name__ == "__main__":
    main()
