"""The split family's cooperative form (``kernels/split.py``, ``launch/split.py``): the routing rule, the launch
mode, and exactness of every path of the shared selection.

On CPU the cooperative kernel runs through Triton's interpreter as separate launches (``PHASED``: a spin barrier never
returns when programs run one after another); on a GPU the same tests run its single cooperative launch
(``FUSED``), whose barriers are the difference. Every output is checked exact (values and the tie rule included),
and the row scratch must be back at rest after each call: CUDA-graph replays rely on it.
"""

import pytest
import torch
import triton
import triton.language as tl

import gvr_topk
from gvr_topk import api
from gvr_topk import dispatch
from gvr_topk import reference
from gvr_topk import tuning
from gvr_topk import workspace as wsm
from gvr_topk.kernels._common import _balanced_shares
from gvr_topk.kernels._common import _crossing_bin_counted
from gvr_topk.kernels._common import _rank_select
from gvr_topk.launch import split as lsplit
from gvr_topk.testing import check_exact

pytestmark = pytest.mark.gvr_topk

ON_GPU = torch.cuda.is_available()
DEV = "cuda" if ON_GPU else "cpu"


# ---- the routing rule (pure) -------------------------------------------------------------------------------------

@pytest.mark.parametrize("b,n,k,coop", [
    (1, 131075, 2048, True),    # 65 programs, aim 3072: the lone finisher would select on the half-capacity tile
    (1, 16387, 2048, True),     # 9 programs
    (8, 131075, 2048, True),    # 16 programs per row, 128 in all
    (1, 131075, 512, True),     # aim 1536, within SELECT_MIN_TILE: shared too (SPLIT_COOP_AIM_ABOVE 0)
    (1, 131075, 1024, True),    # aim 2048
    (64, 16387, 2048, False),   # 2 programs per row: too few to share the selection
    (32, 131075, 2048, False),  # 4 programs per row
])
def test_route_marks_the_cooperative_form(b, n, k, coop):
    plan = gvr_topk.route(b, n, n, k, num_sms=132)
    assert plan.family == "split"
    assert plan.coop is coop
    assert b * plan.split <= 132  # the rule's residency bound holds whenever the form is chosen


def test_route_rule_edges(monkeypatch):
    """Both sides of each bound: the program count per row, the aim against SELECT_MIN_TILE, the SM count, and
    the switch."""
    monkeypatch.setattr(tuning, "SPLIT_COOP_AIM_ABOVE", 2048)  # the bound as it was: rows aiming past 2048
    aim_edge = 2048 - tuning.AIM_MARGIN  # K with aim == 2048
    assert not dispatch._split_coop(1, 64, 2048, 132)
    assert dispatch._split_coop(1, 64, 2049, 132)
    assert gvr_topk.route(1, 131075, 131075, aim_edge).coop is False
    assert gvr_topk.route(1, 131075, 131075, aim_edge + 1).coop is True
    monkeypatch.setattr(tuning, "SPLIT_COOP_AIM_ABOVE", 0)
    assert gvr_topk.route(1, 131075, 131075, 64).coop is True
    m = tuning.SPLIT_COOP_MIN_SPLIT
    assert not dispatch._split_coop(1, m - 1, 4096, 132)
    assert dispatch._split_coop(1, m, 4096, 132)
    assert dispatch._split_coop(16, 8, 4096, 128) and not dispatch._split_coop(16, 8, 4096, 127)
    monkeypatch.setattr(tuning, "SPLIT_COOP", "off")
    assert gvr_topk.route(1, 131075, 131075, 2048).coop is False
    # The other families never take it.
    assert not gvr_topk.route(512, 131075, 131075, 2048).coop
    assert not gvr_topk.route(4, 4096, 4096, 2048).coop


# ---- the launch mode -----------------------------------------------------------------------------------------------

def test_coop_mode_without_a_gpu():
    plan = gvr_topk.route(1, 131075, 131075, 2048)
    assert lsplit.coop_mode(plan, 1, None) == lsplit.PHASED  # no CUDA device: the interpreter's separate launches
    assert lsplit.coop_mode(gvr_topk.route(64, 16387, 16387, 512), 64, None) == lsplit.PLAIN  # 2 programs per row
    assert lsplit.coop_mode(plan, wsm.coop_rows() + 1, None) == lsplit.PLAIN  # no scratch for that many rows


@pytest.mark.skipif(not ON_GPU, reason="needs a CUDA GPU")
def test_coop_mode_on_a_gpu(monkeypatch):
    dev = torch.device("cuda")
    plan = gvr_topk.route(1, 131075, 131075, 2048)
    assert lsplit.coop_mode(plan, 1, dev) == lsplit.FUSED
    monkeypatch.setattr(tuning, "SPLIT_COOP", "phased")
    assert lsplit.coop_mode(plan, 1, dev) == lsplit.PHASED
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    monkeypatch.setattr(tuning, "SPLIT_COOP", "fused")
    big = dispatch.Plan("split", block=plan.block, num_warps=plan.num_warps, cap=plan.cap, aim=plan.aim,
                        sample=plan.sample, split=sms + 1, coop=True)
    assert lsplit.coop_mode(big, 1, dev) == lsplit.PLAIN  # more programs than SMs: never a spin barrier


