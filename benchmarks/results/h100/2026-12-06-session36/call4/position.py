"""Does a graph's capture position change its replay time? Identical calls (today's tuning, no tuned()), captured
one after another, timed interleaved; variants: torch.topk captured first / last, default vs explicit workspaces."""
import json, os
import torch
import gvr_topk
from gvr_topk import workspace as W
from gvr_topk.bench import timing
from benchmarks.probe_sample import cell

dev = torch.device("cuda")
flush = timing.L2Flush(dev)
res = []
for rows, n, k in [(8, 131075, 2048), (1, 131075, 2048), (64, 131075, 2048)]:
    x, kv, tg = cell(rows, n, k, "decode", dev)
    for variant in ("torch_first", "torch_last", "no_torch", "own_ws"):
        graphs, idxs = [], []
        shared_idx = torch.empty(rows, k, dtype=torch.int32, device=dev)
        for i in range(4):
            idx = shared_idx if variant == "one_idx" else torch.empty(rows, k, dtype=torch.int32, device=dev)
            wsb = torch.zeros(W.workspace_bytes(rows, k), dtype=torch.uint8, device=dev) if variant == "own_ws" else None
            call = (lambda idx=idx, wsb=wsb: gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, workspace=wsb))
            g, _ = timing.capture(call)
            graphs.append(g); idxs.append(idx)
        if variant == "torch_last":
            g_t, _ = timing.capture(lambda: torch.topk(x, k, dim=1, sorted=False))
            allg = graphs + [g_t]
        elif variant == "no_torch":
            allg = graphs
        else:
            allg = [tg] + graphs
        ts = timing.time_graphs_interleaved(allg, flush, 60)
        us = [round(t.median_us, 2) for t in ts]
        if variant == "no_torch":
            us = [0.0] + us
        r = dict(rows=rows, n=n, k=k, variant=variant, us=us)
        res.append(r); print(json.dumps(r), flush=True)
        del graphs, allg
json.dump(res, open(os.path.join(os.environ.get("OUT", "."), "position.json"), "w"), indent=1)
print(f"\n{'cell':18} {'variant':12} gvr graphs in capture order (torch us)")
for r in res:
    t = r["us"][-1] if r["variant"] == "torch_last" else r["us"][0]
    g = r["us"][:-1] if r["variant"] == "torch_last" else r["us"][1:]
    print(f"{r['rows']}x{r['n']}x{r['k']:<6} {r['variant']:12} {' '.join(f'{v:7.2f}' for v in g)}   ({t:.1f})")
