"""The shared helpers' two reduction forms give the same values (``gvr_topk.kernels._common.PLAIN_REDUCE``).

On the GPU the helpers reduce several operands in one ``tl.reduce`` over a tuple with a combine function of ours;
the interpreter runs such a reduction one element at a time in Python, so under it the helpers take the same values
from one plain reduction per operand. The rest of the CPU suite runs the plain form; these tests run the tuple
form through the interpreter too (``PLAIN_REDUCE`` switched off for the test, the interpreter reads it at each
call) and require both forms to agree with each other and with host references:

* the helpers on their own, at tile sizes the interpreter's per-element reduction runs in a second or two;
* one small call per kernel family, exact: together they reach every tuple reduction (the register tile's radix
  levels, the sample threshold, the staged select's crossing bins, the cooperative split form's row histogram over
  the sample's window and, with ``tuning.SPLIT_COOP_WINDOW`` off, over the admitted span).

Interpreter only: the GPU build always compiles the tuple form, which the rest of the suite runs there.
"""

import pytest
import torch
import triton
import triton.language as tl

import gvr_topk
from gvr_topk import reference
from gvr_topk import tuning
from gvr_topk.kernels import _common
from gvr_topk.kernels._common import _count_tiles
from gvr_topk.kernels._common import _crossing_bin
from gvr_topk.kernels._common import _crossing_bin_counted
from gvr_topk.kernels._common import _minmax
from gvr_topk.kernels._common import _sample_bracket
from gvr_topk.testing import check_exact

pytestmark = [pytest.mark.gvr_topk,
              pytest.mark.skipif(not gvr_topk.kernels_interpreted(),
                                 reason="the tuple form is what the GPU build always runs; the switch is the "
                                        "interpreter's")]

LANES = 256
TAIL = 64
NBINS = 256
#: Outputs of ``_forms_kernel``, in order.
OUT = ("lo", "hi", "n0", "n1", "b", "above", "in_b", "cb", "c_above", "c_in", "thr", "top")


@triton.jit
def _forms_kernel(keys_ptr, mask_ptr, tkeys_ptr, tmask_ptr, hist_ptr, row_ptr, out_ptr, need, count, n, rank,
                  LANES: tl.constexpr, TAIL: tl.constexpr, NBINS: tl.constexpr, SAMPLE: tl.constexpr,
                  GROUP: tl.constexpr, MAXIMA: tl.constexpr):
    """Every helper with a tuple reduction, once, on the tiles given; results to ``out_ptr`` (int64, ``OUT``)."""
    lane = tl.arange(0, LANES)
    keys = tl.load(keys_ptr + lane).to(tl.uint32, bitcast=True)
    mask = tl.load(mask_ptr + lane) != 0
    t = tl.arange(0, TAIL)
    tkeys = tl.load(tkeys_ptr + t).to(tl.uint32, bitcast=True)
    tmask = tl.load(tmask_ptr + t) != 0
    lo, hi = _minmax(keys, mask)
    # The second count: the masked keys at or above the key at lane 0 (any key; a second, different mask).
    first = tl.load(keys_ptr).to(tl.uint32, bitcast=True)
    n0, n1 = _count_tiles(mask, mask & (keys >= first), tmask, tmask & (tkeys >= first), TAIL)
    hist = tl.load(hist_ptr + tl.arange(0, NBINS))
    b, above, in_b = _crossing_bin(hist, need, NBINS)
    cb, c_above, c_in = _crossing_bin_counted(hist, count, need, NBINS)
    thr, top = _sample_bracket(row_ptr, n, rank, SAMPLE, GROUP, MAXIMA)
    # Interpreter only (the module's skip), so a Python tuple indexed by the unrolled position is fine.
    results = (lo, hi, n0, n1, b, above, in_b, cb, c_above, c_in, thr, top)
    for i in tl.static_range(len(results)):
        tl.store(out_ptr + i, results[i].to(tl.int64))


@pytest.fixture
def plain_reduce(monkeypatch):
    """Setter of ``_common.PLAIN_REDUCE`` for the test (restored after it)."""

    def set_form(plain: bool):
        monkeypatch.setattr(_common, "PLAIN_REDUCE", tl.constexpr(plain))

    return set_form


def _crossing_host(hist: torch.Tensor, need: int) -> tuple:
    """(highest bin b with sum(hist[b:]) >= need, sum(hist[b+1:]), hist[b]), as ``test_gvr_split_coop.py``
    computes it."""
    at_or_above = hist.flip(0).cumsum(0).flip(0)
    b = int((at_or_above >= need).nonzero().max())
    return b, int(at_or_above[b] - hist[b]), int(hist[b])