def test_slice_lanes():
    plan = gvr_topk.route(1, 131075, 131075, 2048)
    lanes = lsplit.slice_lanes(plan)
    assert lanes & (lanes - 1) == 0
    assert lanes * plan.split >= plan.cap and lanes >= 32 * plan.num_warps
    assert lsplit.slice_lanes(gvr_topk.route(1, 16387, 16387, 2048)) == 1024  # ceil(8192 / 9) = 911


@pytest.mark.parametrize("name,arg", [("SPLIT_COOP_WINDOW", "WINDOW"), ("SPLIT_COOP_LOW_RUNG", "LOW_RUNG"),
                                      ("SPLIT_COOP_OUTLINE", "OUTLINE")])
def test_switch_settings_are_checked(monkeypatch, name, arg):
    plan = gvr_topk.route(1, 131075, 131075, 2048)
    assert lsplit.family_kwargs(plan, 1)[arg] == getattr(tuning, name)
    monkeypatch.setattr(tuning, name, 1 - getattr(tuning, name))
    assert lsplit.family_kwargs(plan, 1)[arg] == getattr(tuning, name)
    monkeypatch.setattr(tuning, name, 2)
    with pytest.raises(ValueError, match=f"{name}: expected 0 or 1, got 2"):
        lsplit.family_kwargs(plan, 1)


@pytest.mark.parametrize("bad", [3, -1, 2 * tuning.CROSS_CAP, 64.0, True])
def test_rank_setting_is_checked(monkeypatch, bad):
    plan = gvr_topk.route(1, 131075, 131075, 2048)
    assert lsplit.family_kwargs(plan, 1)["RANK_MAX"] == tuning.SPLIT_COOP_RANK_MAX
    monkeypatch.setattr(tuning, "SPLIT_COOP_RANK_MAX", bad)
    with pytest.raises(ValueError, match=r"SPLIT_COOP_RANK_MAX: expected 0 or a power of two <= CROSS_CAP"):
        lsplit.family_kwargs(plan, 1)


def test_phased_launches_by_window(monkeypatch):
    """The interpreter's phased form runs all three parts with either window: the middle one also holds the shared
    tie rung's restaging."""
    calls = []

    class _Kernel:
        def __getitem__(self, grid):
            return lambda **kw: calls.append(kw.get("PHASE"))

    launch = object.__new__(lsplit.SplitLaunch)  # the launch logic alone, on stand-in kernels
    launch.kernels = (_Kernel(), _Kernel())
    launch.names = (frozenset(), frozenset())
    for window, phases in ((0, [1, 2, 3]), (1, [1, 2, 3])):
        calls.clear()
        launch.run(grid=(2, 1), COOP=lsplit.PHASED, WINDOW=window, num_warps=8)
        assert calls == phases


# ---- exactness of every path ---------------------------------------------------------------------------------------

def _rows(kind: str, rows: int, n: int, k: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, n, generator=g)
    if kind == "spike":  # one huge score: coarse bins, a crossing bin past CROSS_CAP (the finisher's whole select)
        x[:, 11] = 1e30
    elif kind == "block":  # exactly K scores tie on top: the whole crossing bin is needed
        for r in range(rows):
            x[r, torch.randperm(n, generator=g)[:k]] = 100.0
    elif kind == "ties":  # bf16-rounded scores: many ties at the K-th key, the lowest columns must win
        x = x.to(torch.bfloat16).to(torch.float32)
    elif kind == "fooling":  # the sampled positions hold the largest scores: too few survivors, the retry ladder
        plan = gvr_topk.route(rows, n, n, k)
        cols = reference.sample_columns(n, plan.sample, tuning.SAMPLE_GROUP)
        x = torch.rand(rows, n, generator=g)
        x[:, cols] = 10.0 + torch.arange(cols.numel(), dtype=torch.float32) * 1e-3
    elif kind == "pm_inf":  # 1% +inf, 1% -inf: the window's top is the largest finite sampled key
        u = torch.rand(rows, n, generator=g)
        x = x.masked_fill(u < 0.01, float("inf")).masked_fill(u > 0.99, float("-inf"))
    elif kind == "inf_heavy":  # more +inf than K: the threshold is +inf's key, above every finite sampled key
        x = x.masked_fill(torch.rand(rows, n, generator=g) < 0.2, float("inf"))
    elif kind == "equal":  # every score tied: the staging overflows the slot, the tie rung
        x = torch.ones(rows, n)
    elif kind == "zeros":  # fewer than K positive scores, then +-0.0: the K-th key is a zero, and a threshold at
        # +0.0's key also admits -0.0, whose key lies below it (and below the sample's window)
        x = -torch.rand(rows, n, generator=g) - 1.0
        for r in range(rows):
            perm = torch.randperm(n, generator=g)
            x[r, perm[:k - 48]] = torch.rand(k - 48, generator=g) + 1.0
            x[r, perm[k - 48:k + 1500]] = torch.where(torch.rand(1548, generator=g) < 0.5, 0.0, -0.0)
    return x.to(DEV)


