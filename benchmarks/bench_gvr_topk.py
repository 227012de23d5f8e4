"""Benchmark of gvr-topk against torch.topk and the one-pass read floor (thin entry: same as ``gvr-topk bench``).

    python benchmarks/bench_gvr_topk.py --quick --out OUT      # == gvr-topk bench --quick --out OUT
    python -m benchmarks.bench_gvr_topk --out OUT               # full grid

See benchmarks/README.md for the protocol and the columns.
"""

import os
import sys

if __name__ == "__main__":
    # A CPU smoke run needs Triton's interpreter, which must be chosen before triton is first imported.
    argv = sys.argv[1:]
    wants_cpu = "cpu" in [a.split("=", 1)[-1] for a in argv if a.startswith("--device")] or (
        "--device" in argv and argv[argv.index("--device") + 1:][:1] == ["cpu"])
    if wants_cpu:
        os.environ.setdefault("TRITON_INTERPRET", "1")
    from gvr_topk.bench.cli import run_from_argv

    sys.exit(run_from_argv(argv))
