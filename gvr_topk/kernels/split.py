"""Split family ``split``: SPLIT programs per row, for few long rows.

Regime: small batches (rows <= ``tuning.SPLIT_MAX_ROWS``, or ``SPLIT_MAX_ROWS_SHORT`` rows of at most
``SPLIT_SHORT_MAX_N`` columns) of long rows: one program streams a 512 KB row at only
~17 GB/s on the H200, so a single row needs tens of programs to approach the read floor.

GVR structure without inter-program communication before the hand-off:

1. Every program of a row samples the *same* positions, so all compute the same threshold.
2. Each streams its contiguous share of the row once and stages survivors into the row's workspace slot, reserving
   space with one atomic per tile on the row's counter (2048-score tiles, 4096 where a share holds one:
   ``dispatch._split_tile``). It keeps a tile in flight ahead of the one it stages, the first requested before the
   sample: alone on its SM, nothing else hides its loads.
3. After a barrier, each program adds 1 to the row's arrival counter (acq_rel); the program that arrives last is
   the finisher. It resets both counters to zero (the workspace restores itself, so CUDA-graph replays need no
   memset) and runs the exact selection on the staged candidates.
4. Exactly one parallel staging attempt; if it did not hold the answer, the finisher alone walks the retry ladder
   (``_refine_row``: a lower sample rank, the hint in hinted mode, the exact whole-row path). Slow, never wrong.

The cooperative form (``_gvr_split_coop_kernel``) shares the selection too. A row's finisher above runs a chain of
dependent block steps over all of the row's candidates on one SM (~11 us at K=2048 on the H200, NOTES entry 12). In the
cooperative form every program of the row takes a slice of the staged candidates, each emits its own certain
winners and compacts its part of the crossing bin, and only that bin (a few candidates with the row histogram's
2**``tuning.SPLIT_COOP_BIN_BITS`` bins) is left to the last program to arrive, which ranks it all-pairs
(``_select_crossing``). The crossing bin comes from a row histogram. With WINDOW (``tuning.SPLIT_COOP_WINDOW``, the
default) its window is the sample's (threshold to the largest sampled key below +inf, the same on every program),
so each program counts its admitted scores into it while staging and the programs meet at one row barrier.
Without, the window is the admitted scores' own span, known only once all have staged: a first barrier, then each
program histograms its slice, then a second barrier.
The barriers spin, so every program of the grid must be resident at once: the launcher uses a cooperative launch,
which runs all of a grid's programs together whatever else the GPU runs (the driver refuses a grid too large for
that instead of letting it hang). Triton's interpreter runs
programs one after another, where a spin barrier never returns; there the launcher runs the same code as three
launches (``PHASE`` 1, 2, 3), each kernel boundary standing in for a barrier.

A staging that overflows the slot on a row of ties goes to the tie rung, shared by the row's programs
(``_coop_tie_rung``: each restages its share above the tied key and counts its ties; after a second row barrier
each writes its part of the output); the finisher alone used to stream the row twice there (NOTES entry 26).
With LOW_RUNG (``tuning.SPLIT_COOP_LOW_RUNG``) a staging under K takes the ladder's first rung the same way
(``_coop_low_rung``: every program restages its share at the lower sample rank, a second row barrier, then the
finisher selects the restaged candidates or goes on down the ladder) instead of the finisher's whole-row pass.

With BALANCE (``tuning.SPLIT_BALANCE``, varlen launches only) the staging is shared out by row length instead of
SPLIT programs per row (``_common._balanced_shares``): the launch's time is its longest row's share, and a batch
of mixed lengths otherwise leaves the programs of its short rows idle while those of its long rows stream several
tiles each. Every program reads the launch's row lengths and computes the same shares, since the host has no
lengths (they live on the device, and a CUDA graph replays with new ones). A program stages a share of the row the
shares give it and, in the cooperative form, selects as its grid position (part, row): the row barrier first counts
the row's staging programs, whichever they are, and the row's threshold reaches its selecting programs through the
scratch.

Row scratch of the cooperative form (int32 words of ``ws_coop_ptr``, zero at rest, reset by the last program): 0
barrier arrivals, 1 complement of the smallest admitted key (with WINDOW: the window's low key), 2 largest admitted
key (with WINDOW: the window's high key), 3 finished programs, 4-5 one int64 counting emitted certain winners (low
half) and compacted crossing-bin candidates (high half), 6 the threshold (bits; separate launches and BALANCE only),
7 the tie rung's count of scores above the tied key (the shared first rung's count of its restaging), 8.. the
COOP_BINS-bin histogram (bin 0 left at zero: the row's count gives it), then CROSS_CAP compacted scores (float32
bits; the tie rung's per-program tie counts) and CROSS_CAP columns (these two need no reset).
"""

import triton
import triton.language as tl

