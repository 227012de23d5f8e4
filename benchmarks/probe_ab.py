"""Developer probe (GPU): the working tree's ``gvr_topk`` against other git revisions of it, in ONE process.

Kernel changes (not tuning values, which ``probe_sample.py`` A/Bs) used to be compared in two processes, whose 1-row
cells differ by +-2 us from process to process. This probe freezes each revision of ``--rev`` (comma-separated;
the first is the base the ratios are taken against) as a package ``gvr_topk_r<i>`` in a temporary directory (``git
archive``; its torch op namespace renamed ``gvr_r<i>`` so all register), then, per cell, calls every package's
hint-free ``run_varlen`` on the same inputs, captures each into a CUDA graph and replays them interleaved
(balanced rounds of r0, r1, ..., new: ``timing.interleaved_order``; L2 flushed before each replay), times
torch.topk on its own after them, and checks every output exact. Arms are named by their revision as given;
``new`` is the working tree. Used for NOTES entries 15-16.

    python benchmarks/probe_ab.py --rev HEAD[,BRANCH,DIR,...] --cells 1x131075x2048,512x131075x2048 [--reps 30]
                                  [--data decode,equal,...] [--values] [--no-new] [--out DIR]

``--data`` takes several kinds at once (decode rows and the benchmark's adversarial kinds): each cell is timed on
each kind in the same process, so a change measured on decode rows is seen on rows of ties in the same call, with
no second compile (NOTES entry 25: a regression on rows of ties went unseen by decode-only probes).
"""

import argparse
import importlib
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

