"""Developer probe: A/B of the sample-threshold and select tuning on the benchmark's decode data.

Each arm is the public ``run_varlen`` (hint-free, ``max_seq_len`` given) with some ``gvr_topk.tuning`` values
replaced, on the same inputs in one process; each is captured into its own CUDA graph and replayed with the L2
flushed (the benchmark's timing), and its output is checked exact after the timed replays. ``torch.topk`` on the
same rows is timed too. An arm is written as ``/``-separated settings:

* ``g<N>``: ``SAMPLE_GROUP`` (adjacent scores per sample group),
* ``m<N>``: ``AIM_MARGIN`` (survivors aimed at: K + N),
* ``a<N>``: ``SAMPLE_ABOVE`` (sampled scores above the threshold; sets the sample size),
* ``x<N>``: ``SAMPLE_MAX`` (largest sample),
* ``t<N>``: ``SELECT_MIN_TILE`` (smallest select tile, lanes),
* ``w<N>``: ``SELECT_WARPS`` (warps of the streaming family's select kernel),
* ``c<N>``: ``CAP_BY_K = ((2048, N),)`` (staging capacity for every K),
* ``f<N>``: ``AIM_MAX_FRACTION = N / 100`` (the aim's cap as a share of the capacity; ``c4096`` needs ``f75``),
* ``p<N>``: ``STREAM_TARGET_PROGRAMS`` (staging programs per chunk of rows: sets the streaming family's split),
* ``L<N>``: ``STREAM_MIN_SPLIT`` (fewest staging programs per row of the streaming family; 0 = no floor),
* ``D<N>``: ``SPLIT_BALANCE`` (the split family's staging shared out by row length on varlen launches: 1 on, 0 off;
  its gain shows on varlen cells, e.g. ``--cells varlen/b4xnn4/cr4/131072/k2048``),
* ``s<N>``: ``STREAM_WARPS`` (warps of the staging kernel),
* ``i<N>``: ``STREAM_TILE`` (scores per staging loop iteration),
* ``q<N>``: ``SPLIT_TARGET_PROGRAMS`` (programs of a split launch, all rows together),
* ``u<N>``: ``SPLIT_MAX_ROWS`` (most rows routed to the split family),
* ``k<N>``: ``SPLIT_MIN_CHUNK`` (fewest scores per split program),
* ``n<N>``: ``SELECT_MANY_MAXNREG`` (register cap per thread of the select past one wave; 0 = none),
* ``v<N>``: ``SELECT_MANY_WARPS`` (warps of that select; since NOTES entry 28 rows on the long staging tile only),
* ``N<N>``, ``V<N>``: ``SELECT_MANY_SHORT_MAXNREG``, ``SELECT_MANY_SHORT_WARPS`` (the same for rows on the short
  staging tile),
* ``B<N>``: ``STREAM_ACCEPT_LARGE_BIN`` (the streaming accept launch refines a crossing bin past CROSS_CAP: 1; passes
  it to the ladder launch: 0),
* ``y<N>``: ``SPLIT_SHORT_MAX_N`` (longest rows that go to ``split`` up to ``SPLIT_MAX_ROWS_SHORT`` rows),
* ``r<N>``: ``STREAM_CHUNK_ROWS`` (rows per launch chunk of the streaming family),
* ``o<N>``: ``STREAM_MIN_CHUNK`` (fewest scores per staging program),
* ``b<N>``: ``THRESHOLD_WARPS`` (warps of the streaming family's threshold kernel),
* ``l<N>``: ``STREAM_STAGE_MAXNREG`` (register cap per thread of the staging kernel; 0 = none),
* ``d<N>``: ``SPLIT_TILE`` (scores per staging loop iteration of the split family),
* ``e<N>``: ``SPLIT_WARPS`` (warps of a split program),
* ``h<N>``: ``TIE_RUNG`` (1: the retry ladder's tie rung on; 0: off),
* ``j<N>``: ``SELECT_CHUNK`` (the streaming select in loops over N-candidate chunks; 0: on one tile),
* ``z<N>``: ``STREAM_STAGE_SPARSE`` (the streaming stage kernel stores survivors only: 0 off, 1 on, 2 with a
  look-ahead, 3 with the look-ahead and each tile's reservation read a tile later),
* ``A<N>``: ``STREAM_SELECT_APART`` (the streaming select as an accept launch and a ladder launch: 0 off, 2 the
  accept launch on the SELECT_MIN_TILE- and CAP/2-lane tiles, 3 on the CAP/2-lane tile alone),
* ``W<N>``: ``STREAM_ROW_WAIT`` (the streaming stage and select programs wait for their own row's flag instead of
  the whole grid before: 1 on, 0 off).
* ``P<N>``: ``STREAM_PDL`` (the streaming family's later launches as programmatic dependents: 1 on, 0 off).
* ``M<N>``: ``SPLIT_COOP_AIM_ABOVE`` (the split family's cooperative form for rows aiming at more survivors),
* ``S<N>``: ``SPLIT_COOP_MIN_SPLIT`` (fewest programs per row of the cooperative form),
* ``H<N>``: ``SPLIT_COOP_WINDOW`` (the split family's cooperative form counts the row histogram while staging,
  over the sample's window: 1 on, 0 off).
* ``E<N>``: ``SPLIT_COOP_LOW_RUNG`` (the cooperative form's programs share the retry ladder's first rung: 1 on,
  0 off).
* ``O<N>``: ``SPLIT_COOP_OUTLINE`` (the cooperative form's rare paths compiled as calls, not inlined: 1 on, 0 off).
* ``G<N>``, ``R<N>``: ``SAMPLE_MAXIMA``, ``SAMPLE_MAXIMA_MAX_ROWS`` (the sample threshold's levels over N group
  maxima of the sample, in launches of at most R rows; ``R0``: never). A launch parameter, so in one tree:
  ``--arms R0,G512/R128``.

``defaults`` (or an empty arm: ``--arms ,z3``) is today's tuning. The default arms are NOTES entry 8's (``g8/m2048``
was the setting before it, ``g1/m1024`` the one after).
A cell's arms are captured first and then timed with their replays interleaved in balanced rounds
(``timing.time_graphs_interleaved``), so no arm gains or loses by its place or by the arm before it; torch.topk is
timed on its own afterwards.
Prints a table last and writes ``probe_sample.json`` to ``--out`` after every cell (a run cut short keeps its cells).
``--data KIND`` times the benchmark's adversarial rows of that kind instead of its decode rows (for the tie rung:
``--data equal --arms h0,h1 --cells 8x131075x2048``).

Worker processes compile every (arm, cell) first (``--jobs``, default 8), so the timing process mostly loads
kernels from Triton's disk cache (the first run compiled in the timing process and was cut after 5 cells).

    python benchmarks/probe_sample.py [--out DIR] [--reps 15] [--jobs 8] [--arms g1/m1024,g1/m1024/t2048]
                                      [--cells 1x131075x512,64x131075x2048,varlen/b4xnn4/cr4/131072/k2048]
"""

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor

