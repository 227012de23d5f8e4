"""Does the capture-time workspace warning fire on a GPU (warm on one stream, capture on another)?"""
import warnings
import torch
import gvr_topk

dev = torch.device("cuda")
torch.manual_seed(0)
b, n, k = 8, 131075, 2048
logits = torch.randn(b, n, device=dev)
kv_lens = torch.full((b,), n, dtype=torch.int32, device=dev)
idx = torch.empty(b, k, dtype=torch.int32, device=dev)
gvr_topk.run_varlen(logits, None, kv_lens, idx, max_seq_len=n)  # warm on the current stream only
torch.cuda.synchronize()
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):  # a stream of its own: no workspace yet
        gvr_topk.run_varlen(logits, None, kv_lens, idx, max_seq_len=n)
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g2):
        gvr_topk.run_varlen(logits, None, kv_lens, idx, max_seq_len=n)
msgs = [str(x.message) for x in w if "workspace" in str(x.message)]
print("warnings during the two captures:", len(msgs))
for m in msgs:
    print("  ", m[:200])
idx.fill_(-7)
g.replay()
torch.cuda.synchronize()
ref = torch.topk(logits, k, dim=1).values
got = torch.gather(logits, 1, idx.long()).sort(dim=1, descending=True).values
print("replay exact:", torch.equal(ref.sort(dim=1, descending=True).values, got))
assert len(msgs) == 1, msgs
