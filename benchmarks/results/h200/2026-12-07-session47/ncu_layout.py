"""One eager call (after a warm one) of each arm on each cell, for ncu: stall reasons per arm."""
import sys
sys.path.insert(0, "benchmarks")
import torch
import gvr_topk
from probe_sample import parse_arm, tuned, parse_cell, call_kwargs
from gvr_topk.bench.data import make_inputs

arms = sys.argv[1].split(",")
cells = sys.argv[2].split(";")
dev = torch.device("cuda")
for cell in cells:
    spec, _, data = cell.partition(":")
    case = parse_cell(spec, data or "decode")
    inp = make_inputs(case, k_max=2048, device=dev)
    for arm in arms:
        idx = torch.empty(case.rows, case.k, dtype=torch.int32, device=dev)
        with tuned(parse_arm(arm)):
            for _ in range(2):
                gvr_topk.run_varlen(inp.logits, None, inp.kv_lens, idx, **call_kwargs(case))
                torch.cuda.synchronize()
        print("ORDER", cell, arm, flush=True)