import torch

import gvr_topk
from gvr_topk import tuning
from gvr_topk.bench import timing
from gvr_topk.bench.cases import ADVERSARIAL_KINDS
from gvr_topk.bench.cases import Case
from gvr_topk.bench.data import make_inputs
from gvr_topk.bench.exact import check_exact_fast

KNOBS = {"g": "SAMPLE_GROUP", "m": "AIM_MARGIN", "a": "SAMPLE_ABOVE", "x": "SAMPLE_MAX", "t": "SELECT_MIN_TILE",
         "w": "SELECT_WARPS", "c": "CAP_BY_K", "f": "AIM_MAX_FRACTION", "p": "STREAM_TARGET_PROGRAMS",
         "s": "STREAM_WARPS", "i": "STREAM_TILE", "q": "SPLIT_TARGET_PROGRAMS",
         "u": "SPLIT_MAX_ROWS", "k": "SPLIT_MIN_CHUNK", "n": "SELECT_MANY_MAXNREG",
         "v": "SELECT_MANY_WARPS", "y": "SPLIT_SHORT_MAX_N",
         "r": "STREAM_CHUNK_ROWS", "o": "STREAM_MIN_CHUNK", "b": "THRESHOLD_WARPS", "l": "STREAM_STAGE_MAXNREG",
         "d": "SPLIT_TILE", "e": "SPLIT_WARPS", "h": "TIE_RUNG", "j": "SELECT_CHUNK",
         "z": "STREAM_STAGE_SPARSE", "A": "STREAM_SELECT_APART", "W": "STREAM_ROW_WAIT",
         "H": "SPLIT_COOP_WINDOW", "M": "SPLIT_COOP_AIM_ABOVE", "S": "SPLIT_COOP_MIN_SPLIT",
         "N": "SELECT_MANY_SHORT_MAXNREG", "V": "SELECT_MANY_SHORT_WARPS", "B": "STREAM_ACCEPT_LARGE_BIN",
         "P": "STREAM_PDL", "L": "STREAM_MIN_SPLIT", "D": "SPLIT_BALANCE", "G": "SAMPLE_MAXIMA",
         "R": "SAMPLE_MAXIMA_MAX_ROWS", "E": "SPLIT_COOP_LOW_RUNG", "O": "SPLIT_COOP_OUTLINE"}
