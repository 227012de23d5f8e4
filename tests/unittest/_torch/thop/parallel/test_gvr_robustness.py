"""Production-robustness tests of the gvr top-k op: output canaries, determinism under ties, concurrent streams,
CUDA-graph replay with changing inputs, and (opt-in) compute-sanitizer runs.

CPU runs use Triton's interpreter on small shapes; the stream, graph and sanitizer tests need a GPU. Every check is
exact: index sets equal the reference's (unique under the contract's tie rule: lowest columns win ties at the K-th
score), short rows are ``0 .. n-1`` then -1, values are the scores at the chosen columns.
"""

import importlib.util
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch

import gvr_topk
from gvr_topk import contract
from gvr_topk import dispatch
from gvr_topk import reference
from gvr_topk import tuning
from gvr_topk.dispatch import capacity
from gvr_topk.testing import check_exact

pytestmark = pytest.mark.gvr_topk

ON_GPU = torch.cuda.is_available()
DEV = torch.device("cuda") if ON_GPU else torch.device("cpu")
gpu_only = pytest.mark.skipif(not ON_GPU, reason="needs a CUDA GPU")
REPO = Path(__file__).resolve().parents[5]
#: Where the gvr_topk under test was imported from (subprocesses import the same one).
PKG_ROOT = str(Path(gvr_topk.__file__).resolve().parents[1])

IDX_CANARY = -0x5A5A5A5B
VAL_CANARY = -7.25e33


def _gen(seed: int) -> torch.Generator:
    return torch.Generator(device=DEV).manual_seed(seed)


def _tied_scores(rows: int, npad: int, seed: int, dtype=torch.float32, k: int = 2048) -> torch.Tensor:
    """Scores with huge tie classes: few distinct integers plus a few spikes, so the K-th value is shared by many
    columns and only the tie rule decides which of them are selected."""
    g = _gen(seed)
    x = torch.randint(0, 4, (rows, npad), generator=g, device=DEV).float()
    spikes = torch.rand(rows, npad, generator=g, device=DEV) < min(0.003, k / (4 * npad))  # fewer than K spikes
    return torch.where(spikes, 50.0 + torch.randint(0, 3, (rows, npad), generator=g, device=DEV).float(),
                       x).to(dtype)


def _ref_ok(logits, idx, *, kv_lens=None, next_n=1, cr=1, n_valid=None) -> torch.Tensor:
    """Per-row bool on the device: the output equals the reference (slot for slot on short rows, as a set on long
    rows; the set is unique under the tie rule). No host synchronisation."""
    rows, npad = logits.shape
    k = idx.shape[1]
    ref, _ = reference.topk_varlen(logits, kv_lens, k, next_n=next_n, compress_ratio=cr, n_valid=n_valid)
    n = reference.row_lengths(kv_lens, rows, npad, next_n=next_n, compress_ratio=cr, n_valid=n_valid)
    n = n.to(logits.device)
    same_set = (torch.sort(idx, 1).values == torch.sort(ref, 1).values).all(1)
    return torch.where(n <= k, (idx == ref).all(1), same_set)


def _assert_exact(x, idx, kv=None, val=None, next_n=1, cr=1, n_valid=None, what=""):
    problems = check_exact(x, idx, kv_lens=kv, next_n=next_n, compress_ratio=cr, values=val, n_valid=n_valid)
    assert not problems, f"{what}: " + "\n".join(problems)


def _prev_topk(x, k, kv, next_n=1, seed=1):
    noisy = x.float() + 0.3 * torch.randn(x.shape, generator=_gen(seed), device=DEV)
    idx, _ = reference.topk_varlen(noisy, kv, k, next_n=next_n)
    return idx[next_n - 1::next_n].contiguous()


def _maybe_warmup(**kw):
    """Call ``gvr_topk.warmup`` when the package has one (with the arguments its signature names); tests always do a
    warm call of their own as well, so correctness never depends on it."""
    fn = getattr(gvr_topk, "warmup", None)
    if fn is None:
        return
    params = inspect.signature(fn).parameters
    required = [p for p, v in params.items()
                if v.default is inspect.Parameter.empty and v.kind in (v.POSITIONAL_OR_KEYWORD, v.KEYWORD_ONLY)]
    if any(p not in kw for p in required):
        return
    fn(**{p: v for p, v in kw.items() if p in params})


# ---------------------------------------------------------------------------------------------------------------
# Canaries: outputs are views into larger buffers; only [rows, K] may change
# ---------------------------------------------------------------------------------------------------------------

