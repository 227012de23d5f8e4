"""The staging pass on its own: what a threshold admits, and what lands in the slot.

``_stage_share`` compares each score once against the float ``_key_floor(thr)`` instead of comparing order keys.
Exactness rests on two properties of the admitted set, checked here on rows that hold every kind of float32 (signed
zeros, infinities, NaNs of both signs, subnormals) against thresholds at the edges of the key space:

* it contains every score whose order key reaches the threshold (nothing the selection needs is missed);
* it is upward closed in order-key order (all admitted keys above all rejected keys), so when it holds at least K
  scores it holds the top K.

The counter must hold the exact size of the admitted set, and the slot exactly its columns and raw float bits.
On CPU the kernel runs through Triton's interpreter (tests/conftest.py).
"""

import re

import pytest
import torch
import triton
import triton.language as tl

from gvr_topk import reference
from gvr_topk import tuning
from gvr_topk.kernels import stream as stream_kernels
from gvr_topk.kernels._common import BALLOT_ASM
from gvr_topk.kernels._common import _lane_rank
from gvr_topk.kernels._common import _load_tile
from gvr_topk.kernels._common import _share_bounds
from gvr_topk.kernels._common import _stage_share
from gvr_topk.kernels._common import _stage_share_after
from gvr_topk.kernels._common import _stage_share_prefetched
from gvr_topk.kernels._common import _stage_share_sparse
from gvr_topk.kernels._common import _tile_offsets
from gvr_topk.kernels._common import _unaligned

pytestmark = pytest.mark.gvr_topk

DEV = "cuda" if torch.cuda.is_available() else "cpu"
CAP = 4096


@triton.jit
def _stage_row_kernel(row_ptr, thr_ptr, count_ptr, keys_ptr, cols_ptr, span_ptr, hist_ptr, win_ptr, shift, n,
                      CAP: tl.constexpr, TILE: tl.constexpr, SPLIT: tl.constexpr, LANES: tl.constexpr,
                      PATH: tl.constexpr, SPAN: tl.constexpr, HIST: tl.constexpr, NBINS: tl.constexpr):
    """PATH 0: ``_stage_share``. 1: the streaming family's stage kernel, the first tile loaded before the threshold
    (``_stage_share_after``). 2: the split family's, one tile in flight ahead (``_stage_share_prefetched``), writing
    the admitted key span to ``span_ptr`` when SPAN, counting the keys it stages inside the slot into the NBINS-bin
    histogram at ``hist_ptr`` over the window from the key at ``win_ptr`` (bins of 2**shift keys) when HIST. 3 and
    4: the streaming stage kernel's survivors-only staging (``_stage_share_sparse``, ``tuning.STREAM_STAGE_SPARSE``),
    without and with its look-ahead; 5: with the look-ahead and each tile's reservation read one tile later."""
    part = tl.program_id(0)
    start, end = _share_bounds(n, part, SPLIT, TILE)
    if PATH == 1:
        x0 = _load_tile(row_ptr, start + _tile_offsets(TILE, LANES), end, True)
        thr = tl.load(thr_ptr).to(tl.uint32, bitcast=True)
        _stage_share_after(x0, row_ptr, start, end, thr, count_ptr, keys_ptr, cols_ptr, CAP, TILE, LANES)
    elif PATH == 2:
        x0 = _load_tile(row_ptr, start + _tile_offsets(TILE, LANES), end, True)
        thr = tl.load(thr_ptr).to(tl.uint32, bitcast=True)
        win_lo = tl.load(win_ptr).to(tl.uint32, bitcast=True)
        lo, hi = _stage_share_prefetched(x0, row_ptr, start, end, thr, count_ptr, keys_ptr, cols_ptr, CAP, TILE,
                                         LANES, SPAN, hist_ptr, win_lo, shift, HIST, NBINS)
        if SPAN:
            uspan = span_ptr.to(tl.pointer_type(tl.uint32))
            tl.atomic_max(uspan, 0xFFFFFFFF - lo)
            tl.atomic_max(uspan + 1, hi)
    elif PATH >= 3:
        x0 = _load_tile(row_ptr, start + _tile_offsets(TILE, LANES), end, True)
        thr = tl.load(thr_ptr).to(tl.uint32, bitcast=True)
        _stage_share_sparse(x0, row_ptr, start, end, thr, count_ptr, keys_ptr, cols_ptr, CAP, TILE, LANES, PATH - 3)
    else:
        thr = tl.load(thr_ptr).to(tl.uint32, bitcast=True)
        _stage_share(row_ptr, start, end, thr, count_ptr, keys_ptr, cols_ptr, CAP, TILE, LANES)


