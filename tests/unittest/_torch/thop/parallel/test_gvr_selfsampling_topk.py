"""Exactness and contract tests of the gvr top-k op, for every kernel family and both modes.

On CPU the Triton kernels run through Triton's interpreter (tests/conftest.py), on small shapes; on a GPU the
same tests run, plus the larger reference sizes (K 512/1024/2048, n up to 262144, batch 1 and 4).
Every check is exact: ``gvr_topk.testing.check_exact`` compares the gathered values' multiset with
``torch.topk`` bit for bit and, with the contract's tie rule, the exact index set.
"""

import math

import pytest
import torch
import triton

import gvr_topk
from gvr_topk import contract
from gvr_topk import reference
from gvr_topk import tuning
from gvr_topk.testing import check_exact

pytestmark = pytest.mark.gvr_topk

ON_GPU = torch.cuda.is_available()
DEV = "cuda" if ON_GPU else "cpu"
#: Too many rows for the interpreter in a CI run (300 x 70000 is 21M scores).
GPU_ONLY = pytest.mark.skipif(not ON_GPU, reason="GPU only: too many scores for the interpreter")
POISON = 3e38

# (family, K, n) small enough for the interpreter; every family sees long rows, near-short rows and K=2048.
FAMILY_SHAPES = [
    ("reg", 512, 4099), ("reg", 2048, 4111), ("reg", 1, 3000), ("reg", 7, 1500),
    ("stream", 512, 20011), ("stream", 1024, 9000), ("stream", 2048, 3000), ("stream", 5, 12000),
    ("split", 512, 24000), ("split", 2048, 17000), ("split", 1024, 3000), ("split", 3, 9000),
]
# The reference system's decode sizes (about 6 s a call through the interpreter at 4 x 262144).
REFERENCE_SHAPES = [(512, 4099), (512, 65536), (512, 262143), (1024, 16387), (1024, 131072), (2048, 4111),
                    (2048, 131075), (2048, 131076), (2048, 262144)]


def _poisoned(rows, n, npad=None, dtype=torch.float32, seed=0, gen="randn"):
    """Scores [rows, npad] whose columns >= n hold 3e38: any read past a row's length shows up as a wrong answer."""
    g = torch.Generator().manual_seed(seed)
    npad = npad or n
    if gen == "randn":
        x = torch.randn(rows, npad, generator=g) - 2.0
    elif gen == "ints":
        x = torch.randint(-3, 4, (rows, npad), generator=g).float()
    elif gen == "cauchy":  # scores of both signs over many binades: a sample window spanning most of the key space
        x = torch.tan(math.pi * (torch.rand(rows, npad, generator=g).clamp(1e-7, 1 - 1e-7) - 0.5))
    else:
        raise ValueError(gen)
    x[:, n:] = POISON
    return x.to(dtype).to(DEV)