from ._common import COOP_BINS
from ._common import COOP_BITS
from ._common import CROSS_CAP
from ._common import _balanced_shares
from ._common import _crossing_bin_counted
from ._common import _digit_shift
from ._common import _emit_column_order
from ._common import _emit_short
from ._common import _exact_key_set
from ._common import _load_tile
from ._common import _order_key
from ._common import _outlined
from ._common import _rank_select
from ._common import _refine_row
from ._common import _restage_share_ties
from ._common import _retry_rank
from ._common import _row_length
from ._common import _row_publish
from ._common import _row_threshold
from ._common import _row_threshold_window
from ._common import _row_wait
from ._common import _sample_rank
from ._common import _sample_threshold
from ._common import _select_tile
from ._common import _share_bounds
from ._common import _stage_share
from ._common import _stage_share_prefetched
from ._common import _tile_offsets
from ._common import _window_digit


@triton.jit
def _split_row(row, indices_ptr, values_ptr, logits_ptr, kv_lens_ptr, n_bound, row_stride, out_stride, val_stride,
               n_uniform, next_n, cr_shift, VARLEN: tl.constexpr):
    """A row's valid length and its score, index and value row pointers (both split kernels)."""
    n = _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN)
    row_ptr, out_ptr, val_ptr = _row_ptrs(row, indices_ptr, values_ptr, logits_ptr, row_stride, out_stride, val_stride)
    return n, row_ptr, out_ptr, val_ptr


@triton.jit
def _row_ptrs(row, indices_ptr, values_ptr, logits_ptr, row_stride, out_stride, val_stride):
    """A row's score, index and value row pointers (64-bit offsets: rows x stride can pass 2**31)."""
    r = row.to(tl.int64)
    return logits_ptr + r * row_stride, indices_ptr + r * out_stride, values_ptr + r * val_stride


@triton.jit
def _row_slot(row, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, CAP: tl.constexpr):
    """A row's workspace (every split kernel): its counter pair (staged count, then arrivals), its slot's keys and
    its slot's columns."""
    r = row.to(tl.int64)
    return ws_count_ptr + r * 2, ws_keys_ptr + r * CAP, ws_cols_ptr + r * CAP


@triton.jit
def _gvr_split_kernel(
    indices_ptr, values_ptr,  # outputs
    logits_ptr, pre_idx_ptr, kv_lens_ptr,  # inputs
    ws_count_ptr, ws_keys_ptr, ws_cols_ptr,  # workspace: int32 [rows, 2] (zero at rest), int32 [rows, CAP] x 2
    n_bound, row_stride, out_stride, val_stride, pre_stride,
    n_uniform, next_n, cr_shift, aim,
    K: tl.constexpr, KB: tl.constexpr, TILE: tl.constexpr, CAP: tl.constexpr, SAMPLE: tl.constexpr,
    SAMPLE_GROUP: tl.constexpr, SAMPLE_MAXIMA: tl.constexpr, MIN_TILE: tl.constexpr, SPLIT: tl.constexpr,
    HINT_FREE: tl.constexpr,
    VARLEN: tl.constexpr, HAS_VALUES: tl.constexpr, LANES: tl.constexpr, TIE_RUNG: tl.constexpr,
    REFINE_TILE: tl.constexpr, BALANCE: tl.constexpr, ROWS_BLOCK: tl.constexpr,
):
    """Grid (SPLIT, rows). TILE: scores per staging loop iteration; REFINE_TILE: the retry ladder's tile (both
    LANES wide). BALANCE (``tuning.SPLIT_BALANCE``, varlen launches only): the rows' staging shared out by row
    length over the grid's programs (``_balanced_shares``) instead of SPLIT programs per row; ROWS_BLOCK >= rows."""
    part = tl.program_id(0)
    row = tl.program_id(1)
    n, row_ptr, out_ptr, val_ptr = _split_row(row, indices_ptr, values_ptr, logits_ptr, kv_lens_ptr, n_bound,
                                              row_stride, out_stride, val_stride, n_uniform, next_n, cr_shift, VARLEN)
    if BALANCE and VARLEN:
        # Short rows are this grid position's own; the staging goes by the shares, and the last program to stage a
        # row finishes it.
        if (n <= K) & (part == 0):
            _emit_short(out_ptr, val_ptr, row_ptr, n, K, KB, HAS_VALUES)
        srow, spart, ssplit, s_n, _mine = _balanced_shares(row * SPLIT + part, row, tl.num_programs(1), ROWS_BLOCK,
                                                           kv_lens_ptr, next_n, cr_shift, n_bound, K, TILE,
                                                           SPLIT * tl.num_programs(1))
        if ssplit > 0:
            s_row_ptr, s_out_ptr, s_val_ptr = _row_ptrs(srow, indices_ptr, values_ptr, logits_ptr, row_stride,
                                                        out_stride, val_stride)
            _split_share(s_out_ptr, s_val_ptr, s_row_ptr, pre_idx_ptr, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, srow,
                         spart, ssplit, s_n, next_n, pre_stride, aim, K, KB, TILE, CAP, SAMPLE, SAMPLE_GROUP,
                         SAMPLE_MAXIMA, MIN_TILE, HINT_FREE, HAS_VALUES, LANES, TIE_RUNG, REFINE_TILE)
    elif n <= K:
        if part == 0:
            _emit_short(out_ptr, val_ptr, row_ptr, n, K, KB, HAS_VALUES)
    else:
        _split_share(out_ptr, val_ptr, row_ptr, pre_idx_ptr, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, row, part,
                     SPLIT, n, next_n, pre_stride, aim, K, KB, TILE, CAP, SAMPLE, SAMPLE_GROUP, SAMPLE_MAXIMA,
                     MIN_TILE, HINT_FREE, HAS_VALUES, LANES, TIE_RUNG, REFINE_TILE)