CANARY_CASES = [
    # (family, k, n, rows, next_n, hinted)
    ("reg", 64, 1500, 4, 2, False),
    ("reg", 5, 700, 3, 1, True),
    ("stream", 64, 5000, 4, 2, True),
    ("stream", 512, 2100, 2, 1, False),
    ("split", 64, 5000, 4, 1, False),
    ("split", 512, 6000, 2, 2, True),
    (None, 1, 900, 6, 3, False),
]
if ON_GPU:
    CANARY_CASES += [("stream", 2048, 70000, 40, 2, True), ("split", 1024, 131072, 8, 1, False),
                     ("reg", 2048, 16384, 64, 4, True), (None, 1024, 200000, 300, 1, True)]


class Canary:
    """int32 indices and float32 values outputs: ``[pad + rows + pad, width]`` buffers full of canaries, with the
    op's outputs as the ``[pad:pad + rows, :K]`` view (row stride ``width`` > K)."""

    PAD = 3

    def __init__(self, rows: int, k: int, extra: int = 13):
        w = k + extra
        self.k, self.rows = k, rows
        self.idx_buf = torch.full((rows + 2 * self.PAD, w), IDX_CANARY, dtype=torch.int32, device=DEV)
        self.val_buf = torch.full((rows + 2 * self.PAD, w + 5), VAL_CANARY, device=DEV)
        self.idx = self.idx_buf[self.PAD:self.PAD + rows, :k]
        self.val = self.val_buf[self.PAD:self.PAD + rows, :k]
        self.idx_before = self.idx_buf.clone()
        self.val_before = self.val_buf.clone()

    def mask(self, buf):
        m = torch.zeros(buf.shape, dtype=torch.bool, device=DEV)
        m[self.PAD:self.PAD + self.rows, :self.k] = True
        return m

    def assert_only_window_written(self):
        for buf, before in ((self.idx_buf, self.idx_before), (self.val_buf, self.val_before)):
            outside = ~self.mask(buf)
            same = buf.view(torch.int32) == before.view(torch.int32)
            assert bool(same[outside].all()), "a byte outside [rows, :K] of an output buffer changed"

    def assert_untouched(self, what):
        assert torch.equal(self.idx_buf, self.idx_before), f"{what}: indices buffer changed"
        assert torch.equal(self.val_buf.view(torch.int32), self.val_before.view(torch.int32)), \
            f"{what}: values buffer changed"


@pytest.mark.parametrize("family,k,n,rows,next_n,hinted", CANARY_CASES)
def test_canary_only_rows_by_k_change(family, k, n, rows, next_n, hinted):
    batch = rows // next_n
    base = torch.full((rows, n + 40), float("nan"), device=DEV)  # a wider row stride, NaN in the gap
    x = base[:, :n]
    x.copy_(torch.randn(rows, n, generator=_gen(n + k), device=DEV))
    # Mixed lengths: empty, short, exactly K, K+1, capacity, full.
    pick = [0, max(k - 1, 0), k, k + 1, min(capacity(k), n), n * 2]
    kv = torch.tensor([pick[i % len(pick)] + next_n - 1 for i in range(batch)], dtype=torch.int32, device=DEV)
    lens = reference.row_lengths(kv, rows, n, next_n=next_n).to(DEV)
    x.masked_fill_(torch.arange(n, device=DEV)[None, :] >= lens[:, None], float("nan"))
    hint = _prev_topk(x, k, kv, next_n) if hinted else None
    inputs = [t.clone() for t in (base, kv) + ((hint,) if hinted else ())]
    c = Canary(rows, k)
    gvr_topk.run_varlen(x, hint, kv, c.idx, next_n=next_n, values=c.val, family=family)
    c.assert_only_window_written()
    _assert_exact(x, c.idx, kv, c.val, next_n=next_n)
    # Inputs are read-only.
    for before, now in zip(inputs, (base, kv) + ((hint,) if hinted else ())):
        assert torch.equal(before.view(torch.uint8) if before.dtype == torch.float32 else before,
                           now.view(torch.uint8) if now.dtype == torch.float32 else now)