#: Staging paths under test: name -> (PATH, SPAN, HIST) of ``_stage_row_kernel``.
PATHS = {"loop": (0, False, False), "first_tile_preloaded": (1, False, False), "one_ahead": (2, False, False),
         "one_ahead_span": (2, True, False), "one_ahead_hist": (2, False, True),
         "survivors_only": (3, False, False), "survivors_only_ahead": (4, False, False),
         "survivors_only_late_reservation": (5, False, False)}
#: Bits and bins of the histogram path: the split family's cooperative row histogram.
BIN_BITS = tuning.SPLIT_COOP_BIN_BITS
NBINS = 1 << BIN_BITS


def _bits(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int64).to(torch.int32)


def _special_row(n: int, seed: int) -> torch.Tensor:
    """float32 [n]: normal scores and, scattered through them, every special kind of float32."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g)
    special = torch.cat([
        torch.tensor([0.0, -0.0, float("inf"), float("-inf"), 1.0, -1.0, 1e-45, -1e-45, 1e-40, -1e-40]),
        # NaNs with the sign bit clear and set, and a payload.
        _bits([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF]).view(torch.float32),
    ])
    pos = torch.randperm(n, generator=g)[:special.numel() * 8]
    x[pos] = special.repeat(8)
    return x


def _key_floor_host(thr: int) -> float:
    """The float the kernel compares against (mirror of ``_key_floor``), as a Python float."""
    t = min(thr, 0xFF800000)
    bits = (t & 0x7FFFFFFF) if t >= 0x80000000 else (t ^ 0xFFFFFFFF)
    return torch.tensor([bits], dtype=torch.int64).to(torch.int32).view(torch.float32).item()


# Order keys at the edges: 1 (admit all), below / at -inf, around -0 / +0, a subnormal, +-1, at / above +inf, NaN.
THRESHOLDS = [1, 0x00400000, 0x007FFFFF, 0x7FFFFFFF, 0x80000000, 0x80000001, 0x3F800000 ^ 0xFFFFFFFF,
              0x3F800000 | 0x80000000, 0xFF800000, 0xFF800001, 0xFFFFFFFF]


@pytest.mark.parametrize("thr", THRESHOLDS, ids=[f"{t:#010x}" for t in THRESHOLDS])
@pytest.mark.parametrize("tile,lanes,split", [(1024, 32, 3), (512, 64, 1), (1024, 32, 4)])
@pytest.mark.parametrize("path", PATHS)
def test_staging_admits_an_upward_closed_superset(thr, tile, lanes, split, path):
    # n = 5000: shares of exactly two tiles, a share shorter than a tile, an empty share (split 4), and one share
    # of nine whole tiles and a partial one (split 1).
    n = 5000
    x = _special_row(n, seed=thr % 97)
    keys = reference.order_keys(x[None])[0].to(torch.int64)
    f = _key_floor_host(thr)
    admitted = ~(x < f)  # what the kernel's one compare per score admits (NaN compares unordered: admitted)
    # Superset: every score whose key reaches the threshold.
    assert bool(admitted[keys >= thr].all())
    # Upward closed in key order.
    if bool(admitted.any()) and bool((~admitted).any()):
        assert int(keys[admitted].min()) > int(keys[~admitted].max())

    count = torch.zeros(1, dtype=torch.int32, device=DEV)
    slot_keys = torch.full((CAP,), 7, dtype=torch.int32, device=DEV)
    slot_cols = torch.full((CAP,), -7, dtype=torch.int32, device=DEV)
    thr_t = torch.tensor([thr], dtype=torch.int64).to(torch.int32).to(DEV)
    xd = x.to(DEV)
    span = torch.zeros(2, dtype=torch.int32, device=DEV)
    # The histogram's window as the cooperative split kernel takes it: from the threshold up to a higher key (here
    # +1.0's), so admitted keys fall below it (-0.0 under a threshold at +0.0's key, negative NaNs), in it, and past it.
    win_lo, win_hi = thr, max(thr, 0x3F800000 | 0x80000000)
    shift = reference.digit_shift(win_hi - win_lo, BIN_BITS)
    hist = torch.zeros(NBINS, dtype=torch.int32, device=DEV)
    win_t = torch.tensor([win_lo], dtype=torch.int64).to(torch.int32).to(DEV)
    kind, with_span, with_hist = PATHS[path]
    _stage_row_kernel[(split,)](xd, thr_t, count, slot_keys, slot_cols, span, hist, win_t, shift, n, CAP=CAP,
                                TILE=tile, SPLIT=split, LANES=lanes, PATH=kind, SPAN=with_span, HIST=with_hist,
                                NBINS=NBINS, num_warps=max(1, lanes // 32))
    want = int(admitted.sum())
    if with_hist:
        # Every score staged inside the slot counted once, in the bin of the host mirror of ``_window_digit``: below
        # the window bin 0, past its last bin the last; monotone in the key. Bin 0 itself is left uncounted (the
        # cooperative kernel takes it from the row's count): it must read 0.
        def bins(k):
            out = torch.bincount(torch.where(k >= win_lo, torch.clamp((k - win_lo) >> shift, max=NBINS - 1), 0),
                                 minlength=NBINS)
            return out, int(out[0])

        got = hist.cpu().to(torch.int64)
        every, every0 = bins(keys[admitted])
        assert int(got[0]) == 0
        every[0] = 0
        if want <= CAP:
            assert torch.equal(got, every)
            assert int(got.sum()) + every0 == want  # what the kernel derives bin 0 from
        else:
            # Past the capacity only the CAP scores that got a position are counted (the attempt fails and the
            # histogram is not read): a sub-multiset of the admitted scores' bins, holding the bins of the slot's
            # first CAP - 1 entries (the last position also takes the clamped writes of the scores past it), so
            # the count is theirs outside bin 0, plus one when the score that got the last position lies outside it.
            slot = reference.order_keys(slot_keys[:CAP - 1].cpu().view(torch.float32)[None])[0].to(torch.int64)
            in_slot, in_slot0 = bins(slot)
            in_slot[0] = 0
            assert int(got.sum()) - (CAP - 1 - in_slot0) in (0, 1)
            assert bool((got <= every).all()) and bool((got >= in_slot).all())
    else:
        assert not hist.any()
    if with_span:
        # The smallest and largest admitted order key ((KEY_MAX, 0) when nothing is admitted), over all shares.
        got_lo, got_hi = (int(v) & 0xFFFFFFFF for v in span.cpu())
        lo = int(keys[admitted].min()) if want else 0xFFFFFFFF
        hi = int(keys[admitted].max()) if want else 0
        assert (0xFFFFFFFF - got_lo, got_hi) == (lo, hi)
    assert int(count.item()) == want  # the exact size of the admitted set, even past CAP
    held = min(want, CAP)
    cols = slot_cols[:held].cpu().to(torch.int64)
    if want <= CAP:
        # Exactly the admitted columns, each once, with their raw float bits.
        assert torch.equal(torch.sort(cols).values, torch.nonzero(admitted).flatten())
        assert torch.equal(slot_keys[:held].cpu(), x.view(torch.int32)[cols])
    else:
        # A count past the capacity fails the attempt; the slot's positions stayed inside it, and every entry
        # written is an admitted column.
        assert bool(((cols >= 0) & (cols < n)).all()) and bool(admitted[cols].all())


@triton.jit
def _lane_rank_kernel(flag_ptr, rank_ptr, tot_ptr, ROWS: tl.constexpr):
    offs = _tile_offsets(ROWS * 32, 32)
    # Loaded as the staging loads its tiles (``_load_tile``), so the flags get the staging's layout.
    flag = _load_tile(flag_ptr.to(tl.pointer_type(tl.float32)), offs, ROWS * 32, False).to(tl.int32, bitcast=True)
    rank, tot = _lane_rank(flag)
    if BALLOT_ASM:
        # ``_lane_rank`` needs its operand in the load's layout; an aligned output store would pull the ranks into a
        # vectorised one (on the H200, rows 16 and 32 failed so), which the staging's scattered stores never do.
        rank_ptr = _unaligned(rank_ptr)
        tot_ptr = _unaligned(tot_ptr)
    tl.store(rank_ptr + offs, rank)
    tl.store(tot_ptr + offs, tot)


@pytest.mark.parametrize("rows,warps", [(1, 1), (16, 1), (32, 1), (16, 2)])
def test_lane_rank_counts_the_set_flags_before_each_lane(rows, warps):
    # The ballot on the GPU (tuning.STAGE_BALLOT), a scan in the interpreter: the same numbers either way. Rows of
    # all-clear, all-set and random flags.
    g = torch.Generator().manual_seed(rows * 10 + warps)
    flag = (torch.rand(rows, 32, generator=g) < 0.3).to(torch.int32)
    flag[0] = 1
    if rows > 1:
        flag[1] = 0
    rank = torch.full((rows, 32), -1, dtype=torch.int32, device=DEV)
    tot = torch.full((rows, 32), -1, dtype=torch.int32, device=DEV)
    _lane_rank_kernel[(1,)](flag.to(DEV), rank, tot, ROWS=rows, num_warps=warps)
    assert torch.equal(rank.cpu(), torch.cumsum(flag, 1).to(torch.int32) - flag)
    assert torch.equal(tot.cpu(), flag.sum(1, keepdim=True).to(torch.int32).expand(rows, 32))
    if DEV == "cuda":
        _assert_ballot_layout(_lane_rank_kernel)


def _assert_ballot_layout(kernel):
    """Every compiled variant of ``kernel`` runs ``_lane_rank``'s ballot on tiles one score per thread per row, each
    row across one warp's lanes."""
    ttgirs = [compiled.asm["ttgir"] for entry in kernel.device_caches.values() for compiled in entry[0].values()]
    assert ttgirs, "no compiled kernel to inspect"
    for ttgir in ttgirs:
        layouts = dict(re.findall(r"^(#blocked\d*) = #ttg\.blocked<\{(.*)\}>", ttgir, re.M))
        ballots = [line for line in ttgir.splitlines() if "vote.sync.ballot" in line]
        if tuning.STAGE_BALLOT:
            assert ballots
        for line in ballots:
            for name in set(re.findall(r"#blocked\d*", line)):
                assert "sizePerThread = [1, 1], threadsPerWarp = [1, 32]" in layouts[name], (name, layouts[name])