import probe_sample  # benchmarks/, the script's own directory
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def freeze(rev: str, into: str, i: int) -> None:
    """Write ``rev``'s ``gvr_topk`` to ``into/gvr_topk_r<i>``, its op namespace renamed ``gvr_r<i>``. ``rev`` is a
    git revision, or a directory holding a ``gvr_topk`` package (for machines that get the working tree without
    the repository's branches: export each revision there with ``git archive REV gvr_topk | tar -x -C DIR``)."""
    dest = os.path.join(into, f"gvr_topk_r{i}")
    if os.path.isdir(os.path.join(rev, "gvr_topk")):
        shutil.copytree(os.path.join(rev, "gvr_topk"), dest, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    else:
        archive = subprocess.run(["git", "-C", REPO, "archive", rev, "gvr_topk"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
        os.rename(os.path.join(into, "gvr_topk"), dest)
    ops = os.path.join(into, f"gvr_topk_r{i}", "ops.py")
    with open(ops) as fh:
        text = fh.read()
    if 'NAMESPACE = "gvr"\n' not in text:
        raise SystemExit(f"probe_ab: {rev}'s ops.py has no NAMESPACE line to rename")
    with open(ops, "w") as fh:
        fh.write(text.replace('NAMESPACE = "gvr"\n', f'NAMESPACE = "gvr_r{i}"\n'))


def arm_name(rev: str) -> str:
    """A revision's arm name: the revision as given, a directory by its last component."""
    return os.path.basename(rev.rstrip("/")) if os.path.isdir(rev) else rev


def packages(base_dir: str, revs: list, new: bool) -> dict:
    """Arm name -> package: the frozen revisions in ``--rev`` order, then the working tree (``new``)."""
    if base_dir not in sys.path:
        sys.path.insert(0, base_dir)
    pk = {arm_name(rev): importlib.import_module(f"gvr_topk_r{i}") for i, rev in enumerate(revs)}
    if new:
        import gvr_topk

        pk["new"] = gvr_topk
    return pk


def parse_data(text: str) -> list:
    """The kinds of ``--data`` (comma-separated, each ``decode`` or one of the benchmark's adversarial kinds), in the
    order given; a clear error for an unknown or repeated kind."""
    kinds = text.split(",")
    known = ("decode",) + probe_sample.ADVERSARIAL_KINDS
    bad = [d for d in kinds if d not in known]
    if bad or len(set(kinds)) != len(kinds):
        raise SystemExit(f"probe_ab: --data expects distinct kinds among {', '.join(known)}; got {text!r}")
    return kinds


def _compile(job) -> str:
    """Worker: one call of one package on a cell's shape, so its kernels land in Triton's disk cache."""
    base_dir, revs, new, name, (rows, n, k), values = job
    try:
        m = packages(base_dir, revs, new)[name]
        x = torch.randn(rows, n, device="cuda")
        kv = torch.full((rows,), n, dtype=torch.int32, device="cuda")
        idx = torch.empty(rows, k, dtype=torch.int32, device="cuda")
        val = torch.empty(rows, k, device="cuda") if values else None
        m.run_varlen(x, None, kv, idx, values=val, max_seq_len=n)
        torch.cuda.synchronize()
        return ""
    except Exception as e:  # reported; the timing process compiles it again itself
        return f"{name} {rows}x{n}x{k}: {type(e).__name__}: {str(e)[:300]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="HEAD", help="comma-separated git revisions to compare (default HEAD); the first "
                    "is the base of the ratios")
    ap.add_argument("--no-new", action="store_true", help="time the revisions only, not the working tree")
    ap.add_argument("--cells", required=True, help="comma-separated ROWSxNxK cells")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--data", default="decode", help="comma-separated: decode rows (default) and / or the "
                    "benchmark's adversarial kinds, e.g. decode,equal,neg_inf_tail; every cell runs on each")
    ap.add_argument("--values", action="store_true", help="also write (and check) the values output")
    ap.add_argument("--jobs", type=int, default=8, help="worker processes that compile first (0: none)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    cells = [tuple(int(v) for v in c.split("x")) for c in args.cells.split(",")]
    kinds = parse_data(args.data)
    revs = args.rev.split(",")
    if len(set(revs)) != len(revs) or "new" in revs or len(revs) + (not args.no_new) < 2:
        raise SystemExit(f"probe_ab: --rev needs distinct revisions other than 'new', two arms in all; got {revs}")
    base_dir = tempfile.mkdtemp(prefix="gvr_ab_")
    for i, rev in enumerate(revs):
        freeze(rev, base_dir, i)
    names = [arm_name(r) for r in revs] + ([] if args.no_new else ["new"])
    if len(set(names)) != len(names):
        raise SystemExit(f"probe_ab: two revisions share an arm name: {names}")
    if args.jobs > 0:
        work = [(base_dir, revs, not args.no_new, name, c, args.values) for name in names for c in cells]
        with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("spawn")) as pool:
            for err in pool.map(_compile, work):
                if err:
                    print("precompile:", err, flush=True)
    from gvr_topk.bench import timing
    from gvr_topk.bench.exact import check_exact_fast

    pk = packages(base_dir, revs, not args.no_new)
    dev = torch.device("cuda")
    flush = timing.L2Flush(dev)
    results = []
    for (rows, n, k), data in ((c, d) for c in cells for d in kinds):
        x, kv, torch_graph = probe_sample.cell(rows, n, k, data, dev)
        rec = dict(rows=rows, n=n, k=k, data=data, family=pk[names[-1]].route(rows, n, n, k).family,
                   us={}, exact={})
        graphs, outs = {}, {}
        for name, m in pk.items():
            idx = torch.empty(rows, k, dtype=torch.int32, device=dev)
            val = torch.empty(rows, k, device=dev) if args.values else None
            call = (lambda m=m, idx=idx, val=val: m.run_varlen(x, None, kv, idx, values=val, max_seq_len=n))
            graphs[name], _ = timing.capture(call)
            outs[name] = (idx, val)
        # Replays interleaved in balanced rounds: no arm gains or loses by its place or the arm before it (NOTES
        # entry 42: a sequential order biased an arm by 1-5 us on the H200). torch.topk apart, after them: the arm
        # replayed right after it ran 1-3 us slower on split cells (NOTES entry 43).
        for name, t in zip(graphs, timing.time_graphs_interleaved(list(graphs.values()), flush, args.reps)):
            rec["us"][name] = round(t.median_us, 2)
        rec["us"]["torch"] = round(timing.time_graph(torch_graph, flush, args.reps).median_us, 2)
        for name in pk:
            idx, val = outs[name]
            idx.fill_(-7)
            graphs[name].replay()
            torch.cuda.synchronize()
            rec["exact"][name] = not check_exact_fast(x, idx, kv_lens=kv, values=val)
        results.append(rec)
        print(json.dumps(rec), flush=True)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, "probe_ab.json"), "w") as fh:
                json.dump(dict(rev=args.rev, cells=results), fh, indent=1)
    base = names[0]
    for other in names[1:]:
        print(f"\n{other} / {base} per cell (us, hint-free, graph replay, cold L2): "
              + ", ".join(f"{r['rows']}x{r['n']}x{r['k']} {r['data']} {r['us'][other] / r['us'][base]:.3f}"
                          for r in results))
    return probe_sample.summarize(results, names)


if __name__ == "__main__":
    sys.exit(main())