def _bad_calls():
    """(name, expected exception, builder) for every guard of ``gvr_topk.api._validate`` and the entry points. The
    builder gets a Canary and returns a thunk that makes the bad call with the canary's outputs (or a canary
    buffer of the wrong kind)."""
    rows, n, k, next_n = 4, 300, 16, 2

    def good(c):
        x = torch.randn(rows, n, device=DEV)
        return dict(logits=x, pre_idx=None, kv_lens=torch.full((rows // next_n,), n, dtype=torch.int32, device=DEV),
                    indices=c.idx, values=c.val, next_n=next_n)

    def varlen(**change):
        def build(c):
            kw = good(c)
            kw.update({key: (v(c) if callable(v) else v) for key, v in change.items()})
            return lambda: gvr_topk.run_varlen(kw.pop("logits"), kw.pop("pre_idx"), kw.pop("kv_lens"),
                                               kw.pop("indices"), **kw)
        return build

    i32 = dict(dtype=torch.int32, device=DEV)
    cases = [
        ("logits", TypeError, varlen(logits=torch.randn(rows, n, device=DEV).double())),
        ("logits", TypeError, varlen(logits=torch.randint(0, 5, (rows, n), **i32))),
        ("logits", TypeError, varlen(logits=[[1.0]])),
        ("logits", ValueError, varlen(logits=torch.randn(rows, n, 1, device=DEV))),
        ("logits", ValueError, varlen(logits=torch.randn(n, rows, device=DEV).t())),
        ("logits", ValueError, varlen(logits=torch.randn(rows * n, device=DEV).as_strided((rows, n), (n // 2, 1)))),
        ("logits", ValueError, varlen(next_n=3)),
        ("indices", TypeError, varlen(indices=lambda c: c.idx_buf[:rows, :k].view(torch.float32))),
        ("indices", TypeError, varlen(indices=torch.full((rows, k), IDX_CANARY, dtype=torch.int64, device=DEV))),
        ("indices", ValueError, varlen(indices=lambda c: c.idx_buf[:rows + 1, :k])),
        ("indices", ValueError, varlen(indices=lambda c: c.idx_buf[:rows, :0])),
        ("indices", ValueError, varlen(indices=lambda c: c.idx_buf[:rows, ::2])),
        ("indices", ValueError, varlen(indices=torch.full((rows, contract.MAX_K + 1), IDX_CANARY, **i32))),
        ("indices", ValueError, varlen(indices=lambda c: c.idx_buf[Canary.PAD, :k])),
        ("values", TypeError, varlen(values=lambda c: c.val_buf[:rows, :k].view(torch.int32))),
        ("values", TypeError, varlen(values=torch.full((rows, k), 1.0, dtype=torch.float16, device=DEV))),
        ("values", ValueError, varlen(values=lambda c: c.val_buf[:rows, :k - 1])),
        ("values", ValueError, varlen(values=lambda c: c.val_buf[:rows - 1, :k])),
        ("values", ValueError, varlen(values=lambda c: c.val_buf[:rows, :2 * k:2])),
        ("next_n", ValueError, varlen(next_n=0)),
        ("next_n", TypeError, varlen(next_n=2.0)),
        ("next_n", TypeError, varlen(next_n=True)),
        ("compress_ratio", ValueError, varlen(compress_ratio=3)),
        ("compress_ratio", ValueError, varlen(compress_ratio=0)),
        ("compress_ratio", TypeError, varlen(compress_ratio=4.0)),
        ("kv_lens", ValueError, varlen(kv_lens=torch.full((3,), n, **i32))),
        ("kv_lens", TypeError, varlen(kv_lens=torch.full((2,), n, dtype=torch.int64, device=DEV))),
        ("kv_lens", ValueError, varlen(kv_lens=torch.full((2, 1), n, **i32))),
        ("kv_lens", ValueError, varlen(kv_lens=torch.full((4,), n, **i32)[::2])),
        ("kv_lens", TypeError, varlen(kv_lens=None)),
        ("kv_lens", TypeError, varlen(kv_lens=[n, n])),
        ("pre_idx", ValueError, varlen(pre_idx=torch.zeros(rows, k, **i32))),
        ("pre_idx", ValueError, varlen(pre_idx=torch.zeros(rows // next_n, k - 1, **i32))),
        ("pre_idx", TypeError, varlen(pre_idx=torch.zeros(rows // next_n, k, device=DEV))),
        ("pre_idx", ValueError, varlen(pre_idx=torch.zeros(rows // next_n, 2 * k, **i32)[:, ::2])),
        ("max_seq_len", ValueError, varlen(max_seq_len=-1)),
        ("max_seq_len", TypeError, varlen(max_seq_len=300.0)),
        ("family", ValueError, varlen(family="radix")),
        ("family", ValueError, varlen(family="REG")),
        ("workspace", ValueError, varlen(workspace=torch.zeros(8, dtype=torch.uint8, device=DEV))),
        ("workspace", TypeError, varlen(workspace=bytearray(1 << 20))),
        ("workspace", ValueError, varlen(workspace=torch.zeros(2 * gvr_topk.workspace_bytes(rows, k),
                                                               dtype=torch.uint8, device=DEV)[::2])),
    ]
    if ON_GPU:
        cpu_i32 = dict(dtype=torch.int32)
        cases += [
            ("kv_lens", ValueError, varlen(kv_lens=torch.full((2,), n, **cpu_i32))),
            ("pre_idx", ValueError, varlen(pre_idx=torch.zeros(2, k, **cpu_i32))),
            ("values", ValueError, varlen(values=torch.full((rows, k), VAL_CANARY))),
            ("workspace", ValueError, varlen(workspace=torch.zeros(gvr_topk.workspace_bytes(rows, k),
                                                                   dtype=torch.uint8))),
            ("indices", ValueError, varlen(logits=torch.randn(rows, n))),
        ]

    def run_bad(**change):
        def build(c):
            kw = dict(logits=torch.randn(rows, n, device=DEV), pre_idx=None, n_valid=200, indices=c.idx,
                      values=c.val)
            kw.update({key: (v(c) if callable(v) else v) for key, v in change.items()})
            return lambda: gvr_topk.run(kw.pop("logits"), kw.pop("pre_idx"), kw.pop("n_valid"), kw.pop("indices"),
                                        kw.pop("values"), **kw)
        return build

    cases += [
        ("n_valid", TypeError, run_bad(n_valid=200.0)),
        ("n_valid", TypeError, run_bad(n_valid="200")),
        ("pre_idx", ValueError, run_bad(pre_idx=torch.zeros(rows // 2, k, **i32))),
        ("family", ValueError, run_bad(family="stream2")),
        ("indices", TypeError, run_bad(indices=torch.zeros(rows, k, dtype=torch.int16, device=DEV))),
    ]

    def op_bad(**change):
        def build(c):
            kw = good(c)
            kw.update({key: (v(c) if callable(v) else v) for key, v in change.items()})
            return lambda: torch.ops.gvr.topk_varlen(kw["logits"], kw["pre_idx"], kw["kv_lens"], kw["indices"],
                                                     kw["values"], kw["next_n"], 1, None)
        return build

    cases += [
        ("kv_lens", ValueError, op_bad(kv_lens=torch.full((3,), n, **i32))),
        ("values", ValueError, op_bad(values=lambda c: c.val_buf[:rows, :k - 1])),
    ]
    return cases


BAD_CALLS = _bad_calls()


@pytest.mark.parametrize("arg,exc,build", BAD_CALLS, ids=[f"{a}-{i}" for i, (a, _, _) in enumerate(BAD_CALLS)])
def test_bad_input_changes_no_byte(arg, exc, build):
    c = Canary(4, 16)
    call = build(c)
    with pytest.raises(exc, match=f"'{arg}'"):
        call()
    if ON_GPU:
        torch.cuda.synchronize()
    c.assert_untouched(arg)


@pytest.mark.parametrize("k", [0, contract.MAX_K + 1])
def test_topk_bad_k_is_named(k):
    with pytest.raises(ValueError, match="'k'|'indices'"):
        gvr_topk.topk(torch.randn(2, 3000, device=DEV), k)


@gpu_only
def test_capture_without_max_seq_len_changes_no_byte():
    """Under CUDA-graph capture the op needs max_seq_len (it would read kv_lens.max() on the host): refused with
    the argument named, and the outputs are untouched."""
    rows, n, k = 4, 5000, 64
    x = torch.randn(rows, n, device=DEV)
    kv = torch.full((rows,), n, dtype=torch.int32, device=DEV)
    c = Canary(rows, k)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        gvr_topk.run_varlen(x, None, kv, c.idx, values=c.val, max_seq_len=n)  # warm
    torch.cuda.synchronize()
    c2 = Canary(rows, k)
    g = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="max_seq_len"):
        with torch.cuda.graph(g, stream=s):
            gvr_topk.run_varlen(x, None, kv, c2.idx, values=c2.val)
    torch.cuda.synchronize()
    c2.assert_untouched("capture without max_seq_len")


# ---------------------------------------------------------------------------------------------------------------
# The split family with more rows than it has counters for
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rows", [
    tuning.SPLIT_MAX_ROWS + 1, dispatch.split_rows_max() + 1, dispatch.split_rows_max(),
])
def test_forced_split_beyond_split_max_rows(rows):
    """A forced family on a legal shape is either refused (ValueError naming it, nothing written) or exact.

    The split family keeps per-row counters in its workspace; with more rows than ``tuning.SPLIT_MAX_ROWS`` those
    counters must not overlap the staging area, nor the words a streaming launch on the same workspace leaves
    non-zero (its thresholds: 512 forced split rows once came out wrong from row 256 on after one), and past
    ``dispatch.split_rows_max()`` the launch must be refused. Runs in a subprocess because the failure mode is a
    crash (a segfault in the interpreter, out-of-bounds writes on a GPU), not an exception."""
    code = f"""
import torch, gvr_topk
from gvr_topk.testing import check_exact
dev = "cuda" if torch.cuda.is_available() else "cpu"
rows, n, k = {rows}, 700, 16
x = torch.randn(rows, n, generator=torch.Generator().manual_seed(0)).to(dev)
kv = torch.full((rows,), n, dtype=torch.int32, device=dev)
idx = torch.full((rows, k), -5, dtype=torch.int32, device=dev)
ws = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=dev)
if rows <= gvr_topk.dispatch.split_rows_max():  # (a refused launch needs none)
    gvr_topk.run_varlen(x, None, kv, idx, family="stream", workspace=ws)  # leaves its thresholds in the workspace
    idx.fill_(-5)
try:
    gvr_topk.run_varlen(x, None, kv, idx, family="split", workspace=ws)
except ValueError as e:
    assert "'family'" in str(e) or "split" in str(e), e
    assert (idx == -5).all()
    print("REFUSED")
else:
    if dev == "cuda":
        torch.cuda.synchronize()
    problems = check_exact(x, idx, kv_lens=kv)
    assert not problems, problems
    idx.fill_(-5)
    gvr_topk.run_varlen(x, None, kv, idx, family="split", workspace=ws)  # the workspace is reusable
    problems = check_exact(x, idx, kv_lens=kv)
    assert not problems, problems
    print("EXACT")
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PKG_ROOT, os.environ.get("PYTHONPATH", "")]))
    if not ON_GPU:
        env["TRITON_INTERPRET"] = "1"
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and ("REFUSED" in p.stdout or "EXACT" in p.stdout), \
        f"rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"


# ---------------------------------------------------------------------------------------------------------------
# Determinism: the same input gives the same index set everywhere (ties at the K-th value included)
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.skipif(ON_GPU, reason="GPU hosts run the NCCL version of this script (test_gvr_multi_gpu.py)")
def test_distributed_ranks_choose_identical_index_sets_on_cpu():
    """``tests/gpu/nccl_determinism.py`` with two gloo ranks on the host: the same script, inputs, collectives and
    checks as the 2-GPU NCCL test (the example decode layer and tie-heavy direct calls; every rank's index sets
    all-gathered and compared; rows tied at the K-th value required)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PKG_ROOT, os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, str(REPO / "tests" / "gpu" / "nccl_determinism.py"), "--device", "cpu"],
                       env=env, capture_output=True, text=True, timeout=1200)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    assert "NCCL-DETERMINISM OK" in out, out[-4000:]


DET_SHAPES = [(64, 2500, 2), (512, 2600, 1), (5, 1200, 3)]
# The GPU shapes are compile-bound on a cold Triton cache: each compiles kernel variants per family x hinted /
# hint-free x values x dtype, 15-33 s apiece for the split and streaming kernels on the H200 machine (Triton 3.6):
# the float32 half of K=2048 x 16384 x 8 rows, all families in one test then, took 190 s there, its calls well under
# a second once compiled. One test per family lets parallel workers share that; give a GPU run time or a warm
# TRITON_CACHE_DIR, and read a run cut by its limit as slow, not hung.
if ON_GPU:
    DET_SHAPES += [(2048, 16384, 8), (1024, 131072, 4), (512, 70000, 64), (2048, 262144, 2)]


def _det_families(n, rows):
    """The families a shape runs: the route's own pick (None) and every family that serves it when forced."""
    return [None, "stream"] + (["split"] if rows <= tuning.SPLIT_MAX_ROWS else []) + \
        (["reg"] if n <= tuning.REG_MAX_N else [])


# Each family's index set equals the tie rule's (below), so every family and mode chooses the same set.
@pytest.mark.parametrize("k,n,rows,family", [(k, n, rows, fam) for k, n, rows in DET_SHAPES
                                             for fam in _det_families(n, rows)])
def test_same_index_set_across_runs_families_and_modes(k, n, rows, family):
    repeats = 5 if ON_GPU else 2
    for dtype in ((torch.float32, torch.bfloat16) if ON_GPU else (torch.float32,)):
        x = _tied_scores(rows, n, seed=k + n + rows, dtype=dtype, k=k)
        kv = torch.full((rows,), n, dtype=torch.int32, device=DEV)
        ref, _ = reference.topk_varlen(x, kv, k)
        want = torch.sort(ref, 1).values
        # Ties decide the answer: the K-th value's tie class has members that are selected and members that are not.
        keys = reference.order_keys(x)
        kth = torch.sort(keys, 1, descending=True).values[:, k - 1:k]
        above, tied = (keys > kth).sum(1), (keys == kth).sum(1)
        assert bool(((above < k) & (above + tied > k)).all())
        hints = {"free": None, "prev": _prev_topk(x, k, kv), "exact": ref.contiguous(),
                 "garbage": torch.randint(-5, n + 5, (rows, k), generator=_gen(3), device=DEV, dtype=torch.int32)}
        seen = []
        for mode, hint in hints.items():
            for values in ((False, True) if ON_GPU else (mode in ("prev", "garbage"),)):
                for _ in range(repeats if mode == "free" or ON_GPU and mode == "prev" else 1):
                    idx = torch.full((rows, k), -9, dtype=torch.int32, device=DEV)
                    val = torch.zeros(rows, k, device=DEV) if values else None
                    gvr_topk.run_varlen(x, hint, kv, idx, values=val, family=family, max_seq_len=n)
                    seen.append(((family, mode, values), torch.sort(idx, 1).values))
        for what, got in seen:
            assert torch.equal(got, want), f"{dtype} {what}: index set differs from the tie rule's"
        # And the tie rule itself: within the K-th value's tie class, exactly the lowest columns were chosen.
        _assert_exact(x, idx, kv, what=str(dtype))


# ---------------------------------------------------------------------------------------------------------------
# Streams (GPU): concurrent ops on two streams, separate caller workspaces and default per-stream workspaces
# ---------------------------------------------------------------------------------------------------------------


@gpu_only
@pytest.mark.parametrize("workspace_mode", ["caller", "default"])
@pytest.mark.parametrize("family,k", [(None, 1024), ("stream", 1024), ("split", 1024), ("split", 2048)])
def test_two_streams_concurrently(workspace_mode, family, k):
    """K=2048 with the split family takes its cooperative form: two grids of 8 rows x 16 programs need more SMs
    than the GPU has, so their spin barriers rely on each cooperative launch running all of its programs at once
    whatever the other stream runs."""
    rows, n, iters = 8, 200000, 40
    if k == 2048:
        assert gvr_topk.route(rows, n, n, k).coop
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    wss = [torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV) if workspace_mode == "caller"
           else None for _ in streams]
    keep = []  # every tensor used on a side stream stays alive until the final synchronize
    results = []
    cur = torch.cuda.current_stream()
    for it in range(iters):
        xs, kvs, hints = [], [], []
        for s_i in range(2):
            g = _gen(1000 * it + s_i)
            x = torch.randn(rows, n, generator=g, device=DEV)
            if it % 3 == 1:
                x = _tied_scores(rows, n, seed=1000 * it + s_i)
            kv = torch.randint(0, n + 1, (rows,), generator=g, device=DEV, dtype=torch.int32)
            kv[0] = n
            kv[1] = k + (it % 2)   # short-row boundary
            kv[2] = capacity(k) + (it % 2)  # staging-capacity boundary
            xs.append(x)
            kvs.append(kv)
            hints.append(_prev_topk(x, k, kv, seed=it) if it % 2 else None)
        for s in streams:
            s.wait_stream(cur)
        # Interleave: several calls per stream, alternating, so the two streams' kernels overlap.
        for rep in range(3):
            for s_i, s in enumerate(streams):
                with torch.cuda.stream(s):
                    idx = torch.empty(rows, k, dtype=torch.int32, device=DEV)
                    val = torch.empty(rows, k, device=DEV)
                    gvr_topk.run_varlen(xs[s_i], hints[s_i], kvs[s_i], idx, values=val, max_seq_len=n,
                                        workspace=wss[s_i], family=family)
                    results.append((xs[s_i], kvs[s_i], idx, val, f"iter {it} stream {s_i} rep {rep}"))
        keep += xs + kvs + [h for h in hints if h is not None]
    for s in streams:
        cur.wait_stream(s)
    torch.cuda.synchronize()
    oks = torch.stack([_ref_ok(x, idx, kv_lens=kv).all() for x, kv, idx, _, _ in results]).cpu()
    bad = [r[4] for r, ok in zip(results, oks.tolist()) if not ok]
    assert not bad, f"{len(bad)} of {len(results)} calls not exact, e.g. {bad[:5]}"
    for x, kv, idx, val, what in results[:4] + results[-4:]:
        _assert_exact(x, idx, kv, val, what=what)
    print(f"\n{len(results)} concurrent calls on 2 streams exact ({workspace_mode} workspace, family {family})")


# ---------------------------------------------------------------------------------------------------------------
# CUDA-graph replay (GPU): capture once with max_seq_len, replay while lengths, scores and hints change
# ---------------------------------------------------------------------------------------------------------------

GRAPH_CASES = [(fam, hinted, values) for fam in (None, "reg", "stream", "split") for hinted in (False, True)
               for values in ((False, True) if fam is None else (hinted,))]


@gpu_only
@pytest.mark.parametrize("family,hinted,values", GRAPH_CASES)
def test_cuda_graph_replays_follow_inputs(family, hinted, values):
    k, next_n, cr, batch = 512, 2, 2, 6
    rows = batch * next_n
    npad = 12000 if family == "reg" else 40000
    msl = npad * cr
    cap = capacity(k)
    base = torch.full((rows, npad + 64), float("nan"), device=DEV)   # wider row stride, NaN in the gap
    x = base[:, :npad]
    x.copy_(torch.randn(rows, npad, device=DEV))
    kv = torch.full((batch,), msl, dtype=torch.int32, device=DEV)
    hint = torch.full((batch, k), -1, dtype=torch.int32, device=DEV) if hinted else None
    c = Canary(rows, k)
    val = c.val if values else None
    cs = torch.cuda.Stream()
    cs.wait_stream(torch.cuda.current_stream())
    _maybe_warmup(num_rows=rows, k=k, npad=npad, max_seq_len=msl, row_stride=x.stride(0), next_n=next_n,
                  compress_ratio=cr, hinted=hinted, with_values=values, dtype=x.dtype, device=x.device,
                  family=family, out_stride=c.idx.stride(0), values_stride=c.val.stride(0),
                  hint_stride=k if hinted else None, stream=cs)
    with torch.cuda.stream(cs):  # warm call on the capture stream: compiles, creates its default workspace
        gvr_topk.run_varlen(x, hint, kv, c.idx, next_n=next_n, compress_ratio=cr, values=val, max_seq_len=msl,
                            family=family)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=cs):
        gvr_topk.run_varlen(x, hint, kv, c.idx, next_n=next_n, compress_ratio=cr, values=val, max_seq_len=msl,
                            family=family)
    # Uncompressed lengths whose rows land on the boundaries (last MTP row of each request: n = kv // cr).
    lengths = [0, 1, next_n - 1, (k - 1) * cr, k * cr, k * cr + cr - 1, (k + 1) * cr, (cap - 1) * cr, cap * cr,
               (cap + 1) * cr, (cap + 1) * cr + 1, msl - 1, msl]
    gen, host_gen = _gen(77), torch.Generator().manual_seed(78)
    replays, saved = 120, []
    for r in range(replays):
        kv_new = torch.tensor([lengths[(r + 5 * b) % len(lengths)] for b in range(batch)], dtype=torch.int32)
        if r % 4 == 3:
            kv_new = torch.randint(0, msl + 1, (batch,), generator=host_gen, dtype=torch.int32)
        kind = r % 3
        new = torch.randn(rows, npad, generator=gen, device=DEV)
        if kind == 1:
            new = _tied_scores(rows, npad, seed=r)
        elif kind == 2:
            new = torch.where(torch.rand(rows, npad, generator=gen, device=DEV) < 0.01, float("inf"), new)
        x.copy_(new)
        kv.copy_(kv_new)
        if hinted:
            if r % 2:   # the previous replay's selection of each request's last row (a realistic hint)
                hint.copy_(c.idx[next_n - 1::next_n])
            else:
                hint.copy_(torch.randint(-3, npad + 3, (batch, k), generator=gen, device=DEV, dtype=torch.int32))
        g.replay()
        saved.append((x.clone(), kv.clone(), c.idx.clone(), val.clone() if values else None))
    torch.cuda.synchronize()
    oks = torch.stack([_ref_ok(sx, si, kv_lens=skv, next_n=next_n, cr=cr).all() for sx, skv, si, _ in saved]).cpu()
    bad = [i for i, ok in enumerate(oks.tolist()) if not ok]
    if bad:
        sx, skv, si, sv = saved[bad[0]]
        problems = check_exact(sx, si, kv_lens=skv, next_n=next_n, compress_ratio=cr, values=sv)
        pytest.fail(f"replays {bad[:10]} of {replays} not exact; first: kv {skv.tolist()}: {problems}")
    for sx, skv, si, sv in saved[:3] + saved[-3:]:
        _assert_exact(sx, si, skv, sv, next_n=next_n, cr=cr, what="replay")
    c.assert_only_window_written()
    print(f"\n{replays} CUDA-graph replays exact (family {family}, hinted {hinted}, values {values})")


# ---------------------------------------------------------------------------------------------------------------
# compute-sanitizer (GPU, opt-in with GVR_SANITIZE=1)
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.skipif(not ON_GPU or shutil.which("compute-sanitizer") is None or os.environ.get("GVR_SANITIZE") != "1",
                    reason="needs CUDA, compute-sanitizer on PATH and GVR_SANITIZE=1")
@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_compute_sanitizer(tool):
    script = REPO / "tests" / "gpu" / "sanitize_cases.py"
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1",
               PYTHONPATH=os.pathsep.join([PKG_ROOT, os.environ.get("PYTHONPATH", "")]))
    quick = ["--quick"] if tool == "racecheck" else []  # racecheck is slow: the script's reduced case list
    family = os.environ.get("GVR_SANITIZE_FAMILY")  # one family's cases only, for a run after a change to it
    quick += ["--family", family] if family else []
    overrides = os.environ.get("GVR_SANITIZE_TUNING")  # e.g. STREAM_MIN_SPLIT=6: an option off by default
    quick += ["--tuning", overrides] if overrides else []
    timeout = int(os.environ.get("GVR_SANITIZE_TIMEOUT", "900"))
    # The same calls once without the sanitizer first: Triton compiles every kernel into its disk cache here, so the
    # sanitized run only loads them (on the H200 compiling took most of a 280 s memcheck run that timed out). Both
    # runs deal the calls out to several processes (``--shard``): one process per family still passed 300 s on a
    # cold machine (the split family's alone, H100, NOTES entry 42), each case compiling its own kernels in 10-20 s;
    # one memcheck process over every family passed 300 s on an H100 at case 34 of 37 (NOTES entry 43).
    jobs = max(2, min(8, (os.cpu_count() or 2) // 2))
    _run_shards([sys.executable, str(script), *quick], jobs, env, timeout, "pre-run")
    outs = _run_shards(["compute-sanitizer", "--tool", tool, "--print-limit", "20", sys.executable, str(script),
                        *quick], jobs, env, timeout, f"compute-sanitizer {tool}")
    # memcheck ends with "ERROR SUMMARY: 0 errors"; racecheck with "RACECHECK SUMMARY: 0 hazards displayed
    # (0 errors, 0 warnings)" (seen on the H200, compute-sanitizer of CUDA 13).
    clean = "ERROR SUMMARY: 0 errors" if tool == "memcheck" else "RACECHECK SUMMARY: 0 hazards displayed (0 errors"
    for out in outs:
        print(out[-1500:])
        assert clean in out, out[-4000:]


def _run_shards(cmd, jobs, env, timeout, what):
    """Run ``cmd --shard i/jobs`` for every i at once; fail naming the shard (with its last lines) that passes
    ``timeout`` seconds, exits non-zero or does not end with the case script's OK line. Returns each shard's
    output."""
    runs = [[*cmd, "--shard", f"{i}/{jobs}"] for i in range(jobs)]
    logs = [tempfile.TemporaryFile("w+") for _ in runs]  # files, not pipes: no process blocks on a full pipe
    procs = [subprocess.Popen(c, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
             for c, log in zip(runs, logs)]
    deadline = time.monotonic() + timeout
    outs = []
    try:
        for c, proc, log in zip(runs, procs, logs):
            try:
                proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.seek(0)
                pytest.fail(f"{what} shard {c[-1]} did not finish in {timeout} s; its last lines:\n"
                            f"{log.read()[-2000:]}")
            log.seek(0)
            out = log.read()
            assert proc.returncode == 0 and "GVR-SANITIZE-CASES OK" in out, f"{what} shard {c[-1]}: {out[-4000:]}"
            outs.append(out)
    finally:
        for proc, log in zip(procs, logs):
            proc.kill()  # a no-op for those that ended; one that timed out or failed leaves no process behind
            log.close()
    return outs


def _sanitize_script():
    spec = importlib.util.spec_from_file_location("gvr_sanitize_cases", REPO / "tests" / "gpu" / "sanitize_cases.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("flags", [[], ["--quick"], ["--family", "split"], ["--ties-only"],
                                   ["--quick", "--family", "stream"], ["--only", "cooperative"]])
def test_sanitize_cases_shards_make_the_whole_run(flags, capsys):
    """The sanitizer test's parallel pre-run: ``--shard I/N`` for I = 0..N-1 lists each case of the run exactly
    once, with the seed the whole run gives it (so the pre-run compiles the kernels the sanitized run launches)."""
    mod = _sanitize_script()
    assert mod.main([*flags, "--list"]) == 0
    whole = capsys.readouterr().out.splitlines()
    assert whole and len(set(whole)) == len(whole)
    parts = []
    for i in range(3):
        assert mod.main([*flags, "--list", "--shard", f"{i}/3"]) == 0
        parts.append(capsys.readouterr().out.splitlines())
    assert sorted(sum(parts, [])) == sorted(whole)
    assert all(abs(len(a) - len(b)) <= 1 for a in parts for b in parts)
    # Run one shard with the kernels' calls replaced by a recorder: each case gets the seed of the whole run.
    family = next((f for f in gvr_topk.FAMILIES if f in flags), None)
    whole_calls = {label: (f.func.__name__, f.args[0], f.keywords["seed"])
                   for label, f in mod.work("--quick" in flags, "--ties-only" in flags, family)
                   if "seed" in getattr(f, "keywords", {})}
    calls = []
    for name in ("run_case", "run_tied"):
        setattr(mod, name, lambda *a, seed, _name=name, **kw: calls.append((_name, a[0], seed)) or [])
    for name in ("run_uniform", "repeated_calls", "run_functional"):
        setattr(mod, name, lambda *a: [])
    assert mod.main([*flags, "--shard", "1/3"]) == 0
    assert "GVR-SANITIZE-CASES OK" in capsys.readouterr().out
    assert calls and calls == [whole_calls[label] for label in parts[1] if label in whole_calls]


def test_sanitize_cases_bad_selection(capsys):
    mod = _sanitize_script()
    for bad in ("3/3", "-1/2", "1", "a/b"):
        with pytest.raises(SystemExit) as e:
            mod.main(["--list", "--shard", bad])
        assert e.value.code == 2
        assert "--shard" in capsys.readouterr().err
    assert mod.main(["--list", "--only", "no such case"]) == 2
    assert "expected part of a case label" in capsys.readouterr().out