#: Settings whose tuning value is not the integer itself.
_VALUE = {"c": lambda v: ((2048, v),), "f": lambda v: v / 100, "h": bool, "P": bool}
DEFAULT_ARMS = "g8/m2048,g1/m2048,g1/m1024,g2/m1024"
#: The arm that changes nothing (an empty arm in ``--arms`` is this one).
DEFAULTS_ARM = "defaults"
DEFAULT_CELLS = ",".join(f"{rows}x{n}x{k}" for n in (16387, 131075, 262143) for rows in (1, 8, 64, 512)
                         for k in (512, 2048) if not (n == 262143 and rows in (8, 512)))


def parse_arm(spec: str) -> dict:
    """``"g1/m1024/c4096"`` -> ``{"SAMPLE_GROUP": 1, "AIM_MARGIN": 1024, "CAP_BY_K": ((2048, 4096),)}``;
    ``"defaults"`` (or an empty arm, as in ``--arms ,z3``) -> ``{}``, today's tuning."""
    if spec in ("", DEFAULTS_ARM):
        return {}
    out = {}
    for part in spec.split("/"):
        if not part or part[0] not in KNOBS or not part[1:].isdigit():
            raise SystemExit(f"probe_sample: arm setting {part!r} of {spec!r}: expected one of "
                             f"{', '.join(k + '<int>' for k in KNOBS)}")
        out[KNOBS[part[0]]] = _VALUE.get(part[0], int)(int(part[1:]))
    return out


@contextlib.contextmanager
def tuned(values: dict):
    """Run with other tuning values: prepared launches are dropped so plans and launch arguments are rebuilt."""
    saved = {name: getattr(tuning, name) for name in values}
    for name, v in values.items():
        setattr(tuning, name, v)
    gvr_topk.clear_launch_cache()
    try:
        yield
    finally:
        for name, v in saved.items():
            setattr(tuning, name, v)
        gvr_topk.clear_launch_cache()


_VARLEN_CELL = re.compile(r"varlen/b(\d+)xnn(\d+)/cr(\d+)/(\d+)/k(\d+)")


def parse_cell(spec: str, data: str = "decode") -> Case:
    """A probe cell: ``"ROWSxNxK"`` -> rows of ``data`` (decode rows, or an adversarial kind) at full length N;
    a varlen case of the benchmark by its name, ``"varlen/b4xnn4/cr4/131072/k2048"`` -> that batch (decode rows,
    next_n rows per request, lengths up to N columns after the compression ratio), the benchmark's own inputs."""
    m = _VARLEN_CELL.fullmatch(spec)
    if m:
        b, next_n, cr, n, k = (int(v) for v in m.groups())
        return Case("varlen", b, n, k, next_n=next_n, compress_ratio=cr)
    parts = spec.split("x")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise SystemExit(f"probe_sample: cell {spec!r}: expected ROWSxNxK or varlen/b<B>xnn<NEXT_N>/cr<CR>/<N>/k<K>")
    rows, n, k = (int(v) for v in parts)
    return Case("grid" if data == "decode" else "adversarial", rows, n, k, data=data)


def call_kwargs(case: Case) -> dict:
    """``run_varlen``'s layout arguments for a case's inputs."""
    return dict(next_n=case.next_n, compress_ratio=case.compress_ratio, max_seq_len=case.max_seq_len)


def _compile(job) -> str:
    """Worker: one call of an arm on random scores of a cell's shape and call layout, so its kernels land in
    Triton's disk cache (compiling depends on shapes, layout and settings, not data: the benchmark's precompile
    does the same); returns an error line or ''."""
    spec, case = job
    try:
        x = torch.randn(case.rows, case.n, device="cuda")
        kv = torch.full((case.batch,), case.max_seq_len, dtype=torch.int32, device="cuda")
        idx = torch.empty(case.rows, case.k, dtype=torch.int32, device="cuda")
        with tuned(parse_arm(spec)):
            gvr_topk.run_varlen(x, None, kv, idx, **call_kwargs(case))
        torch.cuda.synchronize()
        return ""
    except Exception as e:  # reported, and the timing process compiles it again itself
        return f"{spec} {case.name}: {type(e).__name__}: {str(e)[:200]}"


def precompile(arms, cases, jobs: int) -> None:
    """Compile every (arm, cell) in ``jobs`` worker processes first (4-8 s each when done one by one)."""
    if jobs <= 0:
        return
    work = [(spec, case) for spec in arms for case in cases]
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn")) as pool:
        for err in pool.map(_compile, work):
            if err:
                print("precompile:", err, flush=True)


def cell(rows: int, n: int, k: int, data: str, device: torch.device) -> tuple:
    """(scores, kv_lens, torch.topk graph) of one probe cell on the GPU: the benchmark's rows of ``data``
    (``"decode"`` or an adversarial kind) at full length, and torch.topk on them captured into a CUDA graph, timed
    after the arms. Also used by ``probe_ab.py``."""
    return case_cell(Case("grid" if data == "decode" else "adversarial", rows, n, k, data=data), device)