def _case(seed: int, masked: str):
    g = torch.Generator().manual_seed(seed)
    keys = torch.randint(1, 2 ** 32, (LANES,), generator=g, dtype=torch.int64)
    tkeys = torch.randint(1, 2 ** 32, (TAIL,), generator=g, dtype=torch.int64)
    if masked == "none":
        mask, tmask = torch.zeros(LANES, dtype=torch.int32), torch.zeros(TAIL, dtype=torch.int32)
    elif masked == "all":
        mask, tmask = torch.ones(LANES, dtype=torch.int32), torch.ones(TAIL, dtype=torch.int32)
    else:
        mask = (torch.rand(LANES, generator=g) < 0.3).to(torch.int32)
        tmask = (torch.rand(TAIL, generator=g) < 0.3).to(torch.int32)
    # A sparse histogram with runs of empty bins (the crossing bin's neighbours are often empty) and bin 0 empty,
    # as ``_crossing_bin_counted`` expects; ``count`` puts some entries in bin 0 on top of the others.
    hist = torch.randint(0, 6, (NBINS,), generator=g, dtype=torch.int32)
    hist[torch.rand(NBINS, generator=g) < 0.5] = 0
    hist[0] = 0
    count = int(hist.sum()) + int(torch.randint(0, 50, (1,), generator=g))
    row = torch.randn(4096, generator=g)
    row[torch.randperm(4096, generator=g)[:40]] = float("inf")  # the window top leaves +inf out
    return keys, mask, tkeys, tmask, hist, count, row


def _run_forms(keys, mask, tkeys, tmask, hist, count, row, need, rank, sample, maxima) -> dict:
    out = torch.zeros(len(OUT), dtype=torch.int64)
    _forms_kernel[(1,)](keys.to(torch.int32), mask, tkeys.to(torch.int32), tmask, hist, row, out, need, count,
                        row.numel(), rank, LANES=LANES, TAIL=TAIL, NBINS=NBINS, SAMPLE=sample,
                        GROUP=tuning.SAMPLE_GROUP, MAXIMA=maxima)
    return dict(zip(OUT, out.tolist()))


@pytest.mark.parametrize("masked", ["some", "none", "all"])
@pytest.mark.parametrize("seed", [1, 2])
def test_helpers_agree_in_both_forms(seed, masked, plain_reduce):
    keys, mask, tkeys, tmask, hist, count, row = _case(seed, masked)
    total = int(hist.sum())
    sample, maxima = 512, 128 if seed == 2 else 0
    rank = 1 + seed * 37
    for need in (1, max(total // 2, 1), total):
        got = {}
        for plain in (True, False):
            plain_reduce(plain)
            got[plain] = _run_forms(keys, mask, tkeys, tmask, hist, count, row, need, rank, sample, maxima)
        assert got[True] == got[False], f"need {need}: plain {got[True]} != tuple {got[False]}"
        r = got[False]
        live = keys[mask.bool()]
        assert (r["lo"], r["hi"]) == ((int(live.min()), int(live.max())) if live.numel() else (2 ** 32 - 1, 0))
        tlive = tkeys[tmask.bool()]
        first = int(keys[0])
        assert r["n0"] == live.numel() + tlive.numel()
        assert r["n1"] == int((live >= first).sum()) + int((tlive >= first).sum())
        assert (r["b"], r["above"], r["in_b"]) == _crossing_host(hist, need)
        counted = hist.clone()
        counted[0] = count - total
        assert (r["cb"], r["c_above"], r["c_in"]) == _crossing_host(counted, need)
        row_keys = reference.order_keys(row)
        assert r["thr"] == reference.sample_threshold(row_keys, rank, sample, tuning.SAMPLE_GROUP, maxima)
        sampled = row_keys[reference.sample_columns(row.numel(), sample, tuning.SAMPLE_GROUP)]
        assert r["top"] == int(sampled[sampled < 0xFF800000].max()), "window top: the largest finite sampled key"


@pytest.mark.parametrize("family,rows,n,window", [("reg", 3, 3000, 1), ("stream", 2, 9000, 1),
                                                 ("split", 1, 40000, 1), ("split", 1, 40000, 0)])
def test_families_exact_in_both_forms(family, rows, n, window, plain_reduce, monkeypatch):
    """One call per family with each form: both exact, with the same indices (the forms compute the same values,
    so every decision is the same). ``window``: ``tuning.SPLIT_COOP_WINDOW`` (0: the staging's admitted span)."""
    monkeypatch.setattr(tuning, "SPLIT_COOP_WINDOW", window)
    k = 64
    g = torch.Generator().manual_seed(n)
    x = torch.randn(rows, n, generator=g)
    x[:, : n // 4] = torch.randint(0, 4, (rows, n // 4), generator=g).float()  # ties at the K-th value
    kv = torch.tensor([n, n - 7, k + 5][:rows], dtype=torch.int32)
    plan = gvr_topk.plan_for(family, rows, n, n, k)
    if family == "split":
        assert plan.coop, "the split call must take the cooperative form (its window's admitted span)"
    got = {}
    for plain in (True, False):
        plain_reduce(plain)
        gvr_topk.clear_launch_cache()
        idx = torch.empty(rows, k, dtype=torch.int32)
        val = torch.empty(rows, k)
        gvr_topk.run_varlen(x, None, kv, idx, values=val, family=family)
        assert not check_exact(x, idx, kv_lens=kv, values=val), f"plain={plain}"
        got[plain] = idx
    gvr_topk.clear_launch_cache()
    assert torch.equal(got[True], got[False])
