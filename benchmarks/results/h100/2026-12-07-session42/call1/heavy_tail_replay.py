"""Host replay of the GPU's heavy_tail rows (8 x 131075, K=2048; saved by call 1 with ``make_inputs`` on CUDA):
per setting of the sample threshold's group maxima, each row's staged count and the cooperative split form's
crossing bin (``reference.coop_crossing_bin``). A row staged under K goes to the retry ladder.

    PYTHONPATH=. python benchmarks/results/h100/2026-12-07-session42/call1/heavy_tail_replay.py ROWS.pt
"""

import dataclasses
import sys

import torch

import gvr_topk
from gvr_topk import reference
from gvr_topk import tuning

logits = torch.load(sys.argv[1])["logits"]
rows, n = logits.shape
k = 2048
base = gvr_topk.route(rows, n, n, k)
print(base)
keys = reference.order_keys(logits)
rank = reference.sample_rank(n, base.aim, base.sample)
for m in (0, 256, 512):
    plan = dataclasses.replace(base, maxima=m)
    out = []
    for r in range(rows):
        thr = reference.sample_threshold(keys[r], rank, plan.sample, tuning.SAMPLE_GROUP, m)
        c = int((keys[r] >= thr).sum())
        if c < k:
            out.append(f"{c}/UNDER_K/-")
            print(f"  m{m} row {r}: count {c} < K; maxima rank "
                  f"{reference.maxima_rank(rank, plan.sample, m) if 0 < m < plan.sample else rank}")
            continue
        inb, need = reference.coop_crossing_bin(keys[r], k, plan)
        out.append(f"{c}/{inb}/{need}")
    print(f"m{m}: count/crossing-bin/need per row:", " ".join(out), "CROSS_CAP", tuning.CROSS_CAP)