def case_cell(case: Case, device: torch.device) -> tuple:
    """``cell`` for any case (``parse_cell``); torch.topk runs over the full row width (columns past a varlen row's
    length hold -inf, as in the benchmark)."""
    inp = make_inputs(case, k_max=2048, device=device)
    x, kv, k = inp.logits, inp.kv_lens, case.k
    g, _ = timing.capture(lambda: torch.topk(x, k, dim=1, sorted=False))
    return x, kv, g


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--arms", default=DEFAULT_ARMS, help=f"comma-separated arms (default {DEFAULT_ARMS})")
    ap.add_argument("--cells", default=DEFAULT_CELLS, help="comma-separated ROWSxNxK cells or benchmark varlen case "
                    "names, e.g. varlen/b4xnn4/cr4/131072/k2048 (default: 20 grid cells)")
    ap.add_argument("--jobs", type=int, default=8, help="worker processes that compile first (0: none)")
    ap.add_argument("--data", default="decode", choices=("decode",) + ADVERSARIAL_KINDS,
                    help="the benchmark's decode rows (default) or one of its adversarial kinds, e.g. equal")
    args = ap.parse_args()
    arms = {(spec or DEFAULTS_ARM): parse_arm(spec) for spec in args.arms.split(",")}
    cases = [parse_cell(c, args.data) for c in args.cells.split(",")]
    precompile(list(arms), cases, args.jobs)
    dev = torch.device("cuda")
    flush = timing.L2Flush(dev)
    results = []
    for case in cases:
        rows, n, k = case.rows, case.n, case.k
        kw = call_kwargs(case)
        x, kv, torch_graph = case_cell(case, dev)
        data = f"b{case.batch}xnn{case.next_n}/cr{case.compress_ratio}" if case.varlen else args.data
        rec = dict(data=data, rows=rows, n=n, k=k, family=gvr_topk.route(rows, n, n, k).family,
                   us={}, exact={}, plan={})
        # Every arm captured first, then all timed with their replays interleaved (timing.time_graphs_interleaved:
        # an arm's place in a sequential order biased it by 1-5 us, NOTES entry 42). torch.topk is timed on its own
        # after them: a split-family arm replayed right after it ran 1-3 us slower (NOTES entry 43).
        graphs = {}
        idxs = {}
        for spec, values in arms.items():
            idx = idxs[spec] = torch.empty(rows, k, dtype=torch.int32, device=dev)
            with tuned(values):
                p = gvr_topk.route(rows, n, n, k)
                rec["plan"][spec] = f"{p.family}/split{p.split}/w{p.num_warps}"
                call = lambda idx=idx: gvr_topk.run_varlen(x, None, kv, idx, **kw)  # noqa: E731
                graphs[spec], _ = timing.capture(call)
        for name, t in zip(graphs, timing.time_graphs_interleaved(list(graphs.values()), flush, args.reps)):
            rec["us"][name] = round(t.median_us, 2)
        rec["us"]["torch"] = round(timing.time_graph(torch_graph, flush, args.reps).median_us, 2)
        for spec, idx in idxs.items():
            idx.fill_(-7)
            graphs[spec].replay()
            torch.cuda.synchronize()
            rec["exact"][spec] = not check_exact_fast(x, idx, kv_lens=kv, next_n=case.next_n,
                                                      compress_ratio=case.compress_ratio)
        del graphs
        results.append(rec)
        print(json.dumps(rec), flush=True)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, "probe_sample.json"), "w") as fh:
                json.dump(dict(arms=arms, cells=results), fh, indent=1)
    return summarize(results, list(arms))


def summarize(results: list, names: list) -> int:
    """Print the closing table (us per cell and arm, ``!`` after an inexact output), each arm's geomean speed-up over
    torch.topk and the exactness count; 1 if any output was inexact, else 0. Also used by ``probe_ab.py``."""
    print(f"\n{'rows':>4} {'n':>7} {'k':>5} {'data':12} {'family':6} {'torch':>7} "
          + " ".join(f"{a:>12}" for a in names))
    for r in results:
        print(f"{r['rows']:4d} {r['n']:7d} {r['k']:5d} {r['data']:12} {r['family']:6} {r['us']['torch']:7.1f} "
              + " ".join(f"{r['us'][a]:11.1f}{'' if r['exact'][a] else '!'}" for a in names))
    for a in names:
        gm = 1.0
        for r in results:
            gm *= r["us"]["torch"] / r["us"][a]
        print(f"{a}: geomean speed-up over torch.topk {gm ** (1 / max(1, len(results))):.2f}x")
    bad = [(r["rows"], r["n"], r["k"], r["data"], a) for r in results for a in names if not r["exact"][a]]
    print(f"{len(results) * len(names) - len(bad)} arm outputs exact, {len(bad)} not exact {bad[:5]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
