import sys, torch, gvr_topk
rows, n, k = (int(v) for v in sys.argv[1].split("x"))
torch.manual_seed(0)
x = torch.randn(rows, n, device="cuda") - 2.0
kv = torch.full((rows,), n, dtype=torch.int32, device="cuda")
idx = torch.empty(rows, k, dtype=torch.int32, device="cuda")
for _ in range(3):
    gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n)
torch.cuda.synchronize()
got = torch.gather(x, 1, idx.long()).sort(1).values
ref = torch.topk(x, k, dim=1).values.sort(1).values
print(sys.argv[1], "exact", bool(torch.equal(got, ref)))