def _scratch_at_rest(ws: torch.Tensor, rows: int) -> bool:
    """Counters of every row and the cooperative scratch's counters and histogram (its compacted candidates need no
    reset)."""
    words = ws.view(torch.int32)
    if (words[:2 * rows] != 0).any():
        return False
    coop = wsm.coop_view(ws).view(-1, wsm.coop_words())[:rows]
    return bool((coop[:, :8 + (1 << tuning.SPLIT_COOP_BIN_BITS)] == 0).all())


def _call_twice(x, k, kv, hint=None, values=True):
    rows = x.shape[0]
    ws = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV)
    for _ in range(2):
        idx = torch.full((rows, k), -7, dtype=torch.int32, device=DEV)
        val = torch.full((rows, k), 7.0, device=DEV) if values else None
        gvr_topk.run_varlen(x, hint, kv, idx, values=val, workspace=ws, family="split")
        problems = check_exact(x, idx, kv_lens=kv, values=val)
        assert not problems, "\n".join(problems)
        assert _scratch_at_rest(ws, rows), "the row scratch is not back at rest"
    return ws


@pytest.fixture(params=[0, 1], ids=["window_admitted", "window_sample"])
def window(request, monkeypatch):
    """Both row-histogram windows of the cooperative form (``tuning.SPLIT_COOP_WINDOW``)."""
    monkeypatch.setattr(tuning, "SPLIT_COOP_WINDOW", request.param)
    api.clear_launch_cache()
    yield request.param
    api.clear_launch_cache()


@pytest.mark.parametrize("kind", ["randn", "spike", "block", "ties", "fooling", "equal", "zeros", "pm_inf",
                                  "inf_heavy"])
def test_every_path_is_exact(kind, window):
    rows, n, k = 2, 20000, 2048
    plan = gvr_topk.route(rows, n, n, k)
    assert plan.coop, "this shape must take the cooperative form"
    x = _rows(kind, rows, n, k, seed=7)
    _call_twice(x, k, torch.full((rows,), n, dtype=torch.int32, device=DEV))


@pytest.mark.parametrize("k", [64, 512])
@pytest.mark.parametrize("kind", ["randn", "ties"])
def test_small_k_rows_share_the_selection(kind, k):
    """Rows aiming within the smallest select tile take the cooperative form too (``SPLIT_COOP_AIM_ABOVE``)."""
    rows, n = 2, 20000
    assert gvr_topk.route(rows, n, n, k).coop, "this shape must take the cooperative form"
    x = _rows(kind, rows, n, k, seed=19)
    _call_twice(x, k, torch.tensor([n, n - 5], dtype=torch.int32, device=DEV))


@pytest.mark.parametrize("hint", ["previous", "garbage"])
def test_hinted_rows(hint):
    """Hinted mode: the hint plays no part on the accept path and rescues the retry ladder's rows."""
    rows, n, k = 2, 20000, 2048
    x = _rows("fooling", rows, n, k, seed=9)
    if hint == "previous":
        pre = torch.topk(x, k, dim=1).indices.to(torch.int32)
    else:
        pre = torch.full((rows, k), -1, dtype=torch.int32, device=DEV)
    _call_twice(x, k, torch.full((rows,), n, dtype=torch.int32, device=DEV), hint=pre)


def test_varlen_rows_of_every_length(window):
    """Rows of one launch take different paths (longer than the slot, within the slot, at K + 1, at most K, empty)
    and a row's programs never wait for another row's."""
    n, k = 20000, 2048
    lens = [n, 9000, 8192, k + 1, k, 100, 0, n - 3]
    x = _rows("randn", len(lens), n, k, seed=11)
    kv = torch.tensor(lens, dtype=torch.int32, device=DEV)
    assert gvr_topk.route(len(lens), n, n, k).coop
    _call_twice(x, k, kv)


def test_plain_and_cooperative_agree(monkeypatch):
    """Both forms are exact on the same rows and pick the same index set (the tie rule fixes it)."""
    rows, n, k = 2, 20000, 2048
    x = _rows("ties", rows, n, k, seed=13)
    kv = torch.full((rows,), n, dtype=torch.int32, device=DEV)
    got = {}
    for mode in ("fused", "off"):
        monkeypatch.setattr(tuning, "SPLIT_COOP", mode)
        api.clear_launch_cache()
        try:
            idx, _ = gvr_topk.topk(x, k, kv_lens=kv)
        finally:
            api.clear_launch_cache()
        assert not check_exact(x, idx, kv_lens=kv)
        got[mode] = torch.sort(idx.to(torch.int64), dim=1).values.cpu()
    assert torch.equal(got["fused"], got["off"])


