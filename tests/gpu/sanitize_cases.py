"""Small cases of every gvr top-k kernel path, for running under compute-sanitizer (memcheck, racecheck).

Covers each family (reg, stream, split) hinted and hint-free, values on and off, short rows (n <= K), n = K + 1,
n = capacity and capacity + 1 (the streaming families stage a whole row when it fits), varlen batches with
zero-window rows (kv_lens < next_n), a logits row stride wider than npad, rows whose ties overflow the staging slot
(the retry ladder's tie rung), the split family's cooperative form (K=2048 rows of 10 programs: its accept path,
varlen rows, a crossing bin past CROSS_CAP, the whole crossing bin needed, the tie rung), its long staging tile
(shares of two or more short tiles), the streaming family's long rows (survivors-only staging, the select's
accept and ladder launches) and repeated calls that launch directly. Every output is checked with
``gvr_topk.testing.check_exact``; the last line is ``GVR-SANITIZE-CASES OK <cases> cases`` when all were exact
(exit 0), else the failures are listed and the exit status is 1.

Run (GPU)::

    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python tests/gpu/sanitize_cases.py
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool racecheck python tests/gpu/sanitize_cases.py --quick
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python tests/gpu/sanitize_cases.py --family split
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python tests/gpu/sanitize_cases.py \
        --family stream --tuning STREAM_MIN_SPLIT=6      # an option that is off by default
    python tests/gpu/sanitize_cases.py --family split --shard 0/8     # one of 8 processes that compile the kernels
    python tests/gpu/sanitize_cases.py --list                         # the cases' labels

Without the caching allocator every tensor is its own cudaMalloc, so an access past a tensor's end is outside any
allocation and memcheck reports it (with caching it could land in a neighbouring cached block). Outputs are
allocated exactly ``(rows, K)`` for the same reason. Without a GPU the script runs through Triton's interpreter.
"""

import argparse
import functools
import os
import sys

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import gvr_topk  # noqa: E402
from gvr_topk import reference  # noqa: E402
from gvr_topk import tuning  # noqa: E402
from gvr_topk.dispatch import capacity  # noqa: E402
from gvr_topk.testing import check_exact  # noqa: E402
from gvr_topk.testing import tuning_overrides  # noqa: E402

DEV = "cuda" if torch.cuda.is_available() else "cpu"


def cases(quick: bool):
    """(name, family, k, lens per request, npad, stride extra, next_n, hinted, values, dtype)."""
    out = []
    for family in ("reg", "stream", "split"):
        for k in ((64, 512) if not quick else (64,)):
            cap = capacity(k)
            npad = min(cap + 8, 12000) if family == "reg" else cap + 300
            lens = [0, 1, k - 1, k, k + 1, cap, cap + 1, npad]
            lens = [min(n, npad) for n in lens]
            for hinted in (False, True):
                for values in (False, True):
                    if quick and values != hinted:
                        continue
                    out.append((f"{family} k={k} hinted={hinted} values={values}", family, k, lens, npad, 0, 1,
                                hinted, values, torch.float32))
        # MTP varlen with zero-window requests, a wider row stride, half-precision scores.
        out.append((f"{family} varlen next_n=2 zero-window, row stride npad+37", family, 64,
                    [0, 1, 70, 3000], 3000, 37, 2, True, True, torch.bfloat16))
        if not quick:
            out.append((f"{family} varlen next_n=3 float16", family, 5, [2, 6, 2000], 2000, 0, 3, False, True,
                        torch.float16))
    out.append(("auto route, K=1, one row", None, 1, [5000], 5000, 0, 1, False, False, torch.float32))
    # The split family's cooperative form: K=2048 over rows of 20000 columns, 10 programs per row.
    for hinted, values in (((False, True), (True, False)) if not quick else ((False, True),)):
        out.append((f"split cooperative K=2048 varlen hinted={hinted} values={values}", "split", 2048,
                    [0, 2048, 2049, 9000, 20000, 20000], 20000, 0, 1, hinted, values, torch.float32))
    # Eight rows of 40000 columns: 16 programs per row, shares of two short tiles, staged through the long tile
    # (dispatch._split_tile), plain (K=512) and cooperative (K=2048); a share past a shorter row's end.
    for k in ((512, 2048) if not quick else (2048,)):
        out.append((f"split long staging tile K={k} varlen", "split", k, [0, 600, 4097, 20000, 40000, 40000, 40000,
                    39999], 40000, 0, 1, k == 512, True, torch.float32))
    # The streaming family on rows past STREAM_TILE_SHORT_MAX_N: the long tile's survivors-only staging (a partial
    # last tile, a share past a shorter row's end), then the accept and ladder launches of the select (a short row,
    # rows of at most the capacity, which stage whole and overflow CAP/2 into the ladder launch).
    for k in ((512, 2048) if not quick else (2048,)):
        out.append((f"stream long rows K={k} varlen", "stream", k, [0, k - 1, capacity(k), 33000, 40000, 39999,
                    40000], 40000, 0, 1, k == 2048, True, torch.float32))
    return out