@pytest.mark.skipif(not tuning.STAGE_BALLOT, reason="tuning.STAGE_BALLOT is off")
@pytest.mark.parametrize("path", ["loop", "first_tile_preloaded"])
@pytest.mark.parametrize("tile", [512, 1024])
def test_one_warp_staging_writes_columns_in_order(path, tile):
    # One program, one warp: the ballot places each tile's survivors in column order after the previous tile's, so
    # the slot holds the admitted columns sorted (the lane-by-lane placement would interleave them by lane).
    n = 5000
    x = _special_row(n, seed=tile)
    thr = 0x3F800000 ^ 0xFFFFFFFF  # about half the scores
    admitted = ~(x < _key_floor_host(thr))
    want = int(admitted.sum())
    assert 0 < want <= CAP
    count = torch.zeros(1, dtype=torch.int32, device=DEV)
    slot_keys = torch.full((CAP,), 7, dtype=torch.int32, device=DEV)
    slot_cols = torch.full((CAP,), -7, dtype=torch.int32, device=DEV)
    unused = torch.zeros(NBINS, dtype=torch.int32, device=DEV)
    thr_t = torch.tensor([thr], dtype=torch.int64).to(torch.int32).to(DEV)
    kind, _, _ = PATHS[path]
    _stage_row_kernel[(1,)](x.to(DEV), thr_t, count, slot_keys, slot_cols, unused, unused, thr_t, 0, n, CAP=CAP,
                            TILE=tile, SPLIT=1, LANES=32, PATH=kind, SPAN=False, HIST=False, NBINS=NBINS,
                            num_warps=1)
    assert int(count.item()) == want
    assert torch.equal(slot_cols[:want].cpu().to(torch.int64), torch.nonzero(admitted).flatten())
    assert torch.equal(slot_keys[:want].cpu(), x.view(torch.int32)[admitted])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("width", [16384, 16387])
def test_stream_stage_kernel_ranks_in_the_ballot_layout(width):
    # A 16-byte aligned row stride (16384) and an odd one, the streaming family forced on short rows (its one-warp
    # dense staging): exact output, and every compiled stage kernel runs the ballot with each tile row across the
    # lanes of one warp, one score per thread (``_load_tile`` hides the rows' alignment, which would otherwise
    # vectorise the loads into a [4, 8]-thread layout).
    import gvr_topk
    from gvr_topk.testing import check_exact

    rows, n, k = 64, 16000, 2048
    g = torch.Generator().manual_seed(width)
    x = torch.randn(rows, width, generator=g).to("cuda")
    x[1] = 1.0  # a row of ties: every tile admits every score
    x[2, ::3] = 2.0
    kv = torch.full((rows,), n, dtype=torch.int32, device="cuda")
    idx = torch.full((rows, k), -7, dtype=torch.int32, device="cuda")
    gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, family="stream")
    torch.cuda.synchronize()
    assert check_exact(x, idx, kv_lens=kv, max_report=3) == []
    _assert_ballot_layout(stream_kernels._gvr_stage_kernel)
