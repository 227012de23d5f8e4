"""Run test_same_index_set_across_runs_families_and_modes's body for one shape, printing each call's wall time
(compile vs run), to tell a slow test from a hung one."""
import sys
import time

import torch

sys.path.insert(0, "tests/unittest/_torch/thop/parallel")
import test_gvr_robustness as t  # noqa: E402

import gvr_topk  # noqa: E402

k, n, rows = (int(v) for v in sys.argv[1].split("-"))
real = gvr_topk.run_varlen
t0 = time.perf_counter()
calls = [0]


def timed(*a, **kw):
    s = time.perf_counter()
    out = real(*a, **kw)
    torch.cuda.synchronize()
    calls[0] += 1
    dt = time.perf_counter() - s
    if dt > 0.5 or calls[0] % 20 == 0:
        print(f"call {calls[0]:4d} family={kw.get('family')} hint={'none' if a[1] is None else 'yes'} "
              f"values={kw.get('values') is not None} dtype={a[0].dtype} {dt:7.2f} s (t={time.perf_counter() - t0:.0f})",
              flush=True)
    return out


gvr_topk.run_varlen = timed
t.test_same_index_set_across_runs_families_and_modes(k, n, rows)
print(f"DET-OK {sys.argv[1]} calls={calls[0]} total={time.perf_counter() - t0:.1f} s", flush=True)