def run_case(name, family, k, lens, npad, extra, next_n, hinted, values, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    batch = len(lens)
    rows = batch * next_n
    # Request length -> uncompressed kv so that the request's last row has exactly that many columns.
    kv = torch.tensor([n + 0 for n in lens], dtype=torch.int32)
    base = torch.full((rows, npad + extra), float("nan"))
    x = torch.randint(-3, 4, (rows, npad), generator=g).float() + 0.25 * torch.randn(rows, npad, generator=g)
    n_rows = reference.row_lengths(kv, rows, npad, next_n=next_n)
    x = torch.where(torch.arange(npad)[None, :] < n_rows[:, None], x, float("nan"))
    base[:, :npad] = x
    base = base.to(dtype).to(DEV)
    logits = base[:, :npad]
    kv = kv.to(DEV)
    hint = None
    if hinted:
        prev, _ = reference.topk_varlen(logits.float() + 0.5, kv, k, next_n=next_n)
        hint = prev[next_n - 1::next_n].contiguous()
        hint[:, ::3] = -1  # partly invalid
    idx = torch.empty(rows, k, dtype=torch.int32, device=DEV)
    val = torch.empty(rows, k, device=DEV) if values else None
    ws = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV) if seed % 2 else None
    gvr_topk.run_varlen(logits, hint, kv, idx, next_n=next_n, values=val, family=family, workspace=ws,
                        max_seq_len=max(lens) if seed % 3 else None)
    if DEV == "cuda":
        torch.cuda.synchronize()
    return check_exact(logits, idx, kv_lens=kv, next_n=next_n, values=val)


def tied_cases():
    """Rows whose sample threshold admits more scores than the slot holds because of ties at its key (the tie rung
    of ``_common._refine_row``): all equal, 200 finite scores then -inf, 1000 larger scores over a sea of ties."""
    n = 12000  # past the slot (8192) of every K here
    g = torch.Generator().manual_seed(11)
    few = torch.ones(2, n)
    few[:, torch.randperm(n, generator=g)[:1000]] = 5.0 + torch.rand(1000, generator=g)
    tail = torch.randn(2, n, generator=g)
    tail[:, 200:] = float("-inf")
    out = []
    for family in ("stream", "split"):
        for kind, x in (("all equal", torch.ones(2, n)), ("-inf tail", tail), ("1000 over ties", few)):
            out.append((f"tie rung {family} {kind}", family, x))
    return out


def coop_rows():
    """Rows that take the split family's cooperative form (K=2048, 10 programs per row) off its accept path: one
    huge score (coarse bins, a crossing bin past CROSS_CAP), exactly K tied top scores (the whole crossing bin
    needed), and the shared tie rung's rows: all equal, 200 finite scores then -inf, 1000 larger scores over a sea
    of ties (every program writes its slice of them), K - 48 positive scores then +0.0."""
    n = 20000
    g = torch.Generator().manual_seed(12)
    spike = torch.randn(2, n, generator=g)
    spike[:, 11] = 1e30
    block = torch.rand(2, n, generator=g)
    block[:, torch.randperm(n, generator=g)[:2048]] = 100.0
    tail = torch.randn(2, n, generator=g)
    tail[:, 200:] = float("-inf")
    few = torch.ones(2, n)
    few[:, torch.randperm(n, generator=g)[:1000]] = 5.0 + torch.rand(1000, generator=g)
    relu = torch.zeros(2, n)
    relu[:, torch.randperm(n, generator=g)[:2000]] = 1.0 + torch.rand(2000, generator=g)
    return [("crossing bin past CROSS_CAP", spike), ("whole crossing bin", block), ("all equal", torch.ones(2, n)),
            ("-inf tail", tail), ("1000 over ties", few), ("+0.0 padding", relu)]


def run_tied(family, x, seed, k=512):
    x = x.to(DEV)
    kv = torch.full((x.shape[0],), x.shape[1], dtype=torch.int32, device=DEV)
    idx = torch.empty(x.shape[0], k, dtype=torch.int32, device=DEV)
    val = torch.empty(x.shape[0], k, device=DEV)
    hint = torch.topk(x, k, dim=1).indices.to(torch.int32) if seed % 2 else None
    gvr_topk.run_varlen(x, hint, kv, idx, values=val, family=family, max_seq_len=x.shape[1])
    if DEV == "cuda":
        torch.cuda.synchronize()
    return check_exact(x, idx, kv_lens=kv, values=val)


