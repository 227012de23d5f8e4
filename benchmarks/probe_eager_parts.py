"""Developer probe (GPU only): where the host time of a hot eager call goes, per kernel family and launch form.

    python benchmarks/probe_eager_parts.py [--out DIR] [--reps N]

For each cell (1 row, hint-free, ``max_seq_len`` given, library workspace), after two calls that prepare the launch
and build its direct launcher, the median host microseconds of:

* ``call/idle``: ``gvr_topk.run_varlen`` started on an idle GPU (``torch.cuda.synchronize()`` before each call, as
  the benchmark's eager arm does);
* ``call/busy``: the same call made back to back (the GPU still busy with the previous ones);
* ``sig``: building the call signature and looking up its prepared launch (``api._signature`` + the cache hit);
* ``launch/idle``, ``launch/busy``: the prepared direct launcher alone (``entry.direct``), the pointers given;
* ``torch/idle``: a one-element ``torch.Tensor.add_`` on an idle GPU (one plain kernel launch from Python, the
  floor of any eager launch).

Cells: the split family's cooperative form (1 x 16387 and 1 x 131075 K=2048), the same rows in the plain form
(``tuning.SPLIT_COOP = "off"``), the register family (1 x 4111), the streaming family forced (1 x 131075, three
launches). Prints a table; ``--out`` also writes ``probe_eager_parts.json``.
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

import gvr_topk
from gvr_topk import api
from gvr_topk import tuning


def _host_us(fn, reps, idle):
    samples = []
    for _ in range(reps):
        if idle:
            torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1e3)
    torch.cuda.synchronize()
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=300)
    args = ap.parse_args()
    dev = torch.device("cuda")
    cells = [("split coop", 16387, 2048, None, "fused"), ("split coop", 131075, 2048, None, "fused"),
             ("split plain", 16387, 2048, None, "off"), ("split plain", 131075, 2048, None, "off"),
             ("reg", 4111, 2048, None, "fused"), ("stream", 131075, 2048, "stream", "fused")]
    one = torch.zeros(1, device=dev)
    res = []
    for name, n, k, family, coop in cells:
        tuning.SPLIT_COOP = coop
        gvr_topk.clear_launch_cache()
        logits = torch.randn(1, n, device=dev)
        kv = torch.tensor([n], dtype=torch.int32, device=dev)
        out = torch.empty(1, k, dtype=torch.int32, device=dev)

        def call():
            gvr_topk.run_varlen(logits, None, kv, out, max_seq_len=n, family=family)

        call()
        call()
        sig = api._signature(logits, None, kv, out, None, 1, 1, n, None, family, None)
        prep = api._PREPARED.get(sig)
        entry = prep.entry
        stream = torch.cuda.current_stream().cuda_stream
        p_i = out.data_ptr()
        ptrs = (p_i, p_i, logits.data_ptr(), p_i, kv.data_ptr())
        got = entry.ws_views.get(stream) if entry.ws_args else None
        ws_ptrs = got[1] if got is not None else ()
        direct = entry.direct

        def sig_only():
            api._PREPARED.get(api._signature(logits, None, kv, out, None, 1, 1, n, None, family, None))

        r = dict(cell=f"{name} 1x{n} K={k}", plan=entry.plan.family, coop=entry.scalars.get("COOP"),
                 direct=direct is not None)
        r["call/idle"] = _host_us(call, args.reps, True)
        r["call/busy"] = _host_us(call, args.reps, False)
        r["sig"] = _host_us(sig_only, args.reps, False)
        if direct is not None:
            r["launch/idle"] = _host_us(lambda: direct(stream, *ptrs, *ws_ptrs), args.reps, True)
            r["launch/busy"] = _host_us(lambda: direct(stream, *ptrs, *ws_ptrs), args.reps, False)
        r["torch/idle"] = _host_us(lambda: one.add_(1), args.reps, True)
        res.append(r)
    tuning.SPLIT_COOP = "fused"
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "probe_eager_parts.json"), "w") as f:
            json.dump(res, f, indent=1)
    cols = ("call/idle", "call/busy", "sig", "launch/idle", "launch/busy", "torch/idle")
    print(f"{'cell (host us, median)':34s} " + " ".join(f"{c:>11s}" for c in cols))
    for r in res:
        print(f"{r['cell']:34s} " + " ".join(f"{r.get(c, float('nan')):11.1f}" for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
