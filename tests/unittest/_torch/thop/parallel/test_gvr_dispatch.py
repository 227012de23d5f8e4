"""The pure dispatcher: golden plans, both sides of every threshold, every family reachable, purity."""

import pytest

from gvr_topk import dispatch
from gvr_topk import tuning
from gvr_topk.dispatch import route

pytestmark = pytest.mark.gvr_topk


@pytest.mark.parametrize("b,n,k,family", [
    (1, 4111, 2048, "reg"), (512, 4111, 512, "reg"), (1, 131075, 2048, "split"), (8, 262143, 512, "split"),
    (64, 131075, 2048, "stream"), (512, 131075, 1024, "stream"), (4096, 65536, 512, "stream"),
])
def test_golden_families(b, n, k, family):
    assert route(b, n, n, k).family == family


def test_golden_plan_fields():
    # 4111 columns: a 4096-lane tile and a 16-lane tail tile, not an 8192-lane tile.
    assert route(1, 4111, 4111, 2048) == dispatch.Plan("reg", block=4096, num_warps=8, maxnreg=tuning.REG_MAXNREG,
                                                       tail=16)
    p = route(1, 131075, 131075, 2048)
    # 65 tiles of 2048 scores: one program per tile (at most one per SM).
    assert (p.family, p.cap, p.aim, p.sample, p.split) == ("split", 8192, 3072, 2048, 65)
    assert route(8, 131075, 131075, 2048).split == 16 and route(32, 131075, 131075, 512).split == 4
    assert route(8, 16387, 16387, 2048).split == 9  # one program per 2048-score tile
    p = route(512, 16387, 16387, 512)
    assert (p.family, p.cap, p.aim, p.sample, p.split) == ("stream", 8192, 1536, 1024, 4)
    # A 512-row chunk of short rows: 4 capped select programs per SM (one wave); of long rows: 2 per SM.
    assert (p.block, p.num_warps, p.select_warps, p.select_maxnreg) == (512, 1, 4, 128)
    p = route(512, 131075, 131075, 2048)
    assert (p.block, p.num_warps, p.select_warps, p.select_maxnreg) == (1024, 1, 8, 128)
    p = route(64, 131075, 131075, 2048)
    assert (p.family, p.cap, p.aim, p.sample, p.split, p.block) == ("stream", 8192, 3072, 2048, 32, 1024)
    assert (p.select_warps, p.select_maxnreg) == (16, 0)  # 64 rows: one select program per SM, uncapped
    p = route(64, 16387, 16387, 2048)
    assert (p.family, p.split) == ("split", 2)  # short rows: 64 rows x 2 programs fill the SMs once
    # Every row count keeps the staging split within its bounds (the workspace chunk bounds the programs).
    for b in (33, 64, 100, 256, 257, 512, 4096):
        p = route(b, 262143, 262143, 1024)
        assert 1 <= p.split <= tuning.STREAM_SPLIT_MAX


def test_reg_threshold_both_sides():
    t = tuning.REG_ROUTE_MAX_N
    assert route(64, t, t, 512).family == "reg"
    assert route(512, t, t, 512).family == "reg"
    assert route(512, t + 1, t + 1, 512).family == "stream"
    assert route(64, t + 1, t + 1, 512).family == "split"  # up to SPLIT_MAX_ROWS_SHORT short rows
    assert route(64, t - 1, t - 1, 512).family == "reg"


@pytest.mark.parametrize("n,block,tail", [
    (1000, 1024, 0), (1024, 1024, 0), (1025, 1024, 16), (1041, 1024, 32), (1536, 1024, 512), (1537, 2048, 0),
    (4096, 4096, 0), (4097, 4096, 16), (4111, 4096, 16), (6144, 4096, 2048), (6145, 8192, 0), (8192, 8192, 0),
])
def test_reg_tail_tile_both_sides(n, block, tail):
    # Half the power-of-two tile plus a tail tile of at least REG_TAIL_MIN lanes and at most a quarter of that tile
    # (a larger tail saves no lanes); the tile never goes below REG_MIN_BLOCK.
    assert (tuning.REG_MIN_BLOCK, tuning.REG_TAIL_MIN) == (1024, 16)
    p = dispatch.plan_for("reg", 1, n, n, 1)
    assert (p.block, p.tail) == (block, tail)
    # One row: warps by every lane held; past one wave (a program per SM), by the main tile alone.
    assert p.num_warps == next(w for size, w in tuning.REG_WARPS if block + tail <= size)
    many = dispatch.plan_for("reg", tuning.DEFAULT_NUM_SMS + 1, n, n, 1)
    assert (many.block, many.tail) == (block, tail)
    assert many.num_warps == next(w for size, w in tuning.REG_WARPS if block <= size)