def _kv(rows, n, next_n=1, cr=1):
    # kv such that every row has exactly n columns for next_n == 1, cr == 1.
    return torch.full((rows // next_n,), n * cr + next_n - 1, dtype=torch.int32, device=DEV)


def _run(x, k, kv, *, hint=None, next_n=1, cr=1, family=None, values=True, max_seq_len=None):
    rows = x.shape[0]
    idx = torch.full((rows, k), -7, dtype=torch.int32, device=DEV)
    val = torch.full((rows, k), 7.0, device=DEV) if values else None
    gvr_topk.run_varlen(x, hint, kv, idx, next_n=next_n, compress_ratio=cr, values=val, family=family,
                        max_seq_len=max_seq_len)
    return idx, val


def _assert_exact(x, idx, kv, val=None, next_n=1, cr=1):
    problems = check_exact(x, idx, kv_lens=kv, next_n=next_n, compress_ratio=cr, values=val)
    assert not problems, "\n".join(problems)


def _prev_topk_hint(x, k, kv, next_n=1, seed=1):
    """A realistic hint: the top-k of a perturbed copy of the scores (the 'previous step')."""
    g = torch.Generator().manual_seed(seed)
    prev = x.float().cpu() + 0.3 * torch.randn(x.shape, generator=g)
    idx, _ = gvr_topk.reference.topk_varlen(prev, kv.cpu(), k, next_n=next_n)
    return idx[next_n - 1::next_n].contiguous().to(DEV)


# ---------------------------------------------------------------------------------------------------------------
# Exactness per family, hint-free and hinted
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family,k,n", FAMILY_SHAPES)
def test_hint_free_exact_per_family(family, k, n):
    x = _poisoned(3, n, npad=n + 37, seed=n)
    kv = _kv(3, n)
    idx, val = _run(x, k, kv, family=family)
    _assert_exact(x, idx, kv, val)


@pytest.mark.parametrize("family,k,n", FAMILY_SHAPES)
def test_hinted_matches_hint_free(family, k, n):
    """The hint changes speed, never the result: with the tie rule, the index sets are identical."""
    x = _poisoned(2, n, seed=n + 1)
    kv = _kv(2, n)
    hint = _prev_topk_hint(x, k, kv)
    idx_h, val_h = _run(x, k, kv, hint=hint, family=family)
    idx_f, _ = _run(x, k, kv, family=family)
    _assert_exact(x, idx_h, kv, val_h)
    for r in range(2):
        assert set(idx_h[r].tolist()) == set(idx_f[r].tolist())


@pytest.mark.parametrize("family", gvr_topk.FAMILIES)
def test_auto_route_agrees_with_forced_families(family):
    n = 6000
    x = _poisoned(2, n, seed=5)
    kv = _kv(2, n)
    idx_a, _ = _run(x, 512, kv)
    idx_f, _ = _run(x, 512, kv, family=family)
    assert torch.equal(torch.sort(idx_a, 1).values, torch.sort(idx_f, 1).values)


@pytest.mark.parametrize("k,n", REFERENCE_SHAPES)
@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("hinted", [False, True])
def test_reference_sizes(k, n, batch, hinted):
    x = _poisoned(batch, n, npad=n + 256 - n % 256, seed=k + n)
    kv = _kv(batch, n)
    hint = _prev_topk_hint(x, k, kv) if hinted else None
    idx, val = _run(x, k, kv, hint=hint, max_seq_len=n)
    _assert_exact(x, idx, kv, val)


@pytest.mark.parametrize("family", gvr_topk.FAMILIES)
@pytest.mark.parametrize("rows", [1, 16, pytest.param(64, marks=GPU_ONLY), pytest.param(300, marks=GPU_ONLY)])
def test_families_many_rows(family, rows):
    n = 8000 if family == "reg" else 70000
    if family == "split" and rows > 32:
        pytest.skip("split serves few rows")
    x = _poisoned(rows, n, seed=rows)
    kv = torch.randint(0, n + 1, (rows,), dtype=torch.int32, device=DEV)
    idx, val = _run(x, 1024, kv, family=family, max_seq_len=n)
    _assert_exact(x, idx, kv, val)


# ---------------------------------------------------------------------------------------------------------------
# Row lengths: short rows, varlen, MTP, compression, padding
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", gvr_topk.FAMILIES)
def test_short_and_empty_rows(family):
    k = 64
    lens = [0, 1, k - 1, k, k + 1, 5000]
    x = _poisoned(len(lens), 5000, seed=3)
    kv = torch.tensor(lens, dtype=torch.int32, device=DEV)
    idx, val = _run(x, k, kv, family=family)
    _assert_exact(x, idx, kv, val)
    assert (idx[0] == contract.PAD_INDEX).all()
    assert torch.equal(idx[1].cpu(), torch.tensor([0] + [-1] * (k - 1), dtype=torch.int32))
    assert (val[0] == contract.PAD_VALUE).all()


@pytest.mark.parametrize("next_n", [1, 2, 3, 4])
@pytest.mark.parametrize("cr", [1, 4])
def test_varlen_mtp_compressed(next_n, cr):
    k = 256
    kv_list = [33000, 8200, 300, 2 * k * cr + next_n, 0, next_n - 1]
    npad = 33000 // cr + 8
    rows = len(kv_list) * next_n
    x = _poisoned(rows, npad, seed=next_n * 10 + cr)
    # Poison every row's own tail too.
    kv = torch.tensor(kv_list, dtype=torch.int32, device=DEV)
    lens = gvr_topk.reference.row_lengths(kv.cpu(), rows, npad, next_n=next_n, compress_ratio=cr)
    for r, n in enumerate(lens.tolist()):
        x[r, n:] = POISON
    for family in (None, "stream", "split"):
        idx, val = _run(x, k, kv, next_n=next_n, cr=cr, family=family)
        _assert_exact(x, idx, kv, val, next_n=next_n, cr=cr)


@pytest.fixture(params=[False, True], ids=["hint_ignored", "hint_read"])
def reg_use_hint(request, monkeypatch):
    """``tuning.REG_USE_HINT`` both ways: the register family's hinted kernel path stays tested while the default
    leaves it unused."""
    yield from _tuning_value(monkeypatch, "REG_USE_HINT", request.param)


@pytest.mark.parametrize("k,n,gen,hinted", [(1024, 1030, "ints", False), (1100, 1500, "randn", False),
                                             (1100, 1500, "ints", True), (64, 1041, "randn", True)])
def test_reg_tail_tile(k, n, gen, hinted, reg_use_hint):
    """Rows held as a tile plus a tail tile: K past the tile (hint-free bracket positions in the tail), ties that
    straddle the two tiles (the lowest columns must win), hints that point into the tail, shorter varlen rows."""
    plan = gvr_topk.plan_for("reg", 3, n, n, k)
    assert plan.tail > 0 and plan.block < n <= plan.block + plan.tail
    x = _poisoned(3, n, seed=n, gen=gen)
    kv = torch.tensor([n, plan.block + 1, k + 3], dtype=torch.int32, device=DEV)
    for r, length in enumerate(kv.tolist()):
        x[r, length:] = POISON
    hint = None
    if hinted:
        hint = torch.arange(n - k, n, dtype=torch.int32, device=DEV).repeat(3, 1)  # the tail, then the tile's end
        hint[2] = torch.arange(k, dtype=torch.int32, device=DEV)
    idx, val = _run(x, k, kv, hint=hint, family="reg")
    _assert_exact(x, idx, kv, val)


@pytest.mark.parametrize("k,n", [(256, 1500), (64, 1041), (100, 110), (5, 10), (512, 2100)])
def test_reg_hint_free_group_bracket(k, n):
    """The register family's hint-free bracket where the tile holds at least 2 KB lanes: the smallest of KB group
    maxima, group j the lanes j, j + KB, ... Rows where it is tight (the K largest one per group: with K = KB the
    bracket is the K-th largest key itself, tied with a score outside the group maxima), where it is loose (the K
    largest all in group 0's lanes), rows of ties, a varlen row whose last groups hold no column at all (n < KB:
    the bound falls to key 0), and K not a power of two (KB > K groups)."""
    plan = gvr_topk.plan_for("reg", 4, n, n, k)
    kb = max(16, 1 << (k - 1).bit_length())
    assert plan.block >= 2 * kb
    g = torch.Generator().manual_seed(n + k)
    x = torch.randn(4, n, generator=g)
    x[0] = -1.0  # row 0: one score per group of lanes, the K-th largest of them tied with scores outside them
    group = torch.randperm(min(kb, n), generator=g)[:k]
    cols = group + kb * torch.randint(0, max(1, (n - kb) // kb), (k,), generator=g)
    x[0, cols] = torch.arange(k, dtype=torch.float32) + 1.0
    x[0, n - 1] = 1.0
    x[1] = -2.0  # row 1: the K largest in group 0's lanes (j = 0, KB, 2 KB, ...), then ties below
    top = torch.arange(0, n, kb)[:k]
    x[1, top] = torch.linspace(5.0, 9.0, len(top))
    x[2] = torch.randint(0, 3, (n,), generator=g).float()  # row 2: three values
    x = x.to(DEV)
    kv = torch.tensor([n, n, n, k + 1], dtype=torch.int32, device=DEV)  # row 3: k + 1 columns
    x[3, k + 1:] = POISON
    idx, val = _run(x, k, kv, family="reg")
    _assert_exact(x, idx, kv, val)


def test_varlen_reg_family_with_hint(reg_use_hint):
    k, next_n, cr = 512, 2, 4
    kv = torch.tensor([9000, 5001, 40], dtype=torch.int32, device=DEV)
    rows = 3 * next_n
    x = _poisoned(rows, 9000 // 4, seed=9)
    hint = _prev_topk_hint(x, k, kv, next_n=next_n)
    idx, val = _run(x, k, kv, hint=hint, next_n=next_n, cr=cr, family="reg")
    _assert_exact(x, idx, kv, val, next_n=next_n, cr=cr)


def test_row_stride_wider_than_npad():
    """A row-strided view of a wider arena (e.g. 256-column rounding): only [0, n) of each row is read."""
    base = torch.full((4, 8448), POISON, device=DEV)
    base[:, :8000] = torch.randn(4, 8000, device=DEV)
    x = base[:, :8100]
    assert x.stride(0) == 8448
    kv = torch.full((4,), 8000, dtype=torch.int32, device=DEV)
    for family in gvr_topk.FAMILIES:
        idx, val = _run(x, 1024, kv, family=family)
        _assert_exact(x, idx, kv, val)


def test_max_seq_len_envelope():
    x = _poisoned(4, 20000, seed=4)
    kv = torch.tensor([20000, 100, 15000, 7], dtype=torch.int32, device=DEV)
    idx, val = _run(x, 512, kv, max_seq_len=20000)
    _assert_exact(x, idx, kv, val)


# ---------------------------------------------------------------------------------------------------------------
# Hints: any int32 content is legal
# ---------------------------------------------------------------------------------------------------------------


def _degenerate_hints(batch, k, n):
    g = torch.Generator().manual_seed(7)
    half = torch.randint(0, n, (batch, k), generator=g, dtype=torch.int32)
    half[:, k // 2:] = half[:, :1]
    tail = torch.randint(0, n, (batch, k), generator=g, dtype=torch.int32)
    tail[:, k // 3:] = -1
    return {
        "all_minus_one": torch.full((batch, k), -1, dtype=torch.int32),
        "all_zero": torch.zeros((batch, k), dtype=torch.int32),
        "all_same": torch.full((batch, k), n // 2, dtype=torch.int32),
        "out_of_range": torch.randint(n, 2**31 - 1, (batch, k), generator=g, dtype=torch.int32),
        "negative": torch.randint(-2**31, 0, (batch, k), generator=g, dtype=torch.int32),
        "duplicated": half,
        "minus_one_tail": tail,
    }


@pytest.mark.parametrize("family,k,n", [("reg", 512, 8192), ("stream", 512, 20000), ("split", 2048, 20000)])
@pytest.mark.parametrize("kind", list(_degenerate_hints(1, 4, 8)))
def test_degenerate_hints_stay_exact(family, k, n, kind):
    x = _poisoned(2, n, seed=11)
    kv = _kv(2, n)
    hint = _degenerate_hints(2, k, n)[kind].to(DEV)
    idx, val = _run(x, k, kv, hint=hint, family=family)
    _assert_exact(x, idx, kv, val)


@pytest.mark.parametrize("kind", list(_degenerate_hints(1, 4, 8)))
@pytest.mark.parametrize("reg_use_hint", [True], ids=["hint_read"], indirect=True)
def test_degenerate_hints_read_by_the_reg_family(kind, reg_use_hint):
    """``test_degenerate_hints_stay_exact``'s reg rows with ``tuning.REG_USE_HINT`` on: every bad hint must fail the
    kernel's count check and fall back to the hint-free bracket (a tail-tile row too)."""
    for k, n in ((512, 8192), (256, 1500)):
        x = _poisoned(2, n, seed=11)
        kv = _kv(2, n)
        hint = _degenerate_hints(2, k, n)[kind].to(DEV)
        idx, val = _run(x, k, kv, hint=hint, family="reg")
        _assert_exact(x, idx, kv, val)


def test_high_anchor_hint():
    """A hint pointing only at the two largest scores brackets too high: the row must still get K answers."""
    k, n = 512, 4096
    x = _poisoned(4, n, seed=12)
    kv = _kv(4, n)
    top2 = torch.topk(x, 2, dim=1).indices.to(torch.int32)
    hint = top2.repeat(1, k // 2).contiguous()
    for family in gvr_topk.FAMILIES:
        idx, val = _run(x, k, kv, hint=hint, family=family)
        _assert_exact(x, idx, kv, val)


# ---------------------------------------------------------------------------------------------------------------
# Adversarial values
# ---------------------------------------------------------------------------------------------------------------


def _special_rows(n):
    g = torch.Generator().manual_seed(13)
    rows = {
        "ramp_up": torch.arange(n, dtype=torch.float32),
        "ramp_down": -torch.arange(n, dtype=torch.float32),
        "all_equal": torch.full((n,), 1.5),
        "few_distinct": torch.randint(0, 3, (n,), generator=g).float(),
        "pos_inf": torch.where(torch.rand(n, generator=g) < 0.01, float("inf"), torch.randn(n, generator=g)),
        "neg_inf_tail": torch.cat([torch.randn(n // 10, generator=g), torch.full((n - n // 10,), float("-inf"))]),
        "all_neg_inf": torch.full((n,), float("-inf")),
        "nan": torch.where(torch.rand(n, generator=g) < 0.02, float("nan"), torch.randn(n, generator=g)),
        "signed_zeros": torch.where(torch.rand(n, generator=g) < 0.5, 0.0, -0.0) * torch.ones(n),
        "heavy_tail": torch.randn(n, generator=g).exp() ** 4,
        "low_bits": (1.0 + torch.randint(0, 256, (n,), generator=g).float() * 2**-23),
        "denormals": torch.randint(1, 1000, (n,), generator=g).float() * 1e-42,
    }
    return rows


@pytest.mark.parametrize("family,k,n", [("reg", 300, 5000), ("stream", 600, 12000), ("split", 1024, 14000)])
@pytest.mark.parametrize("kind", list(_special_rows(16)))
def test_adversarial_rows(family, k, n, kind):
    row = _special_rows(n)[kind]
    x = torch.stack([row, row.flip(0)]).to(DEV)
    kv = _kv(2, n)
    idx, val = _run(x, k, kv, family=family)
    _assert_exact(x, idx, kv, val)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("family", gvr_topk.FAMILIES)
def test_half_precision_scores(dtype, family):
    n = 8000
    x = _poisoned(2, n, dtype=dtype, seed=21)  # bf16 rounding makes many ties at the K-th value
    kv = _kv(2, n)
    idx, val = _run(x, 700, kv, family=family)
    _assert_exact(x, idx, kv, val)


def test_tie_rule_lowest_columns_win():
    n, k = 3000, 100
    x = torch.zeros(1, n, device=DEV)
    x[0, 2000:2050] = 1.0  # 50 certain winners, then 2950 tied zeros for the remaining 50 slots
    kv = _kv(1, n)
    for family in gvr_topk.FAMILIES:
        idx, _ = _run(x, k, kv, family=family)
        assert set(idx[0].tolist()) == set(range(2000, 2050)) | set(range(50))


# ---------------------------------------------------------------------------------------------------------------
# Entry points: run, topk, values
# ---------------------------------------------------------------------------------------------------------------


def test_run_uniform_rows():
    x = _poisoned(3, 7000, seed=31)
    for family in gvr_topk.FAMILIES:
        idx = torch.full((3, 512), -7, dtype=torch.int32, device=DEV)
        val = torch.zeros(3, 512, device=DEV)
        gvr_topk.run(x, None, 6000, idx, val, family=family)
        problems = check_exact(x, idx, n_valid=6000, values=val)
        assert not problems, problems


def test_topk_functional():
    x = _poisoned(4, 5000, seed=32)
    idx, val = gvr_topk.topk(x, 256, return_values=True)
    assert idx.shape == (4, 256) and idx.dtype == torch.int32 and val.dtype == torch.float32
    assert not check_exact(x, idx, values=val)
    idx2, none = gvr_topk.topk(x, 256)
    assert none is None and torch.equal(torch.sort(idx, 1).values, torch.sort(idx2, 1).values)


def test_only_first_k_columns_written():
    x = _poisoned(2, 6000, seed=33)
    kv = _kv(2, 6000)
    wide = torch.full((2, 600), -9, dtype=torch.int32, device=DEV)
    vwide = torch.full((2, 700), 9.0, device=DEV)
    idx = wide[:, :512]
    gvr_topk.run_varlen(x, None, kv, idx, values=vwide)
    assert (wide[:, 512:] == -9).all() and (vwide[:, 512:] == 9.0).all()
    _assert_exact(x, idx, kv, vwide)


def test_values_padding():
    x = _poisoned(1, 100, seed=34)
    kv = _kv(1, 100)
    idx, val = _run(x, 128, kv)
    assert (val[0, 100:] == torch.finfo(torch.float32).min).all()
    assert torch.equal(val[0, :100], x[0, :100])


def test_zero_rows_is_noop():
    x = torch.empty(0, 100, device=DEV)
    idx = torch.empty(0, 10, dtype=torch.int32, device=DEV)
    gvr_topk.run_varlen(x, None, torch.empty(0, dtype=torch.int32, device=DEV), idx)


def test_caller_workspace_is_left_reusable():
    """The split family's counters must be zero again after every call (no memset between replays)."""
    rows, k = 2, 512
    x = _poisoned(rows, 20000, seed=35)
    kv = _kv(rows, 20000)
    ws = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV)
    idx = torch.empty(rows, k, dtype=torch.int32, device=DEV)
    for _ in range(3):
        gvr_topk.run_varlen(x, None, kv, idx, workspace=ws, family="split")
        _assert_exact(x, idx, kv)
        assert (ws[:256] == 0).all()


@pytest.mark.parametrize("n,sample,group", [(8193, 512, 1), (131075, 4096, 1), (131075, 4096, 8), (4096, 4096, 2),
                                            (3_000_000, 4096, 1)])
def test_sample_columns_are_distinct_and_in_range(n, sample, group):
    cols = reference.sample_columns(n, sample, group)
    assert cols.numel() == sample and int(cols.min()) >= 0 and int(cols.max()) < n
    assert bool((cols[1:] > cols[:-1]).all())  # ascending, hence distinct
    with pytest.raises(ValueError, match="n >= sample"):
        reference.sample_columns(sample - 1, sample, group)


def _tuning_value(monkeypatch, name, value):
    """Fixture body: one ``gvr_topk.tuning`` value replaced for a test; prepared launches are dropped before and
    after, so plans and launch arguments are rebuilt with it and without it."""
    monkeypatch.setattr(tuning, name, value)
    gvr_topk.clear_launch_cache()
    yield value
    monkeypatch.undo()
    gvr_topk.clear_launch_cache()


def _compiled_values(monkeypatch, **values):
    """Fixture body: ``gvr_topk.tuning`` values that are compiled into the kernels (module constexprs of
    ``gvr_topk.kernels._common``) replaced in both places for a test, which only the interpreter sees (it reads the
    module on every call); prepared launches are dropped before and after. Yields the values, in the order given,
    as a tuple."""
    from gvr_topk.kernels import _common

    for name, value in values.items():
        monkeypatch.setattr(_common, name, triton.language.constexpr(value))
        monkeypatch.setattr(tuning, name, value)
    gvr_topk.clear_launch_cache()
    yield tuple(values.values())
    monkeypatch.undo()
    gvr_topk.clear_launch_cache()


@pytest.fixture(params=[1, 8], ids=["single_scores", "groups_of_8"])
def sample_group(request, monkeypatch):
    """``tuning.SAMPLE_GROUP``: single scores (the default) and groups of 8 adjacent scores, so both ways the
    sample's positions are laid out stay checked."""
    yield from _tuning_value(monkeypatch, "SAMPLE_GROUP", request.param)


@pytest.mark.parametrize("n,k,gen", [(20000, 512, "randn"), (30000, 2048, "randn"), (20000, 64, "ints"),
                                     (30000, 2048, "cauchy")])
def test_host_mirror_of_the_sample_threshold(n, k, gen, sample_group):
    """``reference.sample_threshold`` (what benchmarks/sim_survivors.py simulates with) gives exactly the
    thresholds the streaming family's threshold kernel leaves in the workspace, for single-score sample groups (the
    default) and groups of 8 adjacent scores."""
    from gvr_topk import workspace as wsm

    rows = 4
    x = _poisoned(rows, n, seed=60 + k, gen=gen)
    kv = _kv(rows, n)
    plan = gvr_topk.plan_for("stream", rows, n, n, k)
    wsb = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV)
    idx = torch.empty(rows, k, dtype=torch.int32, device=DEV)
    gvr_topk.run_varlen(x, None, kv, idx, workspace=wsb, family="stream", max_seq_len=n)
    _assert_exact(x, idx, kv)
    got = (wsm.stream_views(wsb, plan, rows)[1][:rows].to(torch.int64) & 0xFFFFFFFF).tolist()
    rank = reference.sample_rank(n, plan.aim, plan.sample)
    keys = reference.order_keys(x.cpu())
    want = [reference.sample_threshold(keys[r], rank, plan.sample, sample_group, plan.maxima) for r in range(rows)]
    assert got == want


def _run_exact_read_thresholds(x, kv, k, family, plan):
    """Run ``x`` (rows x n) hint-free on ``family`` with values and a caller workspace, assert the output exact, and
    return the streaming family's per-row staging thresholds that the workspace holds (order keys; any list for
    another family, whose workspace lays out no thresholds)."""
    from gvr_topk import workspace as wsm

    rows, n = x.shape
    wsb = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV)
    idx = torch.full((rows, k), -7, dtype=torch.int32, device=DEV)
    val = torch.full((rows, k), 7.0, device=DEV)
    gvr_topk.run_varlen(x, None, kv, idx, values=val, workspace=wsb, family=family, max_seq_len=n)
    _assert_exact(x, idx, kv, val)
    if family != "stream":
        return []
    return (wsm.stream_views(wsb, plan, rows)[1][:rows].to(torch.int64) & 0xFFFFFFFF).tolist()


@pytest.mark.parametrize("sample,groups", [(2048, 256), (2048, 512), (512, 256), (1024, 128)])
def test_maxima_rank_matches_its_meaning(sample, groups):
    """``reference.maxima_rank`` is monotone in the sample's rank, stays in [1, groups], and sits where a group's
    maximum reaches the rank's share of the sample with probability 1 - (1 - p)**m (within one rank of the real
    number's ceiling: float32 rounding)."""
    m = sample // groups
    got = [reference.maxima_rank(r, sample, groups) for r in range(1, sample + 1)]
    assert got == sorted(got) and got[0] >= 1 and got[-1] == groups
    for r in (1, 24, 48, 96, sample // 2, sample - 1):
        ideal = groups * (1 - (1 - r / sample) ** m)
        assert abs(reference.maxima_rank(r, sample, groups) - max(math.ceil(ideal), 1)) <= 1, (r, ideal)


@pytest.fixture(params=[0, 256, 512], ids=["every_key", "maxima_256", "maxima_512"])
def sample_maxima(request, monkeypatch):
    """The sample threshold's levels over every sampled key, or over 256 / 512 group maxima of the sample
    (``tuning.SAMPLE_MAXIMA``), for launches of any row count (``tuning.SAMPLE_MAXIMA_MAX_ROWS``): a launch
    parameter (``Plan.maxima``), so the GPU kernels are tested at every setting too."""
    monkeypatch.setattr(tuning, "SAMPLE_MAXIMA_MAX_ROWS", 1 << 30)
    yield from _tuning_value(monkeypatch, "SAMPLE_MAXIMA", request.param)


@pytest.mark.parametrize("family,rows,n,k,gen", [
    ("stream", 3, 30000, 2048, "randn"),  # a 512-score sample: 256 maxima of two keys
    ("stream", 2, 20000, 512, "cauchy"),
    ("stream", 2, 20000, 64, "ints"),  # many equal maxima
    ("split", 2, 20000, 512, "cauchy"),
    ("split", 1, 40000, 2048, "randn"),  # the cooperative form, which bins over the sample's window
])
def test_sample_threshold_over_group_maxima(family, rows, n, k, gen, sample_maxima):
    """The sample threshold over every sampled key and over group maxima: the plan carries the setting, the
    streaming family's thresholds equal the host mirror's, and both families stay exact."""
    x = _poisoned(rows, n, seed=90 + k, gen=gen)
    kv = _kv(rows, n)
    plan = gvr_topk.plan_for(family, rows, n, n, k)
    assert plan.maxima == sample_maxima
    rank = reference.sample_rank(n, plan.aim, plan.sample)
    keys = reference.order_keys(x.cpu())
    mirror = [reference.sample_threshold(keys[r], rank, plan.sample, tuning.SAMPLE_GROUP, plan.maxima)
              for r in range(rows)]
    got = _run_exact_read_thresholds(x, kv, k, family, plan)
    if family == "stream":
        assert got == mirror


@pytest.fixture
def sample_early_other(monkeypatch):
    """``tuning.SAMPLE_STOP_DIV`` and ``tuning.SAMPLE_LOW_GROUPS`` at the setting that is not compiled in: (8, 128),
    a first window from the smallest of 128 group maxima and levels that stop once the crossing bin holds at most
    rank / 8 sampled keys, or (0, 0), every histogram level over a first window from the sample's minimum (every
    other test runs the compiled setting). The values are compiled into the GPU kernels when they are imported,
    while the interpreter reads them from the kernels' module on every call, so this runs through the interpreter
    only."""
    if not gvr_topk.kernels_interpreted():
        pytest.skip("SAMPLE_STOP_DIV and SAMPLE_LOW_GROUPS are compiled into the GPU kernels; the interpreter tests "
                    "the other setting")
    stop, low = (0, 0) if (tuning.SAMPLE_STOP_DIV, tuning.SAMPLE_LOW_GROUPS) != (0, 0) else (8, 128)
    yield from _compiled_values(monkeypatch, SAMPLE_STOP_DIV=stop, SAMPLE_LOW_GROUPS=low)


@pytest.mark.parametrize("family,rows,n,k,gen", [
    ("stream", 2, 20000, 512, "cauchy"),  # with (8, 128): one row stops after the first level, one does not
    ("stream", 2, 20000, 64, "ints"),  # the window closes after one level
    ("stream", 2, 9000, 2048, "randn"),  # a 512-score sample at rank 175 > 128 groups: the window from the minimum
    ("split", 2, 20000, 512, "cauchy"),
    ("split", 1, 40000, 2048, "randn"),  # the cooperative form, which bins over the threshold's window
])
def test_sample_threshold_other_window_and_stop(family, rows, n, k, gen, sample_early_other):
    """The sample threshold at the group-maxima window and early-stop setting that is not compiled in: the
    streaming family's thresholds equal the host mirror's (``test_host_mirror_of_the_sample_threshold`` checks the
    compiled setting), and both families stay exact."""
    x = _poisoned(rows, n, seed=70 + k, gen=gen)
    kv = _kv(rows, n)
    plan = gvr_topk.plan_for(family, rows, n, n, k)
    rank = reference.sample_rank(n, plan.aim, plan.sample)
    keys = reference.order_keys(x.cpu())
    mirror = [reference.sample_threshold_levels(keys[r], rank, plan.sample, tuning.SAMPLE_GROUP, plan.maxima)
              for r in range(rows)]
    if sample_early_other != (0, 0):  # what each case is for
        if gen == "cauchy":
            assert sorted(lv for _, lv in mirror) == [1, 2], "one row meant to stop after one level, one not"
        if n == 9000:
            assert rank > sample_early_other[1], "meant to exceed the groups (the window from the minimum)"
    got = _run_exact_read_thresholds(x, kv, k, family, plan)
    if family == "stream":
        assert got == [thr for thr, _ in mirror]


@pytest.fixture(params=[2048, 4096], ids=["three_tiles", "two_tiles"])
def select_min_tile(request, monkeypatch):
    """``tuning.SELECT_MIN_TILE`` at 2048 lanes (the default: tiles 2048, CAP/2, CAP) and at 4096 (= CAP/2: the
    two-tile select, kept as a tuning option), so both branches of the select stay tested whatever the default."""
    yield from _tuning_value(monkeypatch, "SELECT_MIN_TILE", request.param)


@pytest.mark.parametrize("family", ["split", "stream"])
@pytest.mark.parametrize("k,gen", [(64, "randn"), (512, "randn"), (512, "ints"), (2048, "randn")])
def test_select_tiles_are_exact(select_min_tile, family, k, gen):
    """Every select tile is reached (K=512 rows aim at ~1536 survivors and fit the 2048-lane tile when it is
    enabled, K=2048 rows overflow it) and the selection stays exact, values and the tie rule included."""
    rows, n = 2, 20000
    x = _poisoned(rows, n, seed=50 + k, gen=gen)
    kv = _kv(rows, n)
    idx, val = _run(x, k, kv, family=family)
    _assert_exact(x, idx, kv, val)


def _crossing_bin(row: torch.Tensor, k: int, plan) -> tuple:
    """(candidates in the staged select's crossing bin, how many of them are needed) for one full-length row: the
    host replay of the sample threshold and of the select's first histogram (``_select_staged_tile``)."""
    keys = reference.order_keys(row.cpu())
    rank = reference.sample_rank(row.numel(), plan.aim, plan.sample)
    cand = keys[keys >= reference.sample_threshold(keys, rank, plan.sample, tuning.SAMPLE_GROUP, plan.maxima)]
    lo, hi = int(cand.min()), int(cand.max())
    shift = reference.digit_shift(hi - lo, tuning.SELECT_BIN_BITS)
    hist = torch.bincount((cand - lo) >> shift, minlength=1 << tuning.SELECT_BIN_BITS)
    at_or_above = hist.flip(0).cumsum(0).flip(0)
    b = int((at_or_above >= k).nonzero().max())
    return int(hist[b]), k - int(at_or_above[b] - hist[b])


@pytest.mark.parametrize("family", ["split", "stream"])
@pytest.mark.parametrize("k", [64, 512, 2048])
def test_crossing_bin_selections_are_exact(family, k):
    """Rows whose crossing bin holds a few dozen to a hundred-odd candidates, some of them needed (the compacted
    crossing bin, checked on the host first), and a tie-heavy row (thousands of tied candidates: the in-place
    path), values included."""
    rows, n = 4, 20000
    g = torch.Generator().manual_seed(70 + k)
    x = torch.randn(rows, n, generator=g) + 4.0  # one sign: the candidates' key window stays narrow
    x[3] = torch.randint(-3, 4, (n,), generator=g).float()
    plan = gvr_topk.dispatch.plan_for(family, rows, n, n, k)
    bins = [_crossing_bin(x[r], k, plan) for r in range(3)]
    assert any(need < in_b <= tuning.CROSS_CAP for in_b, need in bins), bins  # the compacted path, partly needed
    x = x.to(DEV)
    kv = _kv(rows, n)
    idx, val = _run(x, k, kv, family=family)
    _assert_exact(x, idx, kv, val)


def _sample_fooling_row(n: int, k: int, seed: int) -> torch.Tensor:
    """A row whose sampled positions hold its largest scores, so the sample threshold admits fewer than K scores and
    the retry ladder must run (a lower sample rank, the hint, the whole-row path)."""
    plan = gvr_topk.route(1, n, n, k, num_sms=132)
    sampled = reference.sample_columns(n, plan.sample, tuning.SAMPLE_GROUP)
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, generator=g)
    x[sampled] = 10.0 + torch.arange(sampled.numel(), dtype=torch.float32) * 1e-3
    return x


@pytest.mark.parametrize("family", ["split", "stream"])
@pytest.mark.parametrize("hint", ["none", "good", "garbage"])
@pytest.mark.parametrize("k", [512, 2048])
def test_retry_ladder_after_a_misleading_sample(family, hint, k):
    """Fewer than K survivors of the sampled threshold: every rung of the ladder stays exact, and the workspace
    counters are zero afterwards (a rung restages the row into its slot without them). K=512: the first rung's lower
    sample rank admits the whole sample (1024 scores), enough; K=2048: the whole sample (512 scores) is still too
    few, so the hint rung and the whole-row path run."""
    rows, n = 2, 20000
    x = torch.stack([_sample_fooling_row(n, k, seed=40 + r) for r in range(rows)]).to(DEV)
    kv = _kv(rows, n)
    pre = None
    if hint == "good":
        pre = torch.topk(x, k, dim=1).indices.to(torch.int32)
    elif hint == "garbage":
        pre = torch.full((rows, k), -1, dtype=torch.int32, device=DEV)
    ws = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV)
    idx = torch.empty(rows, k, dtype=torch.int32, device=DEV)
    for _ in range(2):
        idx.fill_(-7)
        gvr_topk.run_varlen(x, pre, kv, idx, workspace=ws, family=family)
        _assert_exact(x, idx, kv)
        # split: (survivors, arrivals) per row; stream: survivors per row (its thresholds follow, not zeroed)
        at_rest = 2 * rows if family == "split" else rows
        assert (ws.view(torch.int32)[:at_rest] == 0).all()


@pytest.fixture(params=[1024, 256], ids=["chunks_of_1024", "chunks_of_256"])
def select_chunk(request, monkeypatch):
    """``tuning.SELECT_CHUNK``: the streaming select in loops over chunks of the slot (``_select_staged_looped``;
    off by default until measured), in 1024-candidate chunks and in 256 (more iterations than CROSS_CAP lanes)."""
    yield from _tuning_value(monkeypatch, "SELECT_CHUNK", request.param)


@pytest.mark.parametrize("k", [64, 512, 2048])
def test_looped_select_is_exact(select_chunk, k):
    """The looped select on rows that take each of its ways (checked on the host replay first): a crossing bin
    compacted into the slot's tail and partly needed, one needed whole (exactly K scores tie at the top), and a
    tie-heavy bin larger than CROSS_CAP (the tile select instead); values, the tie rule, and a caller workspace
    whose counters end at zero, twice."""
    rows, n = 4, 20000
    g = torch.Generator().manual_seed(80 + k)
    x = torch.randn(rows, n, generator=g) + 4.0
    x[2] = torch.randint(-3, 4, (n,), generator=g).float()
    x[3] = torch.randn(n, generator=g)
    x[3, torch.randperm(n, generator=g)[:k]] = 5.0  # the top K tie: the crossing bin is exactly them
    plan = gvr_topk.dispatch.plan_for("stream", rows, n, n, k)
    bins = [_crossing_bin(x[r], k, plan) for r in range(rows)]
    assert any(need < in_b <= tuning.CROSS_CAP for in_b, need in bins[:2]), bins
    assert bins[2][0] > tuning.CROSS_CAP and bins[2][1] < bins[2][0], bins
    assert bins[3] == (k, k), bins
    x = x.to(DEV)
    kv = _kv(rows, n)
    ws = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV)
    for _ in range(2):
        idx = torch.full((rows, k), -7, dtype=torch.int32, device=DEV)
        val = torch.full((rows, k), 7.0, device=DEV)
        gvr_topk.run_varlen(x, None, kv, idx, values=val, workspace=ws, family="stream")
        _assert_exact(x, idx, kv, val)
        assert (ws.view(torch.int32)[:rows] == 0).all()


@pytest.mark.parametrize("family", ["split", "stream"])
def test_retry_ladder_first_rung_aims_at_the_aim(family, every_sampled_key, under_k_row):
    """A staging ~5% under K: the first rung's sample rank is scaled by aim / count (``_retry_rank``), so the
    restaging lands between K and half the capacity. A fixed 4x rank, as before, would overflow the slot here and
    end in the whole-row path (NOTES entry 21). Checked on the host mirror of the threshold (the rows are built
    around the whole sample's ranks: ``every_sampled_key``), then run exact."""
    n, k = 20000, 2048
    plan = gvr_topk.route(1, n, n, k, num_sms=132)
    rank = reference.sample_rank(n, plan.aim, plan.sample)
    x = torch.stack([under_k_row(n, k, seed=90 + r) for r in range(2)])
    keys = reference.order_keys(x)
    for r in range(2):
        count = int((keys[r] >= reference.sample_threshold(keys[r], rank, plan.sample, tuning.SAMPLE_GROUP)).sum())
        assert 0.8 * k < count < k, count
        fixed = reference.sample_threshold(keys[r], min(4 * rank, plan.sample), plan.sample, tuning.SAMPLE_GROUP)
        assert int((keys[r] >= fixed).sum()) > plan.cap
        retry = reference.retry_rank(rank, count, plan.aim, plan.sample)
        again = int((keys[r] >= reference.sample_threshold(keys[r], retry, plan.sample, tuning.SAMPLE_GROUP)).sum())
        assert k <= again <= plan.cap // 2, (retry, again)
    x = x.to(DEV)
    kv = _kv(2, n)
    idx, val = _run(x, k, kv, family=family)
    _assert_exact(x, idx, kv, val)


def _tied_rows(kind: str, n: int, seed: int) -> torch.Tensor:
    """[2, n] rows whose sample threshold admits more than the slot holds because of ties at its key."""
    g = torch.Generator().manual_seed(seed)
    if kind == "equal":
        return torch.ones(2, n)
    if kind == "few_above":  # 1000 larger scores over a sea of 1.0: restaged above the tie, 1000 remain
        x = torch.ones(2, n)
        for r in range(2):
            x[r, torch.randperm(n, generator=g)[:1000]] = 5.0 + torch.rand(1000, generator=g)
        return x
    if kind == "neg_inf_tail":  # 200 finite scores, then -inf: the -inf ties fill the rest
        x = torch.randn(2, n, generator=g)
        x[:, 200:] = float("-inf")
        return x
    if kind == "signed_zeros":  # the threshold is +0.0's key, not an exact key set: the whole-row path instead
        return torch.where(torch.rand(2, n, generator=g) < 0.5, 0.0, -0.0)
    raise ValueError(kind)


@pytest.mark.parametrize("family", ["split", "stream"])
@pytest.mark.parametrize("kind", ["equal", "few_above", "neg_inf_tail", "signed_zeros"])
@pytest.mark.parametrize("k,hint", [(512, "none"), (2048, "none"), (512, "good")])
def test_tie_rung(family, kind, k, hint, monkeypatch):
    """``tuning.TIE_RUNG`` (on by default; set here so the test holds whatever the default): a staging that
    overflowed the slot on ties at its threshold restages above the tied key, then takes the lowest-column ties;
    every outcome stays exact (values included) and leaves the workspace counters at zero."""
    from gvr_topk import api

    monkeypatch.setattr(tuning, "TIE_RUNG", True)
    api.clear_launch_cache()
    try:
        rows, n = 2, 20000
        x = _tied_rows(kind, n, seed=k).to(DEV)
        kv = _kv(rows, n)
        pre = torch.topk(x, k, dim=1).indices.to(torch.int32) if hint == "good" else None
        ws = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV)
        idx = torch.full((rows, k), -7, dtype=torch.int32, device=DEV)
        val = torch.full((rows, k), 7.0, device=DEV)
        for _ in range(2):
            gvr_topk.run_varlen(x, pre, kv, idx, values=val, workspace=ws, family=family)
            _assert_exact(x, idx, kv, val)
            at_rest = 2 * rows if family == "split" else rows
            assert (ws.view(torch.int32)[:at_rest] == 0).all()
    finally:
        api.clear_launch_cache()


def test_split_serves_more_rows_when_they_are_short():
    """Past ``tuning.SPLIT_MAX_ROWS`` rows, rows of at most ``tuning.SPLIT_SHORT_MAX_N`` columns still go to the
    split family (fewer programs per row); mixed lengths (full, one short of full, shorter than K, empty) are exact,
    values included, and the workspace counters are back at zero."""
    rows, n, k = tuning.SPLIT_MAX_ROWS + 4, 17000, 64
    assert n <= tuning.SPLIT_SHORT_MAX_N and rows <= tuning.SPLIT_MAX_ROWS_SHORT
    assert gvr_topk.route(rows, n, n, k).family == "split"
    x = _poisoned(rows, n, seed=80)
    lens = [n] * (rows - 4) + [n - 1, k - 14, 0, n]
    kv = torch.tensor(lens, dtype=torch.int32, device=DEV)
    ws = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV)
    idx = torch.full((rows, k), -7, dtype=torch.int32, device=DEV)
    val = torch.full((rows, k), 7.0, device=DEV)
    gvr_topk.run_varlen(x, None, kv, idx, values=val, workspace=ws, max_seq_len=n)
    _assert_exact(x, idx, kv, val)
    assert (ws.view(torch.int32)[:2 * rows] == 0).all()


#: (``tuning.STREAM_SELECT_APART``, ``tuning.STREAM_STAGE_SPARSE``, ``tuning.STREAM_ROW_WAIT``,
#: ``tuning.STREAM_ACCEPT_LARGE_BIN``) of the streaming family under test: the defaults (n = 20000 rows stage on the
#: short tile, densely), and each built variant on the long tile (the select in one launch, or as an accept launch on
#: one or two tiles and a ladder launch; the survivors-only staging, with and without its look-ahead, and with its
#: reservations read a tile late; per-row or grid-wide waits; a crossing bin past CROSS_CAP refined by the accept
#: launch or passed to the ladder launch, which the row of ties takes: its threshold's key is shared by ~2,900
#: scores).
STREAM_VARIANTS = {"default": None, "one_select_launch_dense_grid_wait": (0, 0, 0, 1),
                   "apart_half_tile_sparse": (3, 1, 1, 1), "apart_two_tiles_sparse_ahead": (2, 2, 1, 1),
                   "apart_two_tiles_sparse_late": (2, 3, 1, 1),
                   "apart_two_tiles_large_bins_to_the_ladder": (2, 2, 1, 0),
                   "apart_half_tile_large_bins_to_the_ladder": (3, 0, 1, 0)}


@pytest.fixture(params=list(STREAM_VARIANTS))
def stream_variant(request, monkeypatch):
    setting = STREAM_VARIANTS[request.param]
    if setting is None:
        yield request.param
        return
    monkeypatch.setattr(tuning, "STREAM_SELECT_APART", setting[0])
    monkeypatch.setattr(tuning, "STREAM_ROW_WAIT", setting[2])
    monkeypatch.setattr(tuning, "STREAM_ACCEPT_LARGE_BIN", setting[3])
    monkeypatch.setattr(tuning, "STREAM_TILE_SHORT_MAX_N", 0)  # the long tile, which the sparse staging needs
    yield from _tuning_value(monkeypatch, "STREAM_STAGE_SPARSE", setting[1])


@pytest.mark.parametrize("k", [512, 2048])
def test_staging_outcomes_are_exact(k, stream_variant):
    """The streaming family with several staging programs per row (n = 20000: 4 shares) on rows
    that take every outcome of a staging: ordinary survivors, ties at the threshold, more survivors than the slot
    holds (the counter must still end at the exact count, the exact path runs), fewer than K (the retry ladder),
    a short row (n <= K) and an empty one; twice on one workspace, whose counters and row flags must be back at
    zero. Also with each built variant of the family's kernels (``STREAM_VARIANTS``)."""
    from gvr_topk import workspace as wsm

    n = 20000
    plan = gvr_topk.dispatch.plan_for("stream", 6, n, n, k)
    assert plan.split > 1
    sampled = reference.sample_columns(n, plan.sample, tuning.SAMPLE_GROUP)
    g = torch.Generator().manual_seed(60 + k)
    ordinary = torch.randn(n, generator=g)
    ties = torch.randint(-3, 4, (n,), generator=g).float()
    overflow = torch.rand(n, generator=g) + 1.0  # the sampled columns hold the row's smallest scores
    overflow[sampled] = -10.0 - torch.arange(sampled.numel(), dtype=torch.float32) * 1e-3
    x = torch.stack([ordinary, ties, overflow, _sample_fooling_row(n, k, seed=61), torch.randn(n, generator=g),
                     torch.randn(n, generator=g)]).to(DEV)
    kv = torch.tensor([n, n, n, n, k - 3, 0], dtype=torch.int32, device=DEV)
    x[4, k - 3:] = POISON
    x[5, :] = POISON
    ws = torch.zeros(gvr_topk.workspace_bytes(6, k), dtype=torch.uint8, device=DEV)
    for _ in range(2):
        idx = torch.full((6, k), -7, dtype=torch.int32, device=DEV)
        val = torch.full((6, k), 7.0, device=DEV)
        gvr_topk.run_varlen(x, None, kv, idx, values=val, workspace=ws, family="stream")
        _assert_exact(x, idx, kv, val)
        counts, _, flags, _, _ = wsm.stream_views(ws, plan, 6)
        assert (counts[:6] == 0).all() and (flags[:6] == 0).all()


# ---------------------------------------------------------------------------------------------------------------
# Guards: every bad argument is named, and nothing is written
# ---------------------------------------------------------------------------------------------------------------


def _good():
    x = torch.randn(4, 300, device=DEV)
    return dict(logits=x, pre_idx=None, kv_lens=torch.full((2,), 300, dtype=torch.int32, device=DEV),
                indices=torch.full((4, 16), -5, dtype=torch.int32, device=DEV), next_n=2)


BAD = [
    ("logits", dict(logits=torch.randn(4, 300, device=DEV).to(torch.float64)), TypeError),
    ("logits", dict(logits=torch.randn(4, 300, 1, device=DEV)), ValueError),
    ("logits", dict(logits=torch.randn(300, 4, device=DEV).t()), ValueError),
    ("logits", dict(logits=torch.randn(5, 300, device=DEV), indices=torch.zeros(5, 16, dtype=torch.int32,
                                                                                    device=DEV)), ValueError),
    ("indices", dict(indices=torch.zeros(4, 16, dtype=torch.int64, device=DEV)), TypeError),
    ("indices", dict(indices=torch.zeros(3, 16, dtype=torch.int32, device=DEV)), ValueError),
    ("indices", dict(indices=torch.zeros(4, 2049, dtype=torch.int32, device=DEV)), ValueError),
    ("indices", dict(indices=torch.zeros(4, 0, dtype=torch.int32, device=DEV)), ValueError),
    ("indices", dict(indices=torch.zeros(16, 4, dtype=torch.int32, device=DEV).t()), ValueError),
    ("values", dict(values=torch.zeros(4, 8, device=DEV)), ValueError),
    ("values", dict(values=torch.zeros(4, 16, dtype=torch.float16, device=DEV)), TypeError),
    ("kv_lens", dict(kv_lens=torch.full((3,), 300, dtype=torch.int32, device=DEV)), ValueError),
    ("kv_lens", dict(kv_lens=torch.full((2,), 300, dtype=torch.int64, device=DEV)), TypeError),
    ("kv_lens", dict(kv_lens=None), TypeError),
    ("next_n", dict(next_n=0), ValueError),
    ("next_n", dict(next_n=2.0), TypeError),
    ("logits", dict(next_n=3), ValueError),
    ("compress_ratio", dict(compress_ratio=3), ValueError),
    ("compress_ratio", dict(compress_ratio=0), ValueError),
    ("pre_idx", dict(pre_idx=torch.zeros(4, 16, dtype=torch.int32, device=DEV)), ValueError),
    ("pre_idx", dict(pre_idx=torch.zeros(2, 8, dtype=torch.int32, device=DEV)), ValueError),
    ("pre_idx", dict(pre_idx=torch.zeros(2, 16, dtype=torch.float32, device=DEV)), TypeError),
    ("max_seq_len", dict(max_seq_len=-1), ValueError),
    ("family", dict(family="radix"), ValueError),
    ("workspace", dict(workspace=torch.zeros(8, dtype=torch.uint8, device=DEV)), ValueError),
    ("workspace", dict(workspace="ws"), TypeError),
]


@pytest.mark.parametrize("arg,change,exc", BAD, ids=[f"{a}-{i}" for i, (a, _, _) in enumerate(BAD)])
def test_bad_input_is_named_and_writes_nothing(arg, change, exc):
    kw = _good()
    kw.update(change)
    out = kw["indices"]
    before = out.clone()
    with pytest.raises(exc, match=f"'{arg}'"):
        gvr_topk.run_varlen(kw.pop("logits"), kw.pop("pre_idx"), kw.pop("kv_lens"), kw.pop("indices"), **kw)
    assert torch.equal(out, before)


def test_device_mismatch_is_named():
    if not ON_GPU:
        pytest.skip("needs two devices (cpu and cuda)")
    kw = _good()
    with pytest.raises(ValueError, match="'kv_lens'"):
        gvr_topk.run_varlen(kw["logits"], None, kw["kv_lens"].cpu(), kw["indices"], next_n=2)


def test_forcing_reg_on_long_rows_is_refused():
    x = torch.randn(1, 20000, device=DEV)
    with pytest.raises(ValueError, match="reg"):
        _run(x, 512, _kv(1, 20000), family="reg")


def test_topk_rejects_bad_k():
    with pytest.raises(ValueError, match="'k'"):
        gvr_topk.topk(torch.randn(2, 10, device=DEV), 0)
