"""Developer probe: device time of each kernel of the streaming family (threshold, stage, select) per launch chunk.

    python benchmarks/probe_stream_kernels.py [--out DIR] [--cells 64x131075x2048,512x16387x2048] [--data equal]
                                                [--arms ,P0/W0]
    ncu --kernel-name _gvr_stage_kernel --launch-skip 3 --launch-count 1 --set full \
        python benchmarks/probe_stream_kernels.py --plain --cells 512x131075x2048

Runs ``gvr_topk.run_varlen`` (hint-free) on the benchmark's decode data under ``torch.profiler`` and prints the
median device time of each kernel name over 10 calls (``gvr_topk.bench.timing.quantile``, as the benchmark's
medians). The calls run back to back, so rows that fit the L2 cache (64 x 131075 = 33 MB) are read from it: use the
numbers to split a launch into its kernels, not as the benchmark's cold-L2 times. ``--data KIND`` uses the
benchmark's adversarial rows of that kind (e.g. ``equal``: where rows of ties spend their time) instead of its
decode rows. Writes ``stream_kernel_times.json`` to ``--out``. ``--plain`` only makes the calls (no profiler), for
running under Nsight Compute, whose profiling and torch.profiler's cannot share the GPU's counters. A kernel
launched more than once per call (the select's accept and ladder launches) is reported per launch
(``_gvr_select_kernel#0``, ``#1``). ``--arms ",P0/W0"`` times each cell with the defaults and then with other tuning
values (``probe_sample.py``'s arm notation; here programmatic dependent launch and per-row waits off, so the kernels
run one after the other and each span is the kernel's own latency rather than its overlap with its neighbours).
"""

import argparse
import json
import os
import sys
from collections import defaultdict

import probe_sample  # benchmarks/, the script's own directory
import torch
from torch.profiler import ProfilerActivity
from torch.profiler import profile

import gvr_topk
from gvr_topk.bench import timing
from gvr_topk.bench.cases import ADVERSARIAL_KINDS
from gvr_topk.bench.cases import Case
from gvr_topk.bench.data import make_inputs

DEFAULT_CELLS = "64x131075x2048,512x16387x2048,512x131075x2048"


def kernel_times(rows: int, n: int, k: int, calls: int = 10, plain: bool = False, data: str = "decode") -> dict:
    """Median device microseconds per kernel name over ``calls`` calls of one cell (``plain``: the calls only,
    nothing measured; returns an empty dict). ``data``: ``"decode"`` or one of the benchmark's adversarial kinds."""
    dev = torch.device("cuda")
    suite = "grid" if data == "decode" else "adversarial"
    inp = make_inputs(Case(suite, rows, n, k, data=data), k_max=2048, device=dev)
    x, kv = inp.logits, inp.kv_lens
    idx = torch.empty(rows, k, dtype=torch.int32, device=dev)
    for _ in range(3):
        gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n)
    torch.cuda.synchronize()
    if plain:
        for _ in range(calls):
            gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n)
        torch.cuda.synchronize()
        return {}
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n)
        torch.cuda.synchronize()
    events = defaultdict(list)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            events[e.name].append((e.time_range.start, getattr(e, "device_time", None) or e.cuda_time))
    out = {}
    for name, v in events.items():
        # A kernel launched several times per call (the select's accept and ladder launches) is reported per
        # launch, in call order ("name#0", "name#1"), not as one median over different launches.
        times = [t for _, t in sorted(v)]
        per_call = max(len(times) // calls, 1)
        for i in range(per_call):
            out[name if per_call == 1 else f"{name}#{i}"] = round(timing.quantile(times[i::per_call], 0.5), 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--cells", default=DEFAULT_CELLS, help=f"comma-separated ROWSxNxK cells (default {DEFAULT_CELLS})")
    ap.add_argument("--plain", action="store_true", help="make the calls without torch.profiler (for ncu)")
    ap.add_argument("--data", default="decode", choices=("decode",) + ADVERSARIAL_KINDS,
                    help="the benchmark's decode rows (default) or one of its adversarial kinds, e.g. equal")
    ap.add_argument("--arms", default="", help="comma-separated tuning arms in probe_sample.py's notation, the "
                                               "empty arm being the defaults (e.g. ',P0/W0'); default: the defaults")
    args = ap.parse_args()
    arms = args.arms.split(",") if args.arms else [""]
    settings = {arm: probe_sample.parse_arm(arm) if arm else {} for arm in arms}  # bad arms fail before any call
    res = {}
    for cell in args.cells.split(","):
        rows, n, k = (int(v) for v in cell.split("x"))
        for arm in arms:
            name = f"{cell}/{arm}" if arm else cell
            with probe_sample.tuned(settings[arm]):
                res[name] = kernel_times(rows, n, k, plain=args.plain, data=args.data)
            print(name, res[name], flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "stream_kernel_times.json"), "w") as fh:
            json.dump(res, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