def test_reg_tail_tile_warps_at_the_wave_edge():
    # 3000 columns: a 2048-lane tile and a 1024-lane tail. Up to one program per SM the warps of 3072 lanes, past
    # it those of the 2048-lane tile; the edge follows the SM count given.
    w_all = next(w for size, w in tuning.REG_WARPS if 3072 <= size)
    w_main = next(w for size, w in tuning.REG_WARPS if 2048 <= size)
    assert w_all > w_main
    s = tuning.DEFAULT_NUM_SMS
    assert [route(b, 3000, 3000, 1024).num_warps for b in (1, s, s + 1, 512)] == [w_all, w_all, w_main, w_main]
    assert route(78, 3000, 3000, 1024, num_sms=78).num_warps == w_all
    assert route(79, 3000, 3000, 1024, num_sms=78).num_warps == w_main
    # Without a tail tile the lookup is the tile's at any row count.
    assert route(1, 8192, 8192, 1024).num_warps == route(512, 8192, 8192, 1024).num_warps


def test_reg_forced_limit_beyond_routed_limit():
    # route stops at REG_ROUTE_MAX_N; family="reg" still serves rows up to the register tile's REG_MAX_N.
    assert tuning.REG_ROUTE_MAX_N <= tuning.REG_MAX_N
    t = tuning.REG_MAX_N
    p = dispatch.plan_for("reg", 512, t, t, 2048)
    assert (p.family, p.block) == ("reg", t) and p.maxnreg == tuning.REG_MAXNREG
    with pytest.raises(ValueError, match="family='reg' holds at most"):
        dispatch.plan_for("reg", 1, t + 1, t + 1, 2048)
    assert route(512, t, t, 2048).family == "stream" and route(8, t, t, 2048).family == "split"


def test_split_threshold_both_sides():
    t, n = tuning.SPLIT_MAX_ROWS, 100000
    assert route(t - 1, n, n, 512).family == "split"
    assert route(t, n, n, 512).family == "split"
    assert route(t + 1, n, n, 512).family == "stream"
    # Short rows: split up to SPLIT_MAX_ROWS_SHORT rows of at most SPLIT_SHORT_MAX_N columns.
    t, n = tuning.SPLIT_MAX_ROWS_SHORT, tuning.SPLIT_SHORT_MAX_N
    assert route(t, n, n, 512).family == "split" and route(t + 1, n, n, 512).family == "stream"
    assert route(t, n + 1, n + 1, 512).family == "stream"
    assert route(t, 10 * n, n, 512).family == "split"  # the row width bounds the length


def test_stream_tile_both_sides():
    # Short rows stage on the smaller tile; the row width bounds the length, as for every threshold.
    t = tuning.STREAM_TILE_SHORT_MAX_N
    assert route(512, t, t, 2048).block == tuning.STREAM_TILE_SHORT
    assert route(512, t + 1, t + 1, 2048).block == tuning.STREAM_TILE
    assert route(512, 10 * t, t, 2048).block == tuning.STREAM_TILE_SHORT


def test_sample_maxima_both_sides(monkeypatch):
    # Launches of at most SAMPLE_MAXIMA_MAX_ROWS rows (the streaming family's chunk) run the sample threshold over
    # SAMPLE_MAXIMA group maxima, larger ones and the register family over every sampled key.
    monkeypatch.setattr(tuning, "SAMPLE_MAXIMA", 512)
    monkeypatch.setattr(tuning, "SAMPLE_MAXIMA_MAX_ROWS", 128)
    assert route(1, 131075, 131075, 2048).maxima == 512  # split
    assert route(128, 131075, 131075, 2048).maxima == 512  # stream, one chunk of 128 rows
    assert route(129, 131075, 131075, 2048).maxima == 0
    assert route(4096, 131075, 131075, 2048).maxima == 0  # chunks of STREAM_CHUNK_ROWS
    assert route(1, 4111, 4111, 2048).maxima == 0  # reg: no sample
    assert dispatch.plan_for("split", 32, 131075, 131075, 2048).maxima == 512
    monkeypatch.setattr(tuning, "STREAM_CHUNK_ROWS", 64)
    assert route(4096, 131075, 131075, 2048).maxima == 512  # a chunk's rows, not the launch's
    monkeypatch.setattr(tuning, "SAMPLE_MAXIMA_MAX_ROWS", 0)
    assert route(1, 131075, 131075, 2048).maxima == 0
    for bad in (3, -2, 2.0):
        monkeypatch.setattr(tuning, "SAMPLE_MAXIMA", bad)
        with pytest.raises(ValueError, match=f"tuning.SAMPLE_MAXIMA: expected 0 or a power of two, got {bad!r}"):
            route(1, 131075, 131075, 2048)


