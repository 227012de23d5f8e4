"""Cost of the default workspace's zeroing memset inside a graph: the same call captured on a stream with no
workspace yet (memset in the graph) and on a warmed stream (timing.capture), timed interleaved."""
import json, os, sys
import torch
import gvr_topk
from gvr_topk.bench import timing
from benchmarks.probe_sample import cell

dev = torch.device("cuda")
flush = timing.L2Flush(dev)
rows_out = []
for rows, n, k in [(1, 131075, 2048), (8, 131075, 2048), (64, 131075, 2048), (512, 131075, 512), (8, 16387, 512)]:
    x, kv, tg = cell(rows, n, k, "decode", dev)
    idx_a = torch.empty(rows, k, dtype=torch.int32, device=dev)
    idx_b = torch.empty(rows, k, dtype=torch.int32, device=dev)
    call_a = lambda: gvr_topk.run_varlen(x, None, kv, idx_a, max_seq_len=n)
    call_b = lambda: gvr_topk.run_varlen(x, None, kv, idx_b, max_seq_len=n)
    call_a(); torch.cuda.synchronize()  # compiles on the default stream
    cold = torch.cuda.Stream()
    cold.wait_stream(torch.cuda.current_stream())
    ga = torch.cuda.CUDAGraph()
    with torch.cuda.graph(ga, stream=cold):  # cold stream: its workspace is made (and zeroed) in the graph
        call_a()
    torch.cuda.synchronize()
    gb, _ = timing.capture(call_b)
    ts = timing.time_graphs_interleaved([tg, ga, gb], flush, 60)
    ok = []
    for g, idx in ((ga, idx_a), (gb, idx_b)):
        idx.fill_(-7); g.replay(); torch.cuda.synchronize()
        from gvr_topk.bench.exact import check_exact_fast
        ok.append(not check_exact_fast(x, idx, kv_lens=kv))
    r = dict(rows=rows, n=n, k=k, family=gvr_topk.route(rows, n, n, k).family, torch=ts[0].median_us,
             memset_in_graph=ts[1].median_us, warmed=ts[2].median_us, exact=ok)
    rows_out.append(r)
    print(json.dumps(r), flush=True)
out = os.environ.get("OUT", ".")
json.dump(rows_out, open(os.path.join(out, "memset_cost.json"), "w"), indent=1)
print(f"{'rows':>4} {'n':>7} {'k':>5} {'family':7} {'memset in graph':>15} {'warmed':>8} {'diff':>6}")
for r in rows_out:
    print(f"{r['rows']:>4} {r['n']:>7} {r['k']:>5} {r['family']:7} {r['memset_in_graph']:>15.2f} {r['warmed']:>8.2f} "
          f"{r['memset_in_graph'] - r['warmed']:>6.2f} exact={r['exact']}")