@triton.jit
def _split_share(out_ptr, val_ptr, row_ptr, pre_idx_ptr, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, row, part, split,
                 n, next_n, pre_stride, aim, K: tl.constexpr, KB: tl.constexpr, TILE: tl.constexpr,
                 CAP: tl.constexpr, SAMPLE: tl.constexpr, SAMPLE_GROUP: tl.constexpr, SAMPLE_MAXIMA: tl.constexpr,
                 MIN_TILE: tl.constexpr,
                 HINT_FREE: tl.constexpr, HAS_VALUES: tl.constexpr, LANES: tl.constexpr, TIE_RUNG: tl.constexpr,
                 REFINE_TILE: tl.constexpr):
    """The plain split kernel's work on a long row (n > K) as program ``part`` of the row's ``split``: stage this
    program's share of the row; the last of the row's programs to arrive selects."""
    start, end = _share_bounds(n, part, split, TILE)  # this program's share of the row
    x0 = _load_tile(row_ptr, start + _tile_offsets(TILE, LANES), end, True)  # in flight during the threshold
    thr = _row_threshold(row_ptr, n, aim, CAP, SAMPLE, SAMPLE_GROUP, SAMPLE_MAXIMA)
    count_ptr, slot_keys, slot_cols = _row_slot(row, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, CAP)
    arrive_ptr = count_ptr + 1
    # ---- this program's share of the row ----
    _stage_share_prefetched(x0, row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP, TILE, LANES,
                            False, count_ptr, 0, 0, False, 1)
    # ---- hand-off: the last program to arrive finishes the row ----
    tl.debug_barrier()
    arrived = tl.atomic_add(arrive_ptr, 1, sem="acq_rel")
    if arrived == split - 1:
        count = tl.atomic_xchg(count_ptr, 0, sem="acq_rel")
        tl.atomic_xchg(arrive_ptr, 0, sem="relaxed")
        _refine_row(out_ptr, val_ptr, row_ptr, pre_idx_ptr + (row // next_n).to(tl.int64) * pre_stride, n,
                    count, thr, aim, slot_keys, slot_cols, True, K, KB, REFINE_TILE, CAP, SAMPLE, SAMPLE_GROUP,
                    SAMPLE_MAXIMA, MIN_TILE, HINT_FREE, HAS_VALUES, LANES, TIE_RUNG, 0)


#: Word offsets in a row's cooperative scratch (see the module docstring).
_C_BAR = tl.constexpr(0)
_C_LO = tl.constexpr(1)
_C_HI = tl.constexpr(2)
_C_DONE = tl.constexpr(3)
_C_PAIR = tl.constexpr(4)
_C_THR = tl.constexpr(6)
_C_HIGHER = tl.constexpr(7)
_C_HIST = tl.constexpr(8)


@triton.jit
def _row_barrier(bar_ptr, target):
    """Wait until ``target`` arrivals have been counted at ``bar_ptr`` (this program's included). The block barrier
    orders every thread's earlier writes before the release; the acquire makes the other programs' writes visible
    to every thread after the closing block barrier."""
    tl.debug_barrier()
    seen = tl.atomic_add(bar_ptr, 1, sem="acq_rel") + 1
    while seen < target:
        seen = tl.atomic_add(bar_ptr, 0, sem="acquire")
    tl.debug_barrier()


@triton.jit
def _coop_slice_load(slot_keys, slot_cols, part, CAP: tl.constexpr, SPLIT: tl.constexpr, SLICE: tl.constexpr):
    """Program ``part``'s fixed slice of a row's slot: positions ``part * PER + j`` for j < PER = ceil(CAP / SPLIT)
    (on SLICE lanes), whatever the row's count. Returns the raw float32 bits, the columns, the slot positions and
    which lanes lie in the slice.

    Fixed rather than ``ceil(count / SPLIT)`` candidates per program: the addresses then need no count, so the
    loads go out together with the count's own (one L2 round trip after the row barrier instead of two); lanes past
    the count read whatever the slot holds, inside its bounds, and ``_coop_slice_bins`` masks them out. Only the
    first ceil(count / PER) programs then hold candidates: the others have nothing to emit, which costs them no
    more time, since every step here is a block operation over SLICE lanes either way."""
    PER: tl.constexpr = (CAP + SPLIT - 1) // SPLIT
    j = tl.arange(0, SLICE)
    pos = part * PER + j
    inb = (j < PER) & (pos < CAP)
    raw = tl.load(slot_keys + pos, mask=inb, other=0, cache_modifier=".cg")
    cols = tl.load(slot_cols + pos, mask=inb, other=0, cache_modifier=".cg")
    return raw, cols, pos, inb


@triton.jit
def _coop_slice_bins(raw, pos, inb, count, lo, shift):
    """Which lanes of a slice (``_coop_slice_load``) hold one of the ``count`` staged candidates, and each such
    candidate's bin in the row's histogram over [lo, ...] in bins of 2**shift keys (0 elsewhere)."""
    live = inb & (pos < count)
    keys = tl.where(live, _order_key(raw.to(tl.float32, bitcast=True)), 0)
    return live, tl.where(live, _window_digit(keys, lo, shift, COOP_BINS), 0)


@triton.jit
def _store_staged(out_ptr, val_ptr, pos, cols, raw, sel, HAS_VALUES: tl.constexpr):
    """Write the ``sel`` lanes' columns to output slots ``pos``, their values from the staged float32 bits ``raw``
    (the staging converted them to float32 already, so no gather from the row is needed)."""
    tl.store(out_ptr + pos, cols, mask=sel)
    if HAS_VALUES:
        tl.store(val_ptr + pos, raw.to(tl.float32, bitcast=True), mask=sel)


@triton.jit
def _emit_staged(out_ptr, val_ptr, cols, raw, sel, base, HAS_VALUES: tl.constexpr):
    """``_store_staged`` to consecutive slots from ``base``."""
    _store_staged(out_ptr, val_ptr, base + tl.cumsum(sel.to(tl.int32), 0) - 1, cols, raw, sel, HAS_VALUES)


@triton.jit
def _select_crossing(out_ptr, val_ptr, x_keys, x_cols, in_b, need, base, M: tl.constexpr, RANK: tl.constexpr,
                     HAS_VALUES: tl.constexpr):
    """The cooperative finisher's last step: the ``need`` winners among the row's ``in_b <= M`` compacted
    crossing-bin candidates (raw float32 bits at ``x_keys``, columns at ``x_cols``), written from output slot
    ``base``; on an M-lane tile, ranked all-pairs with RANK, else by ``_select_tile``'s radix levels."""
    j = tl.arange(0, M)
    small = j < in_b
    raw = tl.load(x_keys + j, mask=small, other=0, cache_modifier=".cg")
    cols = tl.load(x_cols + j, mask=small, other=0, cache_modifier=".cg")
    keys = tl.where(small, _order_key(raw.to(tl.float32, bitcast=True)), 0)
    if RANK:
        sel = _rank_select(keys, cols, small, need)
    else:
        sel = _select_tile(keys, cols, small, need)
    _emit_staged(out_ptr, val_ptr, cols, raw, sel, base, HAS_VALUES)


@triton.jit
def _coop_tie_rung(out_ptr, val_ptr, row_ptr, n, part, thr, coop, slot_keys, slot_cols, stagers, K: tl.constexpr,
                   TILE: tl.constexpr, CAP: tl.constexpr, SPLIT: tl.constexpr, LANES: tl.constexpr,
                   SLICE: tl.constexpr, HAS_VALUES: tl.constexpr, PHASE: tl.constexpr):
    """The tie rung (``_common._refine_row``) shared by a row's programs, for a staging against order key ``thr``
    that overflowed the slot (all equal, a few distinct values, -inf or +0.0 padding: a huge number of scores tie at
    ``thr``). Every program restages its share against thr + 1 through the scratch counter ``_C_HIGHER`` and counts
    its share's ties at ``thr``; after a row barrier, when fewer than K scores lie above ``thr`` and the ties make up
    the rest, every staged score wins (each program writes its slice of the slot where it lies) and the remaining
    ``need`` winners are the lowest-column ties: program p writes its share's first ties, in column order, after
    the ties of programs 0 .. p - 1 (an exclusive sum of the per-program counts), until ``need`` are written.

    The per-program tie counts go to the compacted crossing bin's words, unused on this path (every program writes
    its own before the barrier, so they need no reset). The tie count itself decides, not the key: a threshold at
    +0.0's key is served too (its staging also admitted -0.0, which is no tie of +0.0), where the single-program
    rung needs ``_exact_key_set(thr)``. Otherwise (K or more scores above ``thr``) the row is left to the finisher.
    Returns (how many scores lie above ``thr``, 1 when the row's output is complete), the same on every program of
    the row. PHASE as in the kernel: 2 restages, 3 emits, 0 both around a barrier (the row barrier's second round:
    ``stagers`` arrivals from the staging, then one from each of the row's SPLIT programs here)."""
    tl.static_assert(SPLIT <= CROSS_CAP, "the per-program tie counts use the crossing bin's CROSS_CAP key words")
    start, end = _share_bounds(n, part, SPLIT, TILE)
    tie_counts = coop + _C_HIST + COOP_BINS
    if PHASE != 3:
        mine = _restage_share_ties(row_ptr, start, end, thr, coop + _C_HIGHER, slot_keys, slot_cols, CAP, TILE, LANES)
        tl.store(tie_counts + part, mine)
    if PHASE == 0:
        _row_barrier(coop + _C_BAR, stagers + SPLIT)
    higher = tl.zeros([], tl.int32)
    done = tl.zeros([], tl.int32)
    if PHASE != 2:
        higher = tl.load(coop + _C_HIGHER, cache_modifier=".cg")
        q = tl.arange(0, CROSS_CAP)
        ties = tl.load(tie_counts + q, mask=q < SPLIT, other=0, cache_modifier=".cg")
        before = tl.sum(tl.where(q < part, ties, 0), 0)
        need = K - higher
        if (higher < K) & (tl.sum(ties, 0) >= need):
            done = tl.full([], 1, tl.int32)
            raw, cols, pos, inb = _coop_slice_load(slot_keys, slot_cols, part, CAP, SPLIT, SLICE)
            _store_staged(out_ptr, val_ptr, pos, cols, raw, inb & (pos < higher), HAS_VALUES)
            if before < need:
                _emit_column_order(out_ptr, val_ptr, row_ptr, start, end, thr, higher + before, need - before, False,
                                   TILE, HAS_VALUES)
    return higher, done


@triton.jit
def _coop_low_rung(row_ptr, n, part, count, aim, coop, slot_keys, slot_cols, stagers, TILE: tl.constexpr,
                   CAP: tl.constexpr, SAMPLE: tl.constexpr, SAMPLE_GROUP: tl.constexpr, SAMPLE_MAXIMA: tl.constexpr,
                   SPLIT: tl.constexpr, LANES: tl.constexpr, PHASE: tl.constexpr):
    """The retry ladder's first rung (``_common._refine_row``: a lower sample rank, ``_retry_rank``) shared by a
    row's programs, for a staging that admitted ``count`` < K scores (the sample overrated the row's tail). Alone,
    the finisher restages the whole row in one program, tens of microseconds on a long row (NOTES entry 49); here
    every program computes the same lower threshold (the same sample, the same count) and restages its share
    against it into the slot through the scratch counter ``_C_HIGHER``, as the tie rung does (the first staging's
    candidates are not read again on this path). After a row barrier (PHASE 0: the barrier's second round, as in
    the tie rung) every program reads the row's new count. Returns (the threshold, the count), the same on every
    program of the row; the finisher goes on down the ladder from there. PHASE as in the kernel: 2 restages, 3
    reads the count, 0 both around the barrier."""
    thr = _sample_threshold(row_ptr, n, _retry_rank(_sample_rank(n, aim, SAMPLE), count, aim, SAMPLE), SAMPLE,
                            SAMPLE_GROUP, SAMPLE_MAXIMA)
    if PHASE != 3:
        start, end = _share_bounds(n, part, SPLIT, TILE)
        _stage_share(row_ptr, start, end, thr, coop + _C_HIGHER, slot_keys, slot_cols, CAP, TILE, LANES)
    if PHASE == 0:
        _row_barrier(coop + _C_BAR, stagers + SPLIT)
    lower = tl.zeros([], tl.int32)
    if PHASE != 2:
        lower = tl.load(coop + _C_HIGHER, cache_modifier=".cg")
    return thr, lower


# Outlined twins (``tuning.SPLIT_COOP_OUTLINE``) of the cooperative kernel's rare paths: they run only on rows whose
# first staging failed (ties past the slot, a staging under K), whose crossing bin is too large for the all-pairs
# rank, or that are no longer than K. Inlined, they lie between the pieces of the main path: its registers (sm_90,
# Triton 3.6, offline: 255 and 61 spill instructions inlined, 227-231 and none outlined; NOTES entry 53) and, as
# measured on the H200, its instruction fetch (NOTES entry 54: with the tie rung alone inlined, no spills and 218
# registers, the decode cells were as slow as with all inlined, and ncu counted instruction-fetch stalls there).
# The split and streaming kernels keep ``_refine_row`` inline: there it is the main path.
_coop_tie_rung_outlined = _outlined(_coop_tie_rung)
_coop_low_rung_outlined = _outlined(_coop_low_rung)
_refine_row_outlined = _outlined(_refine_row)
_select_crossing_outlined = _outlined(_select_crossing)
_emit_short_outlined = _outlined(_emit_short)


@triton.jit
def _coop_stage(row_ptr, n, row, part, split, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, ws_coop_ptr, aim,
                TILE: tl.constexpr, CAP: tl.constexpr, SAMPLE: tl.constexpr, SAMPLE_GROUP: tl.constexpr,
                SAMPLE_MAXIMA: tl.constexpr, LANES: tl.constexpr, COOP_WORDS: tl.constexpr, WINDOW: tl.constexpr,
                KEEP_THR: tl.constexpr):
    """The cooperative form's staging of a long row (n > K) as program ``part`` of the row's ``split``: its share
    staged into the row's slot, and the row's key window into the row's scratch (with WINDOW the sample's, stored by
    part 0, and the row histogram counted while staging; else the admitted scores' span, by atomics). KEEP_THR:
    part 0 also stores the threshold for the programs that select the row. Returns the threshold."""
    count_ptr, slot_keys, slot_cols = _row_slot(row, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, CAP)
    coop = ws_coop_ptr + row.to(tl.int64) * COOP_WORDS
    ucoop = coop.to(tl.pointer_type(tl.uint32))
    hist_ptr = coop + _C_HIST
    start, end = _share_bounds(n, part, split, TILE)
    x0 = _load_tile(row_ptr, start + _tile_offsets(TILE, LANES), end, True)
    if WINDOW:
        # The window is the sample's, the same on every program, so the row's histogram is counted while staging
        # and one barrier fewer is needed.
        thr, lo, hi = _row_threshold_window(row_ptr, n, aim, CAP, SAMPLE, SAMPLE_GROUP, SAMPLE_MAXIMA)
        _stage_share_prefetched(x0, row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP, TILE, LANES,
                                False, hist_ptr, lo, _digit_shift(hi - lo, COOP_BITS), True, COOP_BINS)
        if part == 0:
            tl.store(ucoop + _C_LO, lo)
            tl.store(ucoop + _C_HI, hi)
    else:
        thr = _row_threshold(row_ptr, n, aim, CAP, SAMPLE, SAMPLE_GROUP, SAMPLE_MAXIMA)
        lo, hi = _stage_share_prefetched(x0, row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP, TILE,
                                         LANES, True, hist_ptr, 0, 0, False, COOP_BINS)
        tl.atomic_max(ucoop + _C_LO, 0xFFFFFFFF - lo, sem="relaxed")
        tl.atomic_max(ucoop + _C_HI, hi, sem="relaxed")
    if KEEP_THR:
        if part == 0:
            tl.store(ucoop + _C_THR, thr)
    return thr


@triton.jit
def _gvr_split_coop_kernel(
    indices_ptr, values_ptr,  # outputs
    logits_ptr, pre_idx_ptr, kv_lens_ptr,  # inputs
    ws_count_ptr, ws_keys_ptr, ws_cols_ptr,  # as the split kernel's
    ws_coop_ptr,  # int32 [rows, COOP_WORDS], zero at rest (module docstring)
    n_bound, row_stride, out_stride, val_stride, pre_stride,
    n_uniform, next_n, cr_shift, aim,
    K: tl.constexpr, KB: tl.constexpr, TILE: tl.constexpr, CAP: tl.constexpr, SAMPLE: tl.constexpr,
    SAMPLE_GROUP: tl.constexpr, SAMPLE_MAXIMA: tl.constexpr, MIN_TILE: tl.constexpr, SPLIT: tl.constexpr,
    HINT_FREE: tl.constexpr,
    VARLEN: tl.constexpr, HAS_VALUES: tl.constexpr, LANES: tl.constexpr, TIE_RUNG: tl.constexpr,
    REFINE_TILE: tl.constexpr, SLICE: tl.constexpr, COOP_WORDS: tl.constexpr, WINDOW: tl.constexpr,
    RANK_MAX: tl.constexpr, PHASE: tl.constexpr, BALANCE: tl.constexpr, ROWS_BLOCK: tl.constexpr,
    LOW_RUNG: tl.constexpr, OUTLINE: tl.constexpr,
):
    """The split family with a shared selection: grid (SPLIT, rows), every program resident (cooperative launch).

    PHASE 0 runs everything in one launch with spin barriers; PHASE 1, 2, 3 run its three parts as separate launches
    (stage; slice histograms without WINDOW, the tie and first rungs' restaging; emission and finish), for Triton's
    interpreter. SLICE: lanes of a program's slice of the candidates, a power of two >= CAP / SPLIT and >= the
    program's threads. RANK_MAX: the largest crossing bin the finisher ranks all-pairs (0: never;
    ``tuning.SPLIT_COOP_RANK_MAX``). LOW_RUNG: a staging under K takes the ladder's first rung on every program of
    the row (``_coop_low_rung``; ``tuning.SPLIT_COOP_LOW_RUNG``). OUTLINE: the rare paths (the shared tie and first
    rungs, the finisher's ladder and its select of a large crossing bin, a row no longer than K) run as calls
    (``tuning.SPLIT_COOP_OUTLINE``). TILE, REFINE_TILE, BALANCE, ROWS_BLOCK: as in the split kernel. With BALANCE a
    program stages by the shares (``_balanced_shares``: a row of another grid position, perhaps) and selects as
    position (part, row) of the grid: the row barrier then counts the row's staging programs, whoever they are."""
    part = tl.program_id(0)
    row = tl.program_id(1)
    n, row_ptr, out_ptr, val_ptr = _split_row(row, indices_ptr, values_ptr, logits_ptr, kv_lens_ptr, n_bound,
                                              row_stride, out_stride, val_stride, n_uniform, next_n, cr_shift, VARLEN)
    BAL: tl.constexpr = BALANCE and VARLEN
    stagers = SPLIT  # programs that stage this grid position's row (the row barrier's first target)
    if BAL:
        srow, spart, ssplit, s_n, stagers = _balanced_shares(row * SPLIT + part, row, tl.num_programs(1),
                                                             ROWS_BLOCK, kv_lens_ptr, next_n, cr_shift, n_bound, K,
                                                             TILE, SPLIT * tl.num_programs(1))
        if PHASE <= 1:
            if ssplit > 0:
                s_row_ptr, _s_out, _s_val = _row_ptrs(srow, indices_ptr, values_ptr, logits_ptr, row_stride,
                                                      out_stride, val_stride)
                _coop_stage(s_row_ptr, s_n, srow, spart, ssplit, ws_count_ptr,
                            ws_keys_ptr, ws_cols_ptr, ws_coop_ptr, aim, TILE, CAP, SAMPLE, SAMPLE_GROUP,
                            SAMPLE_MAXIMA, LANES, COOP_WORDS, WINDOW, True)
                if PHASE == 0:
                    _row_publish(ws_coop_ptr + srow.to(tl.int64) * COOP_WORDS + _C_BAR)
    if n <= K:
        # The same for every program of the row: none of them meets the others.
        if PHASE <= 1:
            if part == 0:
                (_emit_short_outlined if OUTLINE else _emit_short)(out_ptr, val_ptr, row_ptr, n, K, KB, HAS_VALUES)
    else:
        count_ptr, slot_keys, slot_cols = _row_slot(row, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, CAP)
        coop = ws_coop_ptr + row.to(tl.int64) * COOP_WORDS
        ucoop = coop.to(tl.pointer_type(tl.uint32))
        hist_ptr = coop + _C_HIST
        x_keys = coop + _C_HIST + COOP_BINS
        x_cols = coop + _C_HIST + COOP_BINS + CROSS_CAP
        bins = tl.arange(0, COOP_BINS)
        # ---- stage this program's share; the row's key window ----
        if (PHASE <= 1) and (not BAL):
            # The later launches' threshold is stored; the single launch keeps it in registers.
            thr = _coop_stage(row_ptr, n, row, part, SPLIT, ws_count_ptr, ws_keys_ptr, ws_cols_ptr, ws_coop_ptr,
                              aim, TILE, CAP, SAMPLE, SAMPLE_GROUP, SAMPLE_MAXIMA, LANES, COOP_WORDS, WINDOW,
                              PHASE == 1)
        if PHASE == 0:
            if BAL:
                _row_wait(coop + _C_BAR, stagers)  # this program staged (and published) above
            else:
                _row_barrier(coop + _C_BAR, SPLIT)
        if PHASE != 1:
            # Loaded together: none depends on another.
            count = tl.load(count_ptr, cache_modifier=".cg")
            if (PHASE != 0) or BAL:
                thr = tl.load(ucoop + _C_THR, cache_modifier=".cg")  # stored by the row's staging part 0
            if WINDOW:
                lo = tl.load(ucoop + _C_LO, cache_modifier=".cg")
                hi = tl.load(ucoop + _C_HI, cache_modifier=".cg")
                hist = tl.load(hist_ptr + bins, cache_modifier=".cg")
            if (PHASE == 3) | ((PHASE == 0) & (WINDOW == 1)):
                # The slice needs no count to be addressed, so its loads go out with the count's.
                raw, cols, pos, inb = _coop_slice_load(slot_keys, slot_cols, part, CAP, SPLIT, SLICE)
            accept = (count >= K) & (count <= CAP)
            above = tl.zeros([], tl.int32)
            in_b = tl.zeros([], tl.int32)
            # ---- rows of ties: the staging overflowed the slot, every program takes its share of the tie rung ----
            tie = tl.zeros([], tl.int1)
            if TIE_RUNG:
                tie = (count > CAP) & _exact_key_set(thr + 1)
            higher = tl.zeros([], tl.int32)
            tie_done = tl.zeros([], tl.int32)
            if tie:
                higher, tie_done = (_coop_tie_rung_outlined if OUTLINE else _coop_tie_rung)(
                    out_ptr, val_ptr, row_ptr, n, part, thr, coop, slot_keys, slot_cols, stagers, K, TILE, CAP, SPLIT,
                    LANES, SLICE, HAS_VALUES, PHASE)
            # ---- a staging under K: every program takes its share of the ladder's first rung ----
            low = tl.zeros([], tl.int1)
            if LOW_RUNG:
                low = (count < K) & (n > CAP) & (_sample_rank(n, aim, SAMPLE) < SAMPLE)
            lower = tl.zeros([], tl.int32)
            thr_low = thr
            if low:
                thr_low, lower = (_coop_low_rung_outlined if OUTLINE else _coop_low_rung)(
                    row_ptr, n, part, count, aim, coop, slot_keys, slot_cols, stagers, TILE, CAP, SAMPLE, SAMPLE_GROUP,
                    SAMPLE_MAXIMA, SPLIT, LANES, PHASE)
            if accept:
                if not WINDOW:
                    lo = 0xFFFFFFFF - tl.load(ucoop + _C_LO, cache_modifier=".cg")
                    hi = tl.load(ucoop + _C_HI, cache_modifier=".cg")
                shift = _digit_shift(hi - lo, COOP_BITS)
                # ---- the row's histogram over its key window: every program adds its slice's ----
                if (PHASE != 3) & (not WINDOW):
                    raw, cols, pos, inb = _coop_slice_load(slot_keys, slot_cols, part, CAP, SPLIT, SLICE)
                    live, digit = _coop_slice_bins(raw, pos, inb, count, lo, shift)
                    mine = tl.histogram(digit, COOP_BINS, mask=live)
                    # Bin 0 is left uncounted, as the staging leaves it with WINDOW (``_crossing_bin_counted``).
                    tl.atomic_add(hist_ptr + bins, mine, mask=(mine > 0) & (bins > 0), sem="relaxed")
                if (PHASE == 0) & (not WINDOW):
                    _row_barrier(coop + _C_BAR, stagers + SPLIT)  # the staging's arrivals, then one per program
                if (PHASE == 3) | ((PHASE == 0) & (WINDOW == 1)):
                    live, digit = _coop_slice_bins(raw, pos, inb, count, lo, shift)
                # ---- each program emits its certain winners and compacts its part of the crossing bin ----
                if PHASE != 2:
                    if not WINDOW:
                        hist = tl.load(hist_ptr + bins, cache_modifier=".cg")
                    b, above, in_b = _crossing_bin_counted(hist, count, K, COOP_BINS)
                    if in_b <= CROSS_CAP:
                        # need == in_b: the whole crossing bin is needed, nothing to refine. (A scalar condition
                        # goes through tl.where: Triton's interpreter rejects a mask made with `&` of a scalar.)
                        whole = K - above == in_b
                        sel = live & tl.where(whole, digit >= b, digit > b)
                        cross = tl.where(whole, False, live & (digit == b))
                        # Both counts in one int32 (emitted winners low, crossing candidates high; a slice holds
                        # fewer than 2**15 lanes), so one reduction and one scan serve both. One 64-bit atomic
                        # reserves both (winners in its low half, compacted candidates in its high half); the scan
                        # does not wait for it.
                        tl.static_assert(SLICE < 32768, "the packed counts hold at most 2**15 - 1 per half")
                        packed = sel.to(tl.int32) | (cross.to(tl.int32) << 16)
                        both = tl.sum(packed, 0)
                        pair = coop.to(tl.pointer_type(tl.int64)) + _C_PAIR // 2
                        old = tl.atomic_add(pair, ((both >> 16).to(tl.int64) << 32) | (both & 0xFFFF).to(tl.int64),
                                            sem="relaxed")
                        run = tl.cumsum(packed, 0)
                        cpos = (old >> 32).to(tl.int32) + (run >> 16) - 1
                        tl.store(x_keys + cpos, raw, mask=cross)
                        tl.store(x_cols + cpos, cols, mask=cross)
                        _store_staged(out_ptr, val_ptr, (old & 0xFFFFFFFF).to(tl.int32) + (run & 0xFFFF) - 1, cols,
                                      raw, sel, HAS_VALUES)
            # ---- the last program to finish completes the row and resets its scratch ----
            if PHASE != 2:
                tl.debug_barrier()
                arrived = tl.atomic_add(coop + _C_DONE, 1, sem="acq_rel")
                if arrived == SPLIT - 1:
                    if accept & (in_b <= CROSS_CAP):
                        if K - above < in_b:
                            if RANK_MAX > 0:
                                if in_b <= RANK_MAX:  # the usual case: a few candidates
                                    _select_crossing(out_ptr, val_ptr, x_keys, x_cols, in_b, K - above, above,
                                                     RANK_MAX, True, HAS_VALUES)
                                else:
                                    (_select_crossing_outlined if OUTLINE else _select_crossing)(
                                        out_ptr, val_ptr, x_keys, x_cols, in_b, K - above, above, CROSS_CAP, False,
                                        HAS_VALUES)
                            else:
                                _select_crossing(out_ptr, val_ptr, x_keys, x_cols, in_b, K - above, above, CROSS_CAP,
                                                 False, HAS_VALUES)
                        tl.atomic_xchg(count_ptr, 0, sem="relaxed")
                    elif tie_done != 0:
                        tl.atomic_xchg(count_ptr, 0, sem="relaxed")
                    else:
                        # The whole selection on this program, as in the split kernel: the retry ladder for a
                        # staging that failed, or (accepted, a crossing bin too large for the small tile) straight
                        # to ``_select_staged``, the ladder's accept path. One call site keeps one copy of it in the
                        # compiled kernel. After a shared tie rung that did not finish the row (more than K scores
                        # above the tied key), the slot holds its restaging against thr + 1: the ladder goes on
                        # from there (selects it when it holds at most CAP, else the tie rung again one key up).
                        if tie:
                            count = higher
                            thr = thr + 1
                        if low:  # the slot holds the shared first rung's restaging; the ladder goes on from there
                            count = lower
                            thr = thr_low
                        tl.atomic_xchg(count_ptr, 0, sem="acq_rel")  # at rest for the next call
                        (_refine_row_outlined if OUTLINE else _refine_row)(
                            out_ptr, val_ptr, row_ptr, pre_idx_ptr + (row // next_n).to(tl.int64) * pre_stride, n,
                            count, thr, aim, slot_keys, slot_cols, low == 0, K, KB, REFINE_TILE, CAP, SAMPLE,
                            SAMPLE_GROUP, SAMPLE_MAXIMA, MIN_TILE, HINT_FREE, HAS_VALUES, LANES, TIE_RUNG, 0)
                    # Every other program has passed both barriers and finished with the scratch.
                    tl.store(coop + _C_HIST + bins, tl.zeros([COOP_BINS], tl.int32))
                    words = tl.arange(0, 8)
                    tl.store(coop + words, tl.zeros([8], tl.int32))