def test_stream_min_split_both_sides(monkeypatch):
    # The floor on staging programs per row raises only chunks whose share of STREAM_TARGET_PROGRAMS is below it,
    # and stays within the bounds by row length and STREAM_SPLIT_MAX.
    assert tuning.STREAM_MIN_SPLIT <= tuning.STREAM_SPLIT_MAX
    monkeypatch.setattr(tuning, "STREAM_MIN_SPLIT", 6)
    assert tuning.STREAM_TARGET_PROGRAMS == 2048  # the row counts below are its sides
    assert route(512, 131075, 131075, 2048).split == 6  # 4 by the target
    assert route(410, 131075, 131075, 2048).split == 6  # 5 by the target
    assert route(409, 131075, 131075, 2048).split == 6  # 6 by the target: the floor changes nothing from here down
    assert route(341, 131075, 131075, 2048).split == 7
    assert route(256, 131075, 131075, 2048).split == 8
    assert route(128, 131075, 131075, 2048).split == 16
    assert route(512, 16387, 16387, 2048).split == 4  # 16387 // STREAM_MIN_CHUNK bounds it
    monkeypatch.setattr(tuning, "STREAM_MIN_SPLIT", 100)
    assert route(512, 1 << 20, 1 << 20, 2048).split == tuning.STREAM_SPLIT_MAX
    monkeypatch.setattr(tuning, "STREAM_MIN_SPLIT", 0)
    assert route(512, 131075, 131075, 2048).split == 4


def test_split_tile_both_sides():
    # A split program stages through the long tile when its share (whole short tiles) holds one; the ladder's tile
    # stays the short one (launch.split).
    short, long_ = tuning.SPLIT_TILE, tuning.SPLIT_TILE_LONG
    assert long_ % short == 0 and long_ > short
    p = route(1, 131075, 131075, 2048)  # 65 programs of one short tile
    assert (p.split, p.block) == (65, short)
    p = route(8, 131075, 131075, 2048)  # 16 programs, shares of five short tiles
    assert (p.split, p.block) == (16, long_)
    assert route(64, 16387, 16387, 512).block == long_  # two programs per row, five short tiles each
    # Both sides at 8 rows (16 programs per row, split by SPLIT_TARGET_PROGRAMS): one short tile per share up to
    # 16 tiles, two past it.
    p = route(8, 16 * short, 16 * short, 512)
    assert (p.family, p.split, p.block) == ("split", 16, short)
    p = route(8, 16 * short + 1, 16 * short + 1, 512)
    assert (p.family, p.split, p.block) == ("split", 16, long_)
    assert route(8, 100 * short, 16 * short, 512).block == short  # the row width bounds the length


def test_select_register_cap_past_one_wave():
    # The select runs smaller capped programs only when a chunk has more rows than SMs: the short-row geometry on
    # rows of the short staging tile, on both sides of that tile's bound.
    t = tuning.STREAM_TILE_SHORT_MAX_N
    for num_sms in (None, 78, 132):
        sms = num_sms or tuning.DEFAULT_NUM_SMS
        for b in (sms, sms + 1):
            for n in (262143, t + 1, t):
                p = route(b, n, n, 2048, num_sms=num_sms)
                many = min(b, tuning.STREAM_CHUNK_ROWS) > sms
                if not many:
                    want = (tuning.SELECT_WARPS, 0)
                elif n <= t:
                    want = (tuning.SELECT_MANY_SHORT_WARPS, tuning.SELECT_MANY_SHORT_MAXNREG)
                else:
                    want = (tuning.SELECT_MANY_WARPS, tuning.SELECT_MANY_MAXNREG)
                assert p.family == "stream"
                assert (p.select_warps, p.select_maxnreg) == want