@pytest.mark.parametrize("n,coop", [(20000, False), (40000, True)])
@pytest.mark.parametrize("kind", ["randn", "fooling", "equal"])
def test_long_staging_tile(monkeypatch, kind, n, coop):
    """Shares of two or more short tiles stage through the long tile (``dispatch._split_tile``), in both forms; the
    retry ladder (too few survivors; a slot overflowed on ties) keeps the short tile."""
    monkeypatch.setattr(tuning, "SPLIT_MIN_CHUNK", 2 * tuning.SPLIT_TILE)  # fewer programs: longer shares
    rows, k = 2, 2048
    plan = gvr_topk.route(rows, n, n, k)
    assert (plan.family, plan.block, plan.coop) == ("split", tuning.SPLIT_TILE_LONG, coop)
    api.clear_launch_cache()
    try:
        x = _rows(kind, rows, n, k, seed=17)
        _call_twice(x, k, torch.tensor([n, n - 4097], dtype=torch.int32, device=DEV))
    finally:
        api.clear_launch_cache()


# ---- the finisher's select of the crossing bin -------------------------------------------------------------------

@triton.jit
def _rank_select_kernel(keys_ptr, cols_ptr, cand_ptr, need_ptr, out_ptr, M: tl.constexpr):
    j = tl.arange(0, M)
    keys = tl.load(keys_ptr + j).to(tl.uint32, bitcast=True)
    sel = _rank_select(keys, tl.load(cols_ptr + j), tl.load(cand_ptr + j) != 0, tl.load(need_ptr))
    tl.store(out_ptr + j, sel.to(tl.int32))


