"""``gvr-topk bench``: the benchmark's command line (also ``python benchmarks/bench_gvr_topk.py``).

Writes three files into ``--out``: ``gvr_topk_bench.json`` (provenance, targets, per-case medians and p20/p80 of
every arm), ``gvr_topk_bench.png`` (speed-up over torch.topk per rows x N) and ``gvr_topk_bench.log`` (the
printed table and summary). Exit status 0 when every checked output is exact, 1 otherwise, 2 on bad usage.
"""

import argparse
import json
import os
import sys
import time
from typing import List
from typing import Optional

JSON_NAME = "gvr_topk_bench.json"
PNG_NAME = "gvr_topk_bench.png"
LOG_NAME = "gvr_topk_bench.log"


def _int_list(text: str) -> List[int]:
    try:
        vals = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
    if not vals or any(v < 1 for v in vals):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return vals


def _str_list(text: str) -> List[str]:
    return [v for v in text.replace(" ", "").split(",") if v]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of the ``bench`` subcommand."""
    from .cases import SUITES
    from .runner import ARMS

    parser.add_argument("--quick", action="store_true",
                        help="a subset (~1/3: rows 1..512, N 16387 and 131075, K 512 and 2048, fewer extras)")
    parser.add_argument("--out", default="bench_out", metavar="DIR",
                        help=f"output folder for {JSON_NAME}, {PNG_NAME}, {LOG_NAME} (default: ./bench_out)")
    parser.add_argument("--rows", type=_int_list, default=None, help="grid rows, e.g. 1,64 (default: 1,8,64,512)")
    parser.add_argument("--n", type=_int_list, default=None,
                        help="grid N, e.g. 131075 (default: 4111,16387,65536,131075,262143)")
    parser.add_argument("--k", type=_int_list, default=None,
                        help="K values, e.g. 2048 (default: 512,1024,2048); also filters the varlen suite")
    parser.add_argument("--arms", type=_str_list, default=list(ARMS),
                        help=f"comma-separated subset of {','.join(ARMS)} (default: all)")
    parser.add_argument("--suites", type=_str_list, default=list(SUITES),
                        help=f"comma-separated subset of {','.join(SUITES)} (default: all)")
    parser.add_argument("--reps", type=int, default=25, help="timed repetitions per arm, median reported (>= 20 "
                        "for the targets; default 25)")
    parser.add_argument("--no-plot", action="store_true", help="do not write the PNG heatmap")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--device", default=None,
                        help="cuda, cuda:N or cpu (default: cuda when available). cpu: tiny shapes, one host-timed "
                             "call per arm, exactness checked (a smoke test; set TRITON_INTERPRET=1 to run the "
                             "Triton kernels through the interpreter)")
    parser.add_argument("--seed", type=int, default=0, help="base data seed (default 0)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes that compile the Triton kernels before timing starts (GPU runs; "
                             "default: min(8, CPUs / 2); 0: compile lazily in the timing process)")
    parser.add_argument("--from-json", metavar="FILE", default=None,
                        help="do not run: re-render the table, summary and heatmap of a saved run (no GPU needed)")
    parser.add_argument("--resume", action="store_true",
                        help=f"keep the cases already measured in --out's {JSON_NAME} (a run stopped by a time "
                             "limit, or one with another case selection) when it ran the same commit on the same "
                             "machine with the same arms, reps and seed; time only the other selected cases")
    parser.add_argument("--markdown", metavar="FILE", default=None,
                        help="also write a short BENCHMARKS.md-style summary of the run to FILE")


def _render_saved(args: argparse.Namespace) -> int:
    """``--from-json``: print a saved run and rewrite its heatmap / markdown."""
    from . import report

    with open(args.from_json) as f:
        doc = json.load(f)
    results = doc.get("cases", [])
    targets = report.evaluate_targets(results)
    prov = doc.get("provenance", {})
    print(f"saved run {args.from_json}: {prov.get('gpu') or prov.get('device')}, commit "
          f"{(prov.get('git_commit') or 'unknown')[:12]}, {prov.get('date')}")
    print(report.format_table(results))
    print(report.format_summary(results, targets, doc.get("notes", [])))
    if not args.no_plot:
        os.makedirs(args.out, exist_ok=True)
        png = os.path.join(args.out, PNG_NAME)
        if report.write_heatmap(png, results, f"gvr-topk / torch.topk, CUDA graph, cold L2 - {prov.get('gpu')}",
                                lambda m: print(f"note: {m}")):
            print(f"wrote {png}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(report.benchmarks_markdown(doc, os.path.basename(args.from_json), PNG_NAME))
        print(f"wrote {args.markdown}")
    return 0 if next(t for t in targets if t["key"] == "exact")["status"] == "PASS" else 1


def main(args: argparse.Namespace) -> int:
    """Run the benchmark described by ``args``; returns the exit status."""
    if args.from_json:
        return _render_saved(args)
    import torch

    from . import report
    from .cases import select_cases
    from .runner import Runner

    dev_name = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(dev_name)
    except RuntimeError:
        device = None
    if device is None or device.type not in ("cuda", "cpu"):
        print(f"gvr-topk bench: unsupported --device {dev_name!r} (cuda, cuda:N or cpu)", file=sys.stderr)
        return 2
    if device.type == "cuda":
        if not torch.cuda.is_available():
            print("gvr-topk bench: --device cuda requested but no CUDA GPU is visible (use --device cpu for a smoke "
                  "run)", file=sys.stderr)
            return 2
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(device)
    if args.reps < 1:
        print("gvr-topk bench: --reps must be >= 1", file=sys.stderr)
        return 2
    try:
        cases = select_cases(quick=args.quick, tiny=device.type == "cpu", suites=args.suites, rows=args.rows,
                             ns=args.n, ks=args.k, seed=args.seed)
        runner = Runner(device, args.arms, reps=args.reps, progress=not args.no_progress)
    except ValueError as e:
        print(f"gvr-topk bench: {e}", file=sys.stderr)
        return 2
    if not cases:
        print("gvr-topk bench: no cases selected", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)

    t0 = time.perf_counter()
    notes: List[str] = []
    prov = report.provenance(device)
    json_path = os.path.join(args.out, JSON_NAME)
    config = dict(quick=args.quick, rows=args.rows, n=args.n, k=args.k, arms=runner.arms, suites=args.suites,
                  reps=runner.reps, seed=args.seed, jobs=args.jobs,
                  flush_bytes=runner.flush.nbytes if runner.flush else None)
    kept: List[dict] = []
    if args.resume:
        try:
            kept, saved_date = report.resumable(json_path, prov, config, [c.name for c in cases])
        except ValueError as e:
            print(f"gvr-topk bench: {e}", file=sys.stderr)
            return 2
        config["resumed"] = dict(kept=len(kept), from_date=saved_date)
        notes.append(f"resumed: {len(kept)} of {len(cases)} cases kept from the run of {saved_date}"
                     if saved_date else "resumed: no saved run, every case timed")
    done_names = {r["name"] for r in kept}
    todo = [c for c in cases if c.name not in done_names]
    order = {c.name: i for i, c in enumerate(cases)}

    def with_kept(done: List[dict]) -> List[dict]:
        return sorted(kept + done, key=lambda r: order[r["name"]])

    if device.type == "cuda" and todo:
        from .precompile import precompile

        jobs = args.jobs if args.jobs is not None else min(8, max(1, (os.cpu_count() or 2) // 2))
        config["jobs"] = jobs
        compile_s, errors = precompile(todo, runner.arms, device, jobs, runner.num_sms)
        if jobs > 0:
            notes.append(f"precompiled kernels with {jobs} processes in {compile_s:.0f} s")
        notes += [f"precompile: {e}" for e in errors[:5]]

    def save_partial(done: List[dict]) -> None:
        # Rewritten after every input group, so a run stopped half-way still leaves its measurements.
        done = with_kept(done)
        report.write_json(json_path, prov, done, report.evaluate_targets(done), dict(config, partial=True), notes)

    results = with_kept(runner.run(todo, on_progress=save_partial) if todo else [])
    elapsed = time.perf_counter() - t0
    config["elapsed_s"] = elapsed

    notes = list(runner.notes) + notes
    if device.type == "cuda":
        setup = sum(a.get("setup_s") or 0.0 for r in results if r["name"] not in done_names
                    for a in r.get("arms", {}).values())
        notes.append(f"first calls + graph captures of the op arms took {setup:.0f} s in the timing process")
    else:
        notes.append("CPU smoke run: times are one host-clock call each (not comparable to the GPU targets)")
    if args.reps < 20:
        notes.append(f"--reps {args.reps} < 20: fewer repetitions than the targets' protocol asks for")
    notes.append(f"{len(todo)} cases in {elapsed:.0f} s")
    targets = report.evaluate_targets(results)

    head = (f"gvr-topk bench on {prov.get('gpu') or device} (driver {prov.get('driver')}, torch {prov['torch']}, "
            f"triton {prov['triton']}, commit {(prov.get('git_commit') or 'unknown')[:12]}, {prov['date']})")
    text = "\n".join([head, "times: median us; x torch = torch.topk / hinted; /floor = hinted / read floor", "",
                      report.format_table(results), report.format_summary(results, targets, notes)])
    printed: List[str] = []

    def note(msg: str) -> None:
        printed.append(f"note: {msg}")
        print(f"note: {msg}")

    report.write_json(json_path, prov, results, targets, config, notes)
    log_path = os.path.join(args.out, LOG_NAME)
    # Table and log before the heatmap: a first matplotlib import on a fresh machine can take minutes (font cache),
    # and a run cut short there must still have printed and logged its results.
    print(text, flush=True)
    with open(log_path, "w") as f:
        f.write(text + "\n")
    files = [json_path, log_path]
    if not args.no_plot:
        png = os.path.join(args.out, PNG_NAME)
        title = f"gvr-topk / torch.topk, CUDA graph, cold L2 - {prov.get('gpu') or device}"
        if report.write_heatmap(png, results, title, note):
            files.append(png)
    if args.markdown:
        with open(json_path) as f:
            doc = json.load(f)
        with open(args.markdown, "w") as f:
            f.write(report.benchmarks_markdown(doc, JSON_NAME, PNG_NAME))
        files.append(args.markdown)
    print("wrote " + ", ".join(files))
    if printed:
        with open(log_path, "a") as f:
            f.write("".join(p + "\n" for p in printed))
    exact = next(t for t in targets if t["key"] == "exact")
    return 0 if exact["status"] == "PASS" else 1


def run_from_argv(argv: Optional[List[str]] = None) -> int:
    """Parse ``argv`` with this subcommand's flags and run (the ``benchmarks/bench_gvr_topk.py`` entry)."""
    parser = argparse.ArgumentParser(prog="bench_gvr_topk", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return main(parser.parse_args(argv))