def test_split_launch_fits_one_wave():
    # A split program fills an SM (tuning.SPLIT_TARGET_PROGRAMS): the launch stays within the target whenever
    # SPLIT_MIN programs per row allow it.
    for num_sms in (None, 78, 132, 264):
        target = tuning.SPLIT_TARGET_PROGRAMS * (num_sms or tuning.DEFAULT_NUM_SMS) // tuning.DEFAULT_NUM_SMS
        for b in range(1, tuning.SPLIT_MAX_ROWS + 1):
            p = route(b, 262143, 262143, 2048, num_sms=num_sms)
            assert p.split * b <= target or p.split == tuning.SPLIT_MIN, (b, num_sms, p.split)


def test_capacity_thresholds():
    # One capacity for every K (tuning.CAP_BY_K says why); K past the table's last entry keeps the last capacity.
    assert dispatch.capacity(1) == 8192 and dispatch.capacity(1024) == 8192 and dispatch.capacity(2048) == 8192
    assert dispatch.capacity(4096) == tuning.CAP_BY_K[-1][1]


def test_aim_stays_between_k_and_half_the_capacity():
    for k in (1, 512, 1024, 2048):
        p = route(64, 262143, 262143, k)
        assert k < p.aim <= p.cap // 2


def test_every_family_reachable():
    seen = {route(b, n, n, k).family for b in (1, 8, 64, 512, 8192) for n in (100, 5000, 50000, 262144)
            for k in (1, 512, 2048)}
    assert seen == set(dispatch.FAMILIES)


def test_plans_within_their_regime():
    for b in (1, 2, 7, 31, 32, 33, 100, 1024, 8192):
        for n in (1, 2047, 2049, 8192, 16384, 16385, 131075, 262143, 1 << 20):
            for k in (1, 64, 512, 1024, 2048):
                p = route(b, n, n, k)
                assert p.family in dispatch.FAMILIES
                if p.family == "reg":
                    assert n <= k or p.block + p.tail >= n  # the whole row fits the register tile
                    assert p.block + p.tail <= tuning.REG_MAX_N
                else:
                    assert p.sample <= p.cap and p.aim >= k and p.cap >= 2 * k
                    assert tuning.SAMPLE_MIN <= p.sample <= tuning.SAMPLE_MAX
                    if p.family == "split":
                        assert b <= tuning.SPLIT_MAX_ROWS or (b <= tuning.SPLIT_MAX_ROWS_SHORT
                                                              and n <= tuning.SPLIT_SHORT_MAX_N)
                        assert tuning.SPLIT_MIN <= p.split <= tuning.SPLIT_MAX
                    else:
                        assert 1 <= p.split <= tuning.STREAM_SPLIT_MAX


def test_n_is_clamped_to_npad():
    assert route(1, 10**6, 4096, 512).family == "reg"


def test_scales_with_sm_count():
    assert route(1, 131075, 131075, 512, num_sms=264).split >= route(1, 131075, 131075, 512).split


def test_pure_and_total():
    a = route(3, 70000, 70000, 1000)
    b = route(3, 70000, 70000, 1000)
    assert a == b and hash(a) == hash(b)


@pytest.mark.parametrize("kwargs,exc", [
    (dict(b=0, n=10, npad=10, k=1), ValueError), (dict(b=1, n=10, npad=10, k=0), ValueError),
    (dict(b=1.0, n=10, npad=10, k=1), TypeError), (dict(b=1, n=-1, npad=10, k=1), ValueError),
])
def test_route_rejects_bad_input(kwargs, exc):
    with pytest.raises(exc):
        route(**kwargs)


def test_plan_for_rejects_unknown_family():
    with pytest.raises(ValueError, match="family"):
        dispatch.plan_for("radix", 1, 100, 100, 10)


def test_forced_split_is_refused_past_its_workspace_rows():
    m = dispatch.split_rows_max()
    # Its counters (two words per row) must stay inside the counter area's first row_slots() words, the part no
    # family leaves non-zero; the rows route sends it fit.
    assert 2 * m <= dispatch.row_slots()
    assert max(tuning.SPLIT_MAX_ROWS, tuning.SPLIT_MAX_ROWS_SHORT) <= m
    assert dispatch.plan_for("split", m, 100000, 100000, 512).family == "split"
    with pytest.raises(ValueError, match="family='split' serves at most"):
        dispatch.plan_for("split", m + 1, 100000, 100000, 512)