@pytest.mark.parametrize("seed", range(6))
def test_rank_select_follows_the_tie_rule(seed):
    """``_rank_select`` picks exactly ``need`` candidates: the larger keys first, then the lowest columns among the
    tied, as ``_select_tile`` does; keys span the whole uint32 range (both signs of float32) with many ties, and
    columns are in any order."""
    m = 64
    g = torch.Generator().manual_seed(seed)
    pool = torch.tensor([0, 1, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xBF800000, 0xFFFFFFFF], dtype=torch.int64)
    keys = pool[torch.randint(0, pool.numel(), (m,), generator=g)]
    keys = torch.where(torch.rand(m, generator=g) < 0.3, torch.randint(0, 1 << 32, (m,), generator=g), keys)
    cols = torch.randperm(1000, generator=g)[:m].to(torch.int32)
    cand = torch.rand(m, generator=g) < 0.8
    count = int(cand.sum())
    for need in sorted({1, count // 2, count - 1, count} - {0}):
        out = torch.zeros(m, dtype=torch.int32, device=DEV)
        _rank_select_kernel[(1,)](keys.to(torch.int32).to(DEV), cols.to(DEV), cand.to(torch.int32).to(DEV),
                                  torch.tensor([need], dtype=torch.int32, device=DEV), out, M=m, num_warps=4)
        idx = cand.nonzero().flatten().tolist()
        want = sorted(idx, key=lambda i: (-int(keys[i]), int(cols[i])))[:need]
        assert sorted(out.cpu().nonzero().flatten().tolist()) == sorted(want), f"need={need}"


@triton.jit
def _crossing_bin_counted_kernel(hist_ptr, count, need, out_ptr, NBINS: tl.constexpr):
    b, above, in_b = _crossing_bin_counted(tl.load(hist_ptr + tl.arange(0, NBINS)), count, need, NBINS)
    tl.store(out_ptr, b)
    tl.store(out_ptr + 1, above)
    tl.store(out_ptr + 2, in_b)


@pytest.mark.parametrize("need_at", ["top", "middle", "bin_1", "bin_0", "all"])
def test_crossing_bin_with_bin_0_from_the_count(need_at):
    """The row histogram leaves bin 0 uncounted (it reads 0); ``_crossing_bin_counted`` takes it as the row's count
    minus the other bins: the crossing bin, the entries above it and in it, as on the full histogram."""
    nbins = 64
    g = torch.Generator().manual_seed(5)
    full = torch.randint(0, 4, (nbins,), generator=g)
    full[0], full[1] = 37, 5
    count = int(full.sum())
    above_1 = int(full[1:].sum())
    need = {"top": 1, "middle": int(full[nbins // 2:].sum()), "bin_1": above_1, "bin_0": above_1 + 1,
            "all": count}[need_at]
    counted = full.clone()
    counted[0] = 0
    out = torch.zeros(3, dtype=torch.int32, device=DEV)
    _crossing_bin_counted_kernel[(1,)](counted.to(torch.int32).to(DEV), count, need, out, NBINS=nbins, num_warps=4)
    at_or_above = torch.flip(torch.cumsum(torch.flip(full, [0]), 0), [0])
    b = int((at_or_above >= need).nonzero().max())
    assert out.cpu().tolist() == [b, int(at_or_above[b] - full[b]), int(full[b])]
    assert (b == 0) == (need_at in ("bin_0", "all"))


@pytest.fixture(params=[0, 2, 64], ids=["radix", "rank_max_2", "rank_max_64"])
def rank_max(request, monkeypatch):
    """The finisher's two selects of the crossing bin (``tuning.SPLIT_COOP_RANK_MAX``): radix levels only, the rank
    for bins of at most 2 candidates (the radix otherwise), the rank up to 64."""
    monkeypatch.setattr(tuning, "SPLIT_COOP_RANK_MAX", request.param)
    api.clear_launch_cache()
    yield request.param
    api.clear_launch_cache()


@pytest.mark.parametrize("kind", ["randn", "ties"])
def test_crossing_bin_by_rank_or_radix(kind, rank_max):
    """A crossing bin of a few candidates, partly needed (the host mirror says so, so the finisher's select runs),
    selected exactly by either select."""
    rows, n, k = 2, 20000, 2048
    plan = gvr_topk.route(rows, n, n, k)
    assert plan.coop
    x = _rows(kind, rows, n, k, seed=29)
    for r in range(rows):
        in_b, need = reference.coop_crossing_bin(reference.order_keys(x[r].cpu()).to(torch.int64), k, plan)
        assert need < in_b <= 64, (r, in_b, need)
    _call_twice(x, k, torch.full((rows,), n, dtype=torch.int32, device=DEV))


# ---- the shared tie rung ---------------------------------------------------------------------------------------------

def _tie_rows(kind: str, rows: int, n: int, k: int, seed: int) -> torch.Tensor:
    """Rows whose staging overflows the slot because a huge number of scores tie at the threshold's key."""
    g = torch.Generator().manual_seed(seed)
    if kind == "two_values":  # ~n/2 ties on top (past the slot), every program holds some, several write theirs
        return torch.randint(0, 2, (rows, n), generator=g).to(torch.float32).to(DEV)
    if kind == "neg_inf_tail":  # fewer finite scores than K, then -inf: the finite ones and the first -inf win
        x = torch.randn(rows, n, generator=g)
        x[:, n // 128:] = float("-inf")
        return x.to(DEV)
    if kind == "ties_above":  # 1000 scores above the tied key, spread over every program's share of the slot
        x = torch.where(torch.rand(rows, n, generator=g) < 0.5, 1.0, 0.0)
        for r in range(rows):
            x[r, torch.randperm(n, generator=g)[:1000]] = 2.0 + torch.rand(1000, generator=g)
        return x.to(DEV)
    if kind == "relu":  # fewer than K positive scores, every other one +0.0 (a ReLU's zeros): ties at +0.0's key
        x = torch.zeros(rows, n)
        for r in range(rows):
            x[r, torch.randperm(n, generator=g)[:k - 48]] = torch.rand(k - 48, generator=g) + 1.0
        return x.to(DEV)
    raise ValueError(kind)


def _tie_counts(ws: torch.Tensor, rows: int, split: int) -> torch.Tensor:
    """The per-program tie counts the shared tie rung leaves in each row's scratch (they need no reset)."""
    coop = wsm.coop_view(ws).view(-1, wsm.coop_words())[:rows].cpu()
    at = 8 + (1 << tuning.SPLIT_COOP_BIN_BITS)
    return coop[:, at:at + split]


def _share_ties(x: torch.Tensor, n: int, k: int, plan) -> torch.Tensor:
    """Host count of each program's ties at the row's K-th largest order key (``_share_bounds``' shares)."""
    keys = reference.order_keys(x[:n].cpu())
    kth = torch.sort(keys, descending=True).values[k - 1]
    tiles = -(-n // plan.block)
    share = -(-tiles // plan.split) * plan.block
    return torch.tensor([int((keys[p * share:min((p + 1) * share, n)] == kth).sum()) for p in range(plan.split)])


@pytest.mark.parametrize("kind", ["equal", "two_values", "neg_inf_tail", "ties_above", "relu"])
def test_tie_rows_share_the_tie_rung(kind, window):
    """Rows of ties are finished by all of the row's programs: exact (values, tie rule), the scratch at rest, and
    each program's count of its share's ties left where the rung keeps them, which shows the shared rung ran."""
    rows, n, k = 2, 20000, 2048
    plan = gvr_topk.route(rows, n, n, k)
    assert plan.coop, "this shape must take the cooperative form"
    x = torch.ones(rows, n, device=DEV) if kind == "equal" else _tie_rows(kind, rows, n, k, seed=23)
    lens = [n, n - 5]
    kv = torch.tensor(lens, dtype=torch.int32, device=DEV)
    ws = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV)
    for _ in range(2):
        idx = torch.full((rows, k), -7, dtype=torch.int32, device=DEV)
        val = torch.full((rows, k), 7.0, device=DEV)
        gvr_topk.run_varlen(x, None, kv, idx, values=val, workspace=ws, family="split")
        problems = check_exact(x, idx, kv_lens=kv, values=val)
        assert not problems, "\n".join(problems)
        assert _scratch_at_rest(ws, rows), "the row scratch is not back at rest"
        got = _tie_counts(ws, rows, plan.split)
        for r, length in enumerate(lens):
            assert torch.equal(got[r], _share_ties(x[r], length, k, plan)), f"row {r}: per-program tie counts"


def test_tie_rung_without_enough_ties_goes_on_down_the_ladder(every_sampled_key):
    """A threshold at +0.0's key admits -0.0 too, which is no tie of +0.0: here the row holds too few +0.0 to fill
    K, so the shared rung must leave the row to the finisher's retry ladder, which finds the -0.0 winners. The
    sample is built around the whole sample's ranks (``every_sampled_key``)."""
    rows, n, k = 1, 20000, 2048
    plan = gvr_topk.route(rows, n, n, k)
    assert plan.coop and plan.maxima == 0
    cols = reference.sample_columns(n, plan.sample, tuning.SAMPLE_GROUP)
    rank = reference.sample_rank(n, plan.aim, plan.sample)
    x = torch.full((n,), -0.0)
    # The sample: rank - 5 positives, 20 +0.0, the rest a negative value whose order key makes +0.0's key a bin
    # edge at both histogram levels, so the sample threshold is +0.0's key itself.
    x[cols] = torch.tensor([0xBFFFFFFF - (1 << 32)], dtype=torch.int32).view(torch.float32)  # order key 0x40000000
    x[cols[:rank - 5]] = torch.rand(rank - 5, generator=torch.Generator().manual_seed(3)) + 1.0
    x[cols[rank - 5:rank + 15]] = 0.0
    thr = reference.sample_threshold(reference.order_keys(x), rank, plan.sample, tuning.SAMPLE_GROUP, plan.maxima)
    if thr != 0x80000000:  # the construction depends on the bin layout; say so rather than test something else
        pytest.fail(f"construction: the sample threshold is {thr:#x}, not +0.0's key; pick another filler value")
    x = x[None, :].to(DEV)
    ws = _call_twice(x, k, torch.full((rows,), n, dtype=torch.int32, device=DEV))
    # The shared rung ran and counted the row's 20 ties at +0.0's key (too few), so the ladder took the row.
    assert int(_tie_counts(ws, rows, plan.split).sum()) == 20


@pytest.fixture(params=[0, 1], ids=["low_rung_finisher", "low_rung_shared"])
def low_rung(request, monkeypatch):
    """The retry ladder's first rung on the finisher alone (0) or shared by the row's programs (1,
    ``tuning.SPLIT_COOP_LOW_RUNG``)."""
    monkeypatch.setattr(tuning, "SPLIT_COOP_LOW_RUNG", request.param)
    api.clear_launch_cache()
    yield request.param
    api.clear_launch_cache()


def _first_rung_counts(x: torch.Tensor, plan) -> list:
    """Host mirror, per row of ``x`` (CPU, full length): (the staging's count, the first rung's count)."""
    keys = reference.order_keys(x)
    rank = reference.sample_rank(x.shape[1], plan.aim, plan.sample)
    assert rank < plan.sample, "the first rung needs a lower sample rank"
    out = []
    for r in range(x.shape[0]):
        count = int((keys[r] >= reference.sample_threshold(keys[r], rank, plan.sample, tuning.SAMPLE_GROUP,
                                                             plan.maxima)).sum())
        retry = reference.retry_rank(rank, count, plan.aim, plan.sample)
        again = int((keys[r] >= reference.sample_threshold(keys[r], retry, plan.sample, tuning.SAMPLE_GROUP,
                                                             plan.maxima)).sum())
        out.append((count, again))
    return out


@pytest.mark.parametrize("hint", ["none", "previous"])
def test_staging_under_k_takes_the_first_rung(low_rung, hint, every_sampled_key, under_k_row):
    """Stagings a little under K whose first rung (a lower sample rank) lands within [K, CAP] (checked on the host
    mirror first), so the row is selected from that rung's restaging: by the row's programs together (their
    restaging through the scratch, a second row barrier) or by the finisher alone; exact, the scratch at rest."""
    rows, n, k = 2, 20000, 2048
    plan = gvr_topk.route(rows, n, n, k)
    assert plan.coop and plan.maxima == 0
    x = torch.stack([under_k_row(n, k, seed=60 + r) for r in range(rows)])
    for count, again in _first_rung_counts(x, plan):
        assert count < k <= again <= plan.cap, (count, again)
    x = x.to(DEV)
    pre = torch.topk(x, k, dim=1).indices.to(torch.int32) if hint == "previous" else None
    _call_twice(x, k, torch.full((rows,), n, dtype=torch.int32, device=DEV), hint=pre)


@pytest.mark.parametrize("hint", ["none", "garbage"])
def test_first_rung_still_under_k_goes_on_down_the_ladder(low_rung, hint):
    """Rows whose sampled positions hold their largest scores: the first rung's restaging is still under K (the
    whole sample is too few at K=2048), so the finisher goes on from it (the hint, the exact whole-row path)."""
    rows, n, k = 2, 20000, 2048
    plan = gvr_topk.route(rows, n, n, k)
    assert plan.coop
    x = _rows("fooling", rows, n, k, seed=31)
    for count, again in _first_rung_counts(x.cpu(), plan):
        assert count <= again < k, (count, again)
    pre = torch.full((rows, k), -1, dtype=torch.int32, device=DEV) if hint == "garbage" else None
    _call_twice(x, k, torch.full((rows,), n, dtype=torch.int32, device=DEV), hint=pre)


@pytest.fixture(params=[0, 1], ids=["inlined", "outlined"])
def outline(request, monkeypatch):
    """The cooperative kernel's rare paths inlined (0) or compiled as calls (1, ``tuning.SPLIT_COOP_OUTLINE``); the
    interpreter runs both alike, a GPU compiles two kernels."""
    monkeypatch.setattr(tuning, "SPLIT_COOP_OUTLINE", request.param)
    api.clear_launch_cache()
    yield request.param
    api.clear_launch_cache()


def test_rare_paths_inlined_or_outlined(outline, low_rung, every_sampled_key, under_k_row):
    """One launch whose three rows take the three rare paths, each checked on the host first: a row of ties (the
    shared tie rung, seen by its per-program tie counts), a staging a little under K (the first rung, shared or on
    the finisher), a staging under K whose first rung is still under K (the finisher's ladder down to the exact
    whole-row path); exact, the scratch at rest."""
    n, k = 20000, 2048
    plan = gvr_topk.route(3, n, n, k)
    assert plan.coop and plan.maxima == 0
    x = torch.stack([torch.ones(n), under_k_row(n, k, seed=60), _rows("fooling", 1, n, k, seed=31)[0].cpu()])
    (_, _), (count, again), (low, still) = _first_rung_counts(x, plan)
    assert count < k <= again <= plan.cap and low <= still < k, (count, again, low, still)
    x = x.to(DEV)
    ws = _call_twice(x, k, torch.full((3,), n, dtype=torch.int32, device=DEV))
    assert torch.equal(_tie_counts(ws, 1, plan.split)[0], _share_ties(x[0], n, k, plan)), "the tie rung did not run"


@pytest.mark.parametrize("rank_max", [2], indirect=True)
def test_short_rows_and_radix_bins_inlined_or_outlined(outline, rank_max):
    """The cooperative kernel's two other rare paths, in both settings of ``tuning.SPLIT_COOP_OUTLINE``, in one
    launch: rows no longer than K (their part 0 writes them whole) and crossing bins past the all-pairs rank
    (SPLIT_COOP_RANK_MAX 2 sends a bin of 3 or more candidates to the finisher's radix select; the host mirror
    checks that the long rows' bins do); exact, the scratch at rest."""
    n, k = 20000, 2048
    lens = [n, k, 100, n]
    x = _rows("ties", len(lens), n, k, seed=29)
    plan = gvr_topk.route(len(lens), n, n, k)
    assert plan.coop
    for r in (0, 3):
        in_b, need = reference.coop_crossing_bin(reference.order_keys(x[r].cpu()).to(torch.int64), k, plan)
        assert need < in_b and 2 < in_b <= tuning.CROSS_CAP, (r, in_b, need)
    _call_twice(x, k, torch.tensor(lens, dtype=torch.int32, device=DEV))


# ---- the staging shared out by row length (tuning.SPLIT_BALANCE) ---------------------------------------------------

@pytest.mark.parametrize("lengths,programs", [
    ([131072] * 4 + [81280] * 4 + [66386] * 4 + [1023] * 4, 128),  # the benchmark's varlen batch of 16 rows
    ([131075] * 8, 128),  # rows of one length: SPLIT each, as without the option
    ([100, 20000, 9000, 0, 19997, 2049], 60),
    ([2049], 65), ([0, 5], 8), ([1 << 24, 3000, 3000], 3),
])
def test_balanced_shares_host_mirror(lengths, programs):
    k, tile = 2048, 2048
    shares = reference.balanced_shares(lengths, k, tile, programs)
    tiles = [-(-n // tile) for n in lengths]
    assert sum(shares) <= programs
    for n, t, s in zip(lengths, tiles, shares):
        assert (s == 0) if n <= k else (1 <= s <= t)
    longs = [(t, s) for n, t, s in zip(lengths, tiles, shares) if n > k]
    assert all(s1 <= s2 for (t1, s1), (t2, s2) in zip(sorted(longs), sorted(longs)[1:]))  # longer rows, no fewer
    if len(set(lengths)) == 1 and lengths[0] > k:
        assert shares == [min(programs // len(lengths), tiles[0])] * len(lengths)


@triton.jit
def _shares_probe(kv_ptr, out_ptr, next_n, cr_shift, n_bound, K: tl.constexpr, TILE: tl.constexpr,
                  SPLIT: tl.constexpr, ROWS_BLOCK: tl.constexpr):
    part = tl.program_id(0)
    row = tl.program_id(1)
    q = row * SPLIT + part
    srow, spart, ssplit, srow_n, stagers = _balanced_shares(q, row, tl.num_programs(1), ROWS_BLOCK, kv_ptr, next_n,
                                                            cr_shift, n_bound, K, TILE, SPLIT * tl.num_programs(1))
    tl.store(out_ptr + q * 5, srow)
    tl.store(out_ptr + q * 5 + 1, spart)
    tl.store(out_ptr + q * 5 + 2, ssplit)
    tl.store(out_ptr + q * 5 + 3, stagers)
    tl.store(out_ptr + q * 5 + 4, srow_n)


@pytest.mark.parametrize("kv,next_n,cr,split", [
    ([400000, 40, 16388, 90000], 1, 4, 8),  # compressed rows: 100000, 10 (short), 4097, 22500 columns
    ([20000, 3000, 20000], 2, 1, 6),
    ([131072] * 3, 1, 1, 5),
    ([5, 9], 3, 1, 4),  # every row short: nothing to stage
])
def test_balanced_shares_kernel_covers_every_share_once(kv, next_n, cr, split):
    """The kernels' shares (``_common._balanced_shares``) equal the host mirror's, every program knows its row's
    stagers, and the staging programs of a row are exactly parts 0 .. split - 1 of it, once each: the cooperative
    form's row barrier waits for that count, so a mismatch would hang it on a GPU."""
    k, tile = 2048, 2048
    kv_t = torch.tensor(kv, dtype=torch.int32, device=DEV)
    rows = len(kv) * next_n
    n_bound = max(kv) // cr
    lengths = reference.row_lengths(kv_t, rows, n_bound, next_n=next_n, compress_ratio=cr).tolist()
    shares = reference.balanced_shares(lengths, k, tile, split * rows)
    out = torch.full((rows * split, 5), -9, dtype=torch.int32, device=DEV)
    _shares_probe[(split, rows)](kv_t, out, next_n, cr.bit_length() - 1, n_bound, K=k, TILE=tile, SPLIT=split,
                                 ROWS_BLOCK=1 << (rows - 1).bit_length())
    got = out.cpu().tolist()
    staged = sorted((r, p) for r, p, s, _, _ in got if s > 0)
    assert staged == sorted((r, p) for r, s in enumerate(shares) for p in range(s))
    assert all(s == shares[r] and n == lengths[r] for r, _, s, _, n in got if s > 0)  # the staged row's length too
    assert [got[row * split][3] for row in range(rows)] == shares


def _balanced(monkeypatch, on: int):
    monkeypatch.setattr(tuning, "SPLIT_BALANCE", on)
    api.clear_launch_cache()


@pytest.mark.parametrize("kind", ["randn", "equal", "ties"])
def test_balanced_staging_is_exact(monkeypatch, window, kind):
    """A varlen launch with the staging shared out by length: programs stage rows of other grid positions (the
    short first row's programs stage the second), a row's stagers differ from SPLIT, and the cooperative selection
    still goes by grid position. Exact and at rest after two calls, in the cooperative form and the plain one."""
    n, k = 20000, 2048
    lens = [100, n, 9000, 0, n - 3, k + 1]
    rows = len(lens)
    plan = gvr_topk.route(rows, n, n, k)
    assert plan.coop and plan.split * rows == 60
    shares = reference.balanced_shares(lens, k, plan.block, plan.split * rows)
    assert shares[0] == 0 and shares[2] != plan.split  # the case this test is for
    x = _rows(kind, rows, n, k, seed=23)
    kv = torch.tensor(lens, dtype=torch.int32, device=DEV)
    _balanced(monkeypatch, 1)
    try:
        _call_twice(x, k, kv)
        monkeypatch.setattr(tuning, "SPLIT_COOP", "off")
        api.clear_launch_cache()
        _call_twice(x, k, kv)
    finally:
        _balanced(monkeypatch, 0)


def test_balanced_hinted_and_uniform(monkeypatch):
    """Hinted calls take the shares too (the hint goes by the row selected, not the row staged), and a launch
    without ``kv_lens`` (rows of one length) is untouched by the option."""
    n, k = 20000, 2048
    x = _rows("fooling", 3, n, k, seed=29)
    kv = torch.tensor([n, 3000, n - 1], dtype=torch.int32, device=DEV)
    pre = torch.topk(x, k, dim=1).indices.to(torch.int32)
    _balanced(monkeypatch, 1)
    try:
        _call_twice(x, k, kv, hint=pre)
        idx = torch.full((3, k), -7, dtype=torch.int32, device=DEV)
        gvr_topk.run(x, None, n, idx, family="split")
        assert not check_exact(x, idx, n_valid=n)
    finally:
        _balanced(monkeypatch, 0)


def test_balance_setting_is_checked(monkeypatch):
    plan = gvr_topk.route(1, 131075, 131075, 2048)
    assert lsplit.family_kwargs(plan, 3)["ROWS_BLOCK"] == (4 if tuning.SPLIT_BALANCE else 1)
    monkeypatch.setattr(tuning, "SPLIT_BALANCE", 1)
    assert lsplit.family_kwargs(plan, 3)["ROWS_BLOCK"] == 4 and lsplit.family_kwargs(plan, 4)["ROWS_BLOCK"] == 4
    monkeypatch.setattr(tuning, "SPLIT_BALANCE", 2)
    with pytest.raises(ValueError, match="SPLIT_BALANCE: expected 0 or 1, got 2"):
        lsplit.family_kwargs(plan, 1)