def work(quick: bool, ties_only: bool, family=None):
    """Every checked call of a run, in order: ``(label, thunk)``, the thunk returning the problems it found.

    A case's seed is its place in this list (before ``--only`` or ``--shard`` pick from it), so a run of part of
    the list makes the same calls as the whole run: the same kernels compile, which is what a pre-run that fills
    Triton's cache for a later sanitized run needs.
    """
    mine = (lambda f: family is None or f == family)
    items = []
    for i, (name, fam, x) in enumerate(tied_cases()):
        if mine(fam):
            items.append((f"[tie {i + 1}] {name}", functools.partial(run_tied, fam, x, seed=i)))
    for i, (name, x) in enumerate(coop_rows() if mine("split") else []):
        items.append((f"[cooperative {i + 1}] {name}", functools.partial(run_tied, "split", x, seed=i, k=2048)))
    repeated = (("split", 20000, 2), ("stream", 16387, 2)) if ties_only else (
        ("split", 20000, 2), ("reg", 5000, 2), ("stream", 16387, 2))
    if not ties_only:
        listed = [c for c in cases(quick) if mine(c[1])]
        for i, c in enumerate(listed):
            items.append((f"[{i + 1}/{len(listed)}] {c[0]}", functools.partial(run_case, *c, seed=i)))
        # The batch-uniform entry (no kv_lens).
        for fam in gvr_topk.FAMILIES:
            if mine(fam):
                items.append((f"run family={fam}", functools.partial(run_uniform, fam)))
    for fam, n, rows in repeated:
        if mine(fam):
            items.append((f"repeated calls family={fam}", functools.partial(repeated_calls, fam, n, rows)))
    if family is None and not ties_only:
        items.append(("topk", run_functional))
    return items


def run_uniform(family):
    x = torch.randn(3, 5000, generator=torch.Generator().manual_seed(13)).to(DEV)
    idx = torch.empty(3, 64, dtype=torch.int32, device=DEV)
    gvr_topk.run(x, None, 4097, idx, family=family)
    return check_exact(x, idx, n_valid=4097)


def run_functional():
    x = torch.randn(3, 5000, generator=torch.Generator().manual_seed(14)).to(DEV)
    idx, val = gvr_topk.topk(x, 100, return_values=True)
    return check_exact(x, idx, values=val)


def repeated_calls(family, n, rows):
    """One signature called three times: from the second hot call on, launches go direct (launch/direct.py)."""
    problems = []
    g = torch.Generator().manual_seed(15)
    for rep in range(3):
        xr = torch.randn(rows, n, generator=g).to(DEV)
        kv = torch.full((rows,), n, dtype=torch.int32, device=DEV)
        idx = torch.empty(rows, 64, dtype=torch.int32, device=DEV)
        gvr_topk.run_varlen(xr, None, kv, idx, family=family, max_seq_len=n)
        problems += [f"call {rep + 1}: {p}" for p in check_exact(xr, idx, kv_lens=kv)]
    return problems


def _shard(text: str):
    """``--shard``'s ``"I/N"`` -> (I, N) with 0 <= I < N."""
    try:
        i, n = (int(v) for v in text.split("/"))
    except ValueError:
        i, n = -1, 0
    if not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"expected I/N with integers 0 <= I < N, got {text!r}")
    return i, n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer cases (for racecheck, which is slow)")
    ap.add_argument("--ties-only", action="store_true",
                    help="only the tie-rung rows and the repeated (direct) calls of every streaming family")
    ap.add_argument("--family", choices=gvr_topk.FAMILIES, default=None,
                    help="only the cases of this family (a shorter sanitizer run after a change to one family)")
    ap.add_argument("--only", default=None, metavar="TEXT",
                    help="only the cases whose label contains TEXT, e.g. 'stream long rows'")
    ap.add_argument("--shard", type=_shard, default=None, metavar="I/N",
                    help="only every N-th case from the I-th (0-based): N processes with I = 0..N-1 make the whole "
                         "run's calls between them (a parallel pre-run that compiles the kernels)")
    ap.add_argument("--list", action="store_true", help="print the selected cases' labels and exit")
    ap.add_argument("--tuning", default=None, metavar="NAME=INT,...",
                    help="gvr_topk.tuning integers to replace first, e.g. STREAM_MIN_SPLIT=6 (an option that is off)")
    args = ap.parse_args(argv)
    for name, value in tuning_overrides(args.tuning, "--tuning").items():
        setattr(tuning, name, value)
    items = work(args.quick, args.ties_only, args.family)
    if args.only:
        picked = [it for it in items if args.only in it[0]]
        if not picked:
            names = "; ".join(label for label, _ in items)
            print(f"GVR-SANITIZE-CASES --only {args.only!r}: expected part of a case label, got none of: {names}")
            return 2
        items = picked
    if args.shard:
        items = items[args.shard[0]::args.shard[1]]
    if args.list:
        print("\n".join(label for label, _ in items))
        return 0
    failed = 0
    for label, thunk in items:
        problems = thunk()
        if DEV == "cuda":
            torch.cuda.synchronize()
        print(f"{label}: {'exact' if not problems else 'WRONG ' + '; '.join(problems)}", flush=True)
        failed += bool(problems)
    return _verdict(failed, len(items))


def _verdict(failed: int, total: int) -> int:
    if failed:
        print(f"GVR-SANITIZE-CASES FAILED {failed} of {total} cases")
        return 1
    print(f"GVR-SANITIZE-CASES OK {total} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
