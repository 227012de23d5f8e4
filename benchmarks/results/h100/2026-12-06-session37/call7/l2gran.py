"""Does the L2 fetch granularity (cudaLimitMaxL2FetchGranularity, a device-wide hint) change the op's time?
The sample threshold reads scattered single scores (~64 DRAM bytes each, NOTES entry 21); 32 B might halve that.
One graph per cell (hint-free run_varlen), replays interleaved over limit settings, synchronized each replay."""
import json, os, sys
import torch
from cuda.bindings import runtime as rt
import gvr_topk
from gvr_topk.bench import timing
from gvr_topk.bench.exact import check_exact_fast
sys.path.insert(0, "benchmarks")
from probe_sample import parse_cell, call_kwargs, case_cell  # noqa: E402

LIM = rt.cudaLimit.cudaLimitMaxL2FetchGranularity
dev = torch.device("cuda")
torch.cuda.init()
err, default = rt.cudaDeviceGetLimit(LIM)
print("default L2 fetch granularity:", err, default)
settings = [("dflt", default), ("g32", 32), ("g128", 128), ("dflt2", default)]
flush = timing.L2Flush(dev)
reps = int(os.environ.get("REPS", "30"))
out = []
for spec in sys.argv[1].split(","):
    case = parse_cell(spec, "decode")
    x, kv, _ = case_cell(case, dev)
    idx = torch.empty(case.rows, case.k, dtype=torch.int32, device=dev)
    g, _ = timing.capture(lambda: gvr_topk.run_varlen(x, None, kv, idx, **call_kwargs(case)))
    order = timing.interleaved_order(len(settings), reps)
    samples = {name: [] for name, _ in settings}
    for warm in range(2):
        g.replay()
    got = {}
    for arm in order:
        name, val = settings[arm]
        e = rt.cudaDeviceSetLimit(LIM, val)[0]
        got[name] = int(rt.cudaDeviceGetLimit(LIM)[1])
        flush()
        s, t = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); g.replay(); t.record()
        torch.cuda.synchronize()
        samples[name].append(s.elapsed_time(t) * 1e3)
    rt.cudaDeviceSetLimit(LIM, default)
    idx.fill_(-7); g.replay(); torch.cuda.synchronize()
    exact = not check_exact_fast(x, idx, kv_lens=kv)
    med = {k: round(sorted(v)[len(v) // 2], 2) for k, v in samples.items()}
    rec = dict(cell=spec, us=med, limit_read_back=got, exact=exact)
    out.append(rec); print(json.dumps(rec), flush=True)
    del g
json.dump(out, open(os.path.join(os.environ.get("OUT", "."), "l2gran.json"), "w"), indent=1)
print(f"{'cell':22s}" + "".join(f"{n:>9s}" for n, _ in settings))
for r in out:
    print(f"{r['cell']:22s}" + "".join(f"{r['us'][n]:9.1f}" for n, _ in settings) + ("" if r["exact"] else "  INEXACT"))
