"""Device helpers shared by every kernel family (``@triton.jit`` code only).

Exactness lives here. Every decision that decides membership is made on 32-bit *order keys* (``_order_key``):
float bins, samples and brackets only steer how much work is done, never which scores win. The staging pass
compares floats, but what it admits is a superset of the threshold's scores and upward closed in key order
(``_key_floor``), so the selection on order keys that follows sees every candidate it needs.

Building blocks:

* ``_order_key``: float32 -> uint32, monotone over all floats; every NaN maps to the top key (NaN ranks above
  +inf, as in ``torch.topk``); key 0 is reserved for lanes that hold no score.
* ``_radix_kth_tiles``: the exact ``need``-th largest key of a register tile (and of an optional small tail tile,
  the register family's rows just past a power of two), by radix levels of ``RADIX_BITS`` bits over a shrinking key
  window (a masked histogram per level, then the window tightens to the crossing bin's min/max).
* ``_select_tile``: exactly ``need`` lanes of a tile: every key above the K-th key, plus the tied lanes with the
  lowest column indices (the contract's tie rule); ``_select_tiles`` does the same over a tile and a tail tile.
* ``_exact_row``: the same selection streamed from global memory (one pass per radix level, one emission pass in
  column order). Any family falls back to it when its staging does not hold the answer: slow, never wrong.
* ``_sample_threshold``: the guess, a key near a given rank of a deterministic sample (approximate on purpose).
* ``_stage_share``: the verify pass, survivors of a threshold staged into a row's workspace slot through the row's
  counter (exact count), one float compare per score on a 2-D tile (``_stage_tile``). The kernels run its variants
  (a first tile loaded early, survivors-only, a tile in flight ahead); the retry ladder's one program restages with
  ``_restage``, which needs no counter.
* ``_select_staged``: the refine, exact top-K of the staged candidates (one histogram, then the crossing bin on a
  small tile); ``_refine_row`` wraps it with the retry ladder.
"""

import triton
import triton.language as tl

from .. import tuning

try:  # grid dependency control, for programmatic dependent launch (Triton >= 3.3)
    from triton.language.extra.cuda import gdc_launch_dependents as _gdc_launch_dependents
    from triton.language.extra.cuda import gdc_wait as _gdc_wait

    HAS_GDC = True
except ImportError:  # an older Triton: the launchers never turn PDL on (``launch.stream.pdl_supported``)
    HAS_GDC = False

    @triton.jit
    def _gdc_launch_dependents():
        pass

    @triton.jit
    def _gdc_wait():
        pass


#: One-warp staging tiles rank their pass flags across the warp with a ballot (``tuning.STAGE_BALLOT``).
STAGE_BALLOT = tl.constexpr(bool(tuning.STAGE_BALLOT))
#: float32 lowest finite value, written to pad slots of ``values``.
PAD_VALUE = tl.constexpr(-3.4028234663852886e38)
#: Largest crossing bin refined on a compacted small tile (``_select_staged``); see ``tuning.CROSS_CAP``.
CROSS_CAP = tl.constexpr(tuning.CROSS_CAP)
#: Histogram levels of the sample threshold and bits per level (``tuning.SAMPLE_LEVELS``, ``SAMPLE_BIN_BITS``).
SAMPLE_LEVELS = tl.constexpr(tuning.SAMPLE_LEVELS)
SAMPLE_BITS = tl.constexpr(tuning.SAMPLE_BIN_BITS)
SAMPLE_BINS = tl.constexpr(1 << tuning.SAMPLE_BIN_BITS)
#: Early stop of those levels (``tuning.SAMPLE_STOP_DIV``; 0 = never) and the groups whose smallest maximum starts
#: the first level's window (``tuning.SAMPLE_LOW_GROUPS``; 0 = the sample's minimum).
SAMPLE_STOP_DIV = tl.constexpr(tuning.SAMPLE_STOP_DIV)
SAMPLE_LOW_GROUPS = tl.constexpr(tuning.SAMPLE_LOW_GROUPS)
#: Bits (and bins) of the staged select's first histogram (``tuning.SELECT_BIN_BITS``).
SELECT_BITS = tl.constexpr(tuning.SELECT_BIN_BITS)
SELECT_BINS = tl.constexpr(1 << tuning.SELECT_BIN_BITS)
#: Bits (and bins) per level of the register-tile radix select (``tuning.RADIX_BIN_BITS``).
RADIX_BITS = tl.constexpr(tuning.RADIX_BIN_BITS)
RADIX_BINS = tl.constexpr(1 << tuning.RADIX_BIN_BITS)
#: Bits (and bins) of the split family's cooperative row histogram (``tuning.SPLIT_COOP_BIN_BITS``; they set the
#: layout of its row scratch, ``workspace.coop_words``).
COOP_BITS = tl.constexpr(tuning.SPLIT_COOP_BIN_BITS)
COOP_BINS = tl.constexpr(1 << tuning.SPLIT_COOP_BIN_BITS)


@triton.jit
def _order_key(x):
    """float32 tensor -> uint32 order keys (negative floats: flip all bits; others: set the sign bit)."""
    u = x.to(tl.uint32, bitcast=True)
    key = tl.where((u >> 31) != 0, u ^ 0xFFFFFFFF, u | 0x80000000)  # not ~u: older interpreters overflow
    return tl.where(x != x, 0xFFFFFFFF, key)


def kernels_interpreted() -> bool:
    """True when the Triton kernels run through Triton's interpreter (``TRITON_INTERPRET=1`` at import): the
    decorator then made interpreted functions, which execute no PTX."""
    from triton.runtime.interpreter import InterpretedFunction

    return isinstance(_order_key, InterpretedFunction)


#: The ballot itself is PTX; the interpreter computes the same ranks with a scan (``_lane_rank``).
BALLOT_ASM = tl.constexpr(bool(tuning.STAGE_BALLOT) and not kernels_interpreted())
#: Reductions of several operands at once (``tl.reduce`` over a tuple with a combine function of ours) are one block
#: reduction on the GPU, but the interpreter runs them one element at a time in Python: three quarters of an
#: interpreted 8 x 33000 call went there (NOTES entry 56). Under the interpreter the helpers that use one
#: (``_minmax``, ``_crossing_bin``, ``_count_tiles``, the sample's bracket, the staging's admitted span) take the
#: same values from one plain reduction per operand, which it runs vectorised. The GPU build keeps the tuple form
#: on its original source lines: moved into helpers of their own, it compiled to other SASS through the source
#: locations alone. ``test_gvr_reduce_forms.py`` runs both forms through the interpreter and compares them.
PLAIN_REDUCE = tl.constexpr(kernels_interpreted())


@triton.jit
def _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN: tl.constexpr):
    """Valid columns of ``row``: ``(kv_lens[row // next_n] - next_n + row % next_n + 1) >> cr_shift`` clamped to
    ``[0, n_bound]`` (varlen), else ``n_uniform`` clamped the same way."""
    if VARLEN:
        kv = tl.load(kv_lens_ptr + row // next_n)
        n = (kv - next_n + row % next_n + 1) >> cr_shift
    else:
        n = n_uniform
    return tl.minimum(tl.maximum(n, 0), n_bound)


@triton.jit
def _row_lengths(rows, ROWS_BLOCK: tl.constexpr, kv_lens_ptr, next_n, cr_shift, n_bound):
    """``_row_length`` of rows 0 .. rows - 1 of a varlen launch at once, on ROWS_BLOCK >= rows lanes (0 past
    ``rows``, whose ``kv_lens`` entries are not read)."""
    r = tl.arange(0, ROWS_BLOCK)
    live = r < rows
    kv = tl.load(kv_lens_ptr + r // next_n, mask=live, other=0)
    n = tl.minimum(tl.maximum((kv - next_n + r % next_n + 1) >> cr_shift, 0), n_bound)
    return tl.where(live, n, 0)


@triton.jit
def _balanced_shares(q, row, rows, ROWS_BLOCK: tl.constexpr, kv_lens_ptr, next_n, cr_shift, n_bound,
                     K: tl.constexpr, TILE: tl.constexpr, PROGRAMS):
    """The split family's staging shared out by row length (``tuning.SPLIT_BALANCE``): of a launch's PROGRAMS
    programs, each long row (n > K) of the ``rows`` gets 1 + (PROGRAMS - longs) * tiles / all_tiles (rounded down,
    at most its tiles), so the programs sum to at most PROGRAMS and rows of one length get PROGRAMS / rows each;
    program ``q`` stages part ``part`` of ``split`` of row ``srow``, in row order. Every program computes the same
    shares from ``kv_lens``, so the staging programs of a row and the programs that wait for them agree on how many
    there are. Returns (srow, part, split, n) for program q (split 0: q stages nothing; n: srow's length, taken
    from the lengths read here, so staging needs no second dependent load) and the programs that stage ``row``."""
    n = _row_lengths(rows, ROWS_BLOCK, kv_lens_ptr, next_n, cr_shift, n_bound)
    tiles = tl.where(n > K, (n + TILE - 1) // TILE, 0)
    longs = tl.sum((tiles > 0).to(tl.int32), 0)
    spare = PROGRAMS - longs
    shares = tl.where(tiles > 0, tl.minimum(1 + spare * tiles // tl.maximum(tl.sum(tiles, 0), 1), tiles), 0)
    end = tl.cumsum(shares, 0)
    lane = tl.arange(0, ROWS_BLOCK)
    # Rows whose programs all come before q (rows without any count too): q's row is the next one.
    srow = tl.sum((end <= q).to(tl.int32), 0)
    split = tl.sum(tl.where(lane == srow, shares, 0), 0)
    part = q - tl.sum(tl.where(lane == srow, end - shares, 0), 0)
    srow_n = tl.sum(tl.where(lane == srow, n, 0), 0)
    return srow, part, split, srow_n, tl.sum(tl.where(lane == row, shares, 0), 0)


@triton.jit
def _row_publish(flag_ptr):
    """Count this program's part of a row as done at ``flag_ptr``. The block barrier orders every thread's earlier
    writes before the release."""
    tl.debug_barrier()
    tl.atomic_add(flag_ptr, 1, sem="release")


@triton.jit
def _row_wait(flag_ptr, target):
    """Wait until ``target`` parts of a row are done at ``flag_ptr`` (``_row_publish``); their writes are then
    visible to every thread after the closing block barrier. Every program waited for must be resident or done."""
    seen = tl.atomic_add(flag_ptr, 0, sem="acquire")
    while seen < target:
        seen = tl.atomic_add(flag_ptr, 0, sem="acquire")
    tl.debug_barrier()


@triton.jit
def _emit_short(out_ptr, val_ptr, row_ptr, n, K: tl.constexpr, KB: tl.constexpr, HAS_VALUES: tl.constexpr):
    """Rows with n <= K: slots 0..n-1 get their own column, the rest PAD (-1 / PAD_VALUE)."""
    slot = tl.arange(0, KB)
    live = slot < n
    tl.store(out_ptr + slot, tl.where(live, slot, -1), mask=slot < K)
    if HAS_VALUES:
        v = tl.load(row_ptr + slot, mask=live, other=0.0).to(tl.float32)
        tl.store(val_ptr + slot, tl.where(live, v, PAD_VALUE), mask=slot < K)


@triton.jit
def _add_pair(a0, a1, b0, b1):
    return a0 + b0, a1 + b1


@triton.jit
def _minmax_combine(a_lo, a_hi, b_lo, b_hi):
    return tl.minimum(a_lo, b_lo), tl.maximum(a_hi, b_hi)


@triton.jit
def _minmax_top_combine(a_lo, a_hi, a_top, b_lo, b_hi, b_top):
    return tl.minimum(a_lo, b_lo), tl.maximum(a_hi, b_hi), tl.maximum(a_top, b_top)


@triton.jit
def _minmax(keys, mask):
    """(min, max) of ``keys[mask]`` in one block reduction (two separate reductions cost two barrier rounds)."""
    if PLAIN_REDUCE:
        return tl.min(tl.where(mask, keys, 0xFFFFFFFF), 0), tl.max(tl.where(mask, keys, 0), 0)
    else:
        return tl.reduce((tl.where(mask, keys, 0xFFFFFFFF), tl.where(mask, keys, 0)), 0, _minmax_combine)


@triton.jit
def _pick_higher_bin(a_bin, a_above, a_in, b_bin, b_above, b_in):
    take_a = a_bin >= b_bin
    return tl.where(take_a, a_bin, b_bin), tl.where(take_a, a_above, b_above), tl.where(take_a, a_in, b_in)


@triton.jit
def _pick_bin_plain(bins, cand, above, in_b):
    """``tl.reduce((cand, above, in_b), 0, _pick_higher_bin)`` for ``cand`` = ``bins`` or -1 (the highest candidate
    bin with its two counts) as one plain reduction per operand, for the interpreter (``PLAIN_REDUCE``). With no
    candidate (-1 everywhere) both return bin 0's counts."""
    b = tl.max(cand, 0)
    at = bins == tl.maximum(b, 0)
    return b, tl.sum(tl.where(at, above, 0), 0), tl.sum(tl.where(at, in_b, 0), 0)


@triton.jit
def _crossing_bin(hist, need, NBINS: tl.constexpr):
    """Highest bin b whose count of entries in bins >= b reaches ``need`` (the caller guarantees total >= need).

    Returns (b, entries strictly above b, entries in b). Two block operations, each a barrier round across the
    program's warps on this latency chain: one suffix scan, then one reduction that carries the bin's counts with
    it (the bins that reach ``need`` are a prefix, so the highest of them is the crossing bin)."""
    bins = tl.arange(0, NBINS)
    at_or_above = tl.cumsum(hist, 0, reverse=True)
    ok = at_or_above >= need
    if PLAIN_REDUCE:
        b, above, in_b = _pick_bin_plain(bins, tl.where(ok, bins, -1), at_or_above - hist, hist)
    else:
        b, above, in_b = tl.reduce((tl.where(ok, bins, -1), at_or_above - hist, hist), 0, _pick_higher_bin)
    return b, above, in_b


@triton.jit
def _crossing_bin_counted(hist, count, need, NBINS: tl.constexpr):
    """``_crossing_bin`` of a histogram of ``count`` entries whose bin 0 was not counted (it reads 0): bin 0 holds
    every entry the other bins do not, ``count`` minus their sum. The same two block operations: the suffix scan
    already gives that sum at bin 0."""
    bins = tl.arange(0, NBINS)
    scan = tl.cumsum(hist, 0, reverse=True)  # at bin 0: the entries of bins 1 and up
    at_or_above = tl.where(bins == 0, count, scan)
    in_b = tl.where(bins == 0, count - scan, hist)
    ok = at_or_above >= need
    if PLAIN_REDUCE:
        b, above, in_b = _pick_bin_plain(bins, tl.where(ok, bins, -1), at_or_above - in_b, in_b)
    else:
        b, above, in_b = tl.reduce((tl.where(ok, bins, -1), at_or_above - in_b, in_b), 0, _pick_higher_bin)
    return b, above, in_b


@triton.jit
def _digit_shift(span, BITS: tl.constexpr):
    """A shift with (span >> shift) < 2**BITS, so one radix level splits the window into at most 2**BITS bins: the
    bit length of ``span`` minus BITS, read from the float32 exponent of ``span`` (no loop; ``reference.digit_shift``
    is its host mirror). Rounding to float32 can only raise the exponent by one, which gives one more bit of shift:
    at least 2**(BITS-2) bins still, so every level still narrows the window."""
    e = (span.to(tl.float32).to(tl.uint32, bitcast=True) >> 23).to(tl.int32) - 127
    return tl.maximum(e - (BITS - 1), 0)


@triton.jit
def _bin_window(lo, hi, b, shift):
    """The key window [lo', hi'] of bin ``b`` of a radix level over [lo, hi] with bins of width 2**shift (the last
    bin clipped to hi)."""
    new_lo = lo + (b.to(tl.uint32) << shift)
    # Upper edge written as an offset from new_lo so it cannot wrap past 2**32 - 1.
    return new_lo, new_lo + tl.minimum(hi - new_lo, (tl.full([], 1, tl.uint32) << shift) - 1)


@triton.jit
def _minmax_tiles(keys, mask, tkeys, tmask, TAIL: tl.constexpr):
    """``_minmax`` over a tile and its tail tile (``TAIL`` lanes; none when 0, and ``tkeys``/``tmask`` unused)."""
    lo, hi = _minmax(keys, mask)
    if TAIL > 0:
        t_lo, t_hi = _minmax(tkeys, tmask)
        lo = tl.minimum(lo, t_lo)
        hi = tl.maximum(hi, t_hi)
    return lo, hi


@triton.jit
def _count_tiles(a0, a1, t0, t1, TAIL: tl.constexpr):
    """(count of mask ``a0``, count of mask ``a1``) over a tile and its tail tile (masks ``t0``, ``t1``; unused when
    ``TAIL`` is 0), in one reduction per tile."""
    if PLAIN_REDUCE:
        n0 = tl.sum(a0.to(tl.int32), 0)
        n1 = tl.sum(a1.to(tl.int32), 0)
    else:
        n0, n1 = tl.reduce((a0.to(tl.int32), a1.to(tl.int32)), 0, _add_pair)
    if TAIL > 0:
        if PLAIN_REDUCE:
            m0 = tl.sum(t0.to(tl.int32), 0)
            m1 = tl.sum(t1.to(tl.int32), 0)
        else:
            m0, m1 = tl.reduce((t0.to(tl.int32), t1.to(tl.int32)), 0, _add_pair)
        n0 += m0
        n1 += m1
    return n0, n1


@triton.jit
def _radix_kth_tiles(keys, mask, tkeys, tmask, need, TAIL: tl.constexpr):
    """The ``need``-th largest key among ``keys[mask]`` and ``tkeys[tmask]`` (the tail tile, ``TAIL`` lanes; none
    when 0), 1 <= need <= the masks' count, exactly.

    Each level histograms ``(key - lo) >> shift`` over the current window [lo, hi] (at most RADIX_BINS bins), keeps
    the crossing bin, and tightens the window to that bin's smallest and largest member. A window that holds a single
    key, or a crossing bin that is needed whole, ends the search; a 32-bit window needs at most
    ceil(32 / (RADIX_BITS - 1)) levels (``_digit_shift`` may give one bit fewer per level). A tail tile lets a row
    of a few more columns than a power of two skip the next power of two's dead lanes: it costs one more reduction
    and one more histogram per level, on a small tile."""
    need = tl.zeros([], tl.int32) + need  # a tensor even when the caller passes a constexpr (loop-carried)
    lo, hi = _minmax_tiles(keys, mask, tkeys, tmask, TAIL)
    while lo < hi:
        shift = _digit_shift(hi - lo, RADIX_BITS)
        win = mask & (keys >= lo) & (keys <= hi)
        digit = tl.where(win, (keys - lo) >> shift, 0).to(tl.int32)
        hist = tl.histogram(digit, RADIX_BINS, mask=win)
        if TAIL > 0:
            t_win = tmask & (tkeys >= lo) & (tkeys <= hi)
            t_digit = tl.where(t_win, (tkeys - lo) >> shift, 0).to(tl.int32)
            hist += tl.histogram(t_digit, RADIX_BINS, mask=t_win)
        b, above, in_b = _crossing_bin(hist, need, RADIX_BINS)
        need -= above
        t_in_b = tmask  # unused without a tail tile
        if TAIL > 0:
            t_in_b = t_win & (t_digit == b)
        lo, hi = _minmax_tiles(keys, win & (digit == b), tkeys, t_in_b, TAIL)
        if need == in_b:
            # The whole crossing bin is needed: its smallest key is the K-th key.
            hi = lo
    return lo


@triton.jit
def _select_tile(keys, cols, cand, need):
    """Mask of exactly ``need`` lanes of ``cand`` (count(cand) >= need): all keys above the need-th largest key,
    then, among the lanes tied with it, those with the lowest column index (``_select_tiles`` on one tile)."""
    sel, _ = _select_tiles(keys, cols, cand, keys, cols, cand, need, 0)
    return sel


@triton.jit
def _select_tiles(keys, cols, cand, tkeys, tcols, tcand, need, TAIL: tl.constexpr):
    """Masks (tile, tail tile) of exactly ``need`` lanes of ``cand`` and ``tcand`` together (the tail tile has
    ``TAIL`` lanes, none when 0: its mask is then meaningless): all keys above the need-th largest key, then,
    among the lanes tied with it, those with the lowest column index."""
    kth = _radix_kth_tiles(keys, cand, tkeys, tcand, need, TAIL)
    gt = cand & (keys > kth)
    eq = cand & (keys == kth)
    t_gt = tcand  # the tail's masks are unused without a tail tile
    t_eq = tcand
    if TAIL > 0:
        t_gt = tcand & (tkeys > kth)
        t_eq = tcand & (tkeys == kth)
    n_gt, n_eq = _count_tiles(gt, eq, t_gt, t_eq, TAIL)
    take = need - n_gt
    if take < n_eq:
        # More ties than slots: rank the tied lanes by column (a lower column is a larger "index key").
        col_key = (0x7FFFFFFF - cols).to(tl.uint32)
        t_col_key = col_key
        if TAIL > 0:
            t_col_key = (0x7FFFFFFF - tcols).to(tl.uint32)
        cut = _radix_kth_tiles(col_key, eq, t_col_key, t_eq, take, TAIL)
        eq = eq & (col_key >= cut)
        if TAIL > 0:
            t_eq = t_eq & (t_col_key >= cut)
    return gt | eq, t_gt | t_eq


@triton.jit
def _rank_select(keys, cols, cand, need):
    """Mask of exactly ``need`` lanes of ``cand`` (count(cand) >= need), as ``_select_tile`` chooses them, by rank:
    a lane's rank is how many candidates come before it in (key descending, column ascending) order, so the ranks
    of the candidates are 0 .. count - 1 (columns are distinct) and the lanes ranked below ``need`` are the larger
    keys first, then the lowest columns among the tied. One [M, M] compare and one reduction for an M-lane tile,
    where ``_select_tile``'s radix levels chain a dozen block operations: for small M (the cooperative finisher's
    crossing bin, ``tuning.SPLIT_COOP_RANK_MAX``)."""
    ki = keys[:, None]
    kj = keys[None, :]
    before = cand[None, :] & ((kj > ki) | ((kj == ki) & (cols[None, :] < cols[:, None])))
    rank = tl.sum(before.to(tl.int32), 1)
    return cand & (rank < need)


@triton.jit
def _emit_selected(out_ptr, val_ptr, row_ptr, cols, sel, base, HAS_VALUES: tl.constexpr):
    """Write the selected columns to consecutive slots from ``base``; returns the new base."""
    pos = base + tl.cumsum(sel.to(tl.int32), 0) - 1
    tl.store(out_ptr + pos, cols, mask=sel)
    if HAS_VALUES:
        v = tl.load(row_ptr + cols, mask=sel, other=0.0).to(tl.float32)
        tl.store(val_ptr + pos, v, mask=sel)
    return base + tl.sum(sel.to(tl.int32), 0)


@triton.jit
def _load_keys(row_ptr, cols, n):
    """Order keys of columns ``cols`` (0 for columns >= n: those are never read)."""
    live = cols < n
    x = tl.load(row_ptr + cols, mask=live, other=0.0).to(tl.float32)
    return tl.where(live, _order_key(x), 0)


@triton.jit
def _exact_row(out_ptr, val_ptr, row_ptr, n, K: tl.constexpr, TILE: tl.constexpr, HAS_VALUES: tl.constexpr):
    """Exact top-K of a row streamed from global memory (n > K): the whole-row fallback of every family.

    One min/max pass, one histogram pass per radix level (<= 4), one emission pass in column order (so ties at
    the K-th key go to the lowest columns without extra ranking)."""
    offs = tl.arange(0, TILE)
    lo = tl.full([], 0xFFFFFFFF, tl.uint32)
    hi = tl.full([], 0, tl.uint32)
    for start in range(0, n, TILE):
        keys = _load_keys(row_ptr, start + offs, n)
        live = (start + offs) < n
        lo = tl.minimum(lo, tl.min(tl.where(live, keys, 0xFFFFFFFF), 0))
        hi = tl.maximum(hi, tl.max(keys, 0))
    need = tl.zeros([], tl.int32) + K
    while lo < hi:
        shift = _digit_shift(hi - lo, 8)
        hist = tl.zeros([256], dtype=tl.int32)
        for start in range(0, n, TILE):
            keys = _load_keys(row_ptr, start + offs, n)
            win = ((start + offs) < n) & (keys >= lo) & (keys <= hi)
            digit = tl.where(win, (keys - lo) >> shift, 0).to(tl.int32)
            hist += tl.histogram(digit, 256, mask=win)
        b, above, in_b = _crossing_bin(hist, need, 256)
        need -= above
        lo, hi = _bin_window(lo, hi, b, shift)
    # lo is the K-th key; `need` of the scores equal to it are selected, lowest columns first.
    _emit_column_order(out_ptr, val_ptr, row_ptr, 0 * n, n, lo, 0 * n, need, True, TILE, HAS_VALUES)


@triton.jit
def _sample_threshold(row_ptr, n, rank, SAMPLE: tl.constexpr, GROUP: tl.constexpr, MAXIMA: tl.constexpr):
    """``_sample_bracket``'s threshold alone."""
    thr, _top = _sample_bracket(row_ptr, n, rank, SAMPLE, GROUP, MAXIMA)
    return thr


@triton.jit
def _sample_bracket(row_ptr, n, rank, SAMPLE: tl.constexpr, GROUP: tl.constexpr, MAXIMA: tl.constexpr):
    """(threshold, window top). The threshold: an order key that at least ``rank`` scores of a
    deterministic sample of ``SAMPLE`` scores reach, close to the sample's rank-``rank`` key
    (``tuning.SAMPLE_LEVELS`` levels of up to 2**``SAMPLE_BIN_BITS`` bins; at the default two levels of 256, within
    1/16384 of the sample's key span, at worst 1/4096). ``tuning.SAMPLE_LOW_GROUPS`` may start the first level's
    window above the sample's minimum and ``tuning.SAMPLE_STOP_DIV`` stop the levels early (both off by default).
    MAXIMA > 0 (``Plan.maxima``): the levels run over that many group maxima of the sample instead of its keys.

    Histogram levels, no exact search: the threshold only steers how many scores get staged; the count that
    follows is exact, so an approximate rank costs at most a retry, never exactness. The sample is SAMPLE/GROUP
    groups of GROUP adjacent scores spread evenly over [0, n); needs n >= SAMPLE so every position is distinct and in
    range. Adjacent scores of decode rows are correlated (runs of related tokens), so wide groups sample fewer
    independent scores: GROUP=1 costs one 32-byte sector per score but keeps the survivor count within 0.83-1.22x
    of its aim on the benchmark's decode rows, against 0.48-1.82x with GROUP=8 (tuning.SAMPLE_GROUP). Every
    program of a row computes the same values.

    The window top is the largest sampled key below +inf's (+inf and NaN left out), at least the threshold: the
    cooperative split form bins its candidates over [threshold, top] (``_window_digit`` clamps larger keys into the
    last bin), and a top at +inf's key made those bins so wide that a row with a few percent of +inf scores put
    nearly all finite candidates into one bin, past CROSS_CAP, and left its whole select to one program (NOTES
    entry 26: 8 x 131075 with 1% +inf 94 us). Callers that only need the threshold drop the extra reduction."""
    GROUPS: tl.constexpr = SAMPLE // GROUP
    lane = tl.arange(0, SAMPLE)
    n_g = n // GROUP
    # A 1-D tile (lane -> its group's start plus its place in the group), never a flattened [GROUPS, GROUP] one:
    # Triton 3.6 miscounts a masked tl.histogram of a flattened 2-D tile on the GPU (NOTES entries 15-16), and the
    # second level's window mask is one. int64 product: GROUPS * n overflows int32 past 2**31 / GROUPS columns.
    cols = ((lane // GROUP).to(tl.int64) * n_g // GROUPS).to(tl.int32) * GROUP + lane % GROUP
    keys = _order_key(tl.load(row_ptr + cols).to(tl.float32))
    # 0xFF800000: the key of +inf.
    finite = tl.where(keys < tl.full([], 0xFF800000, tl.uint32), keys, 0)
    # The keys the histogram levels run over: every sampled key, or the maxima of MAXIMA groups (group j: lanes j,
    # j + G, ..., spread over the row) at the rank among them that stands for ``rank`` (``Plan.maxima``): each
    # level's ballot-lowered histogram then counts G keys instead of SAMPLE.
    NKEYS: tl.constexpr = MAXIMA if (MAXIMA > 0) and (MAXIMA < SAMPLE) else SAMPLE
    if NKEYS < SAMPLE:
        keys = tl.max(tl.reshape(keys, [SAMPLE // NKEYS, NKEYS]), 0)
        # The largest finite key per group: their largest is the sample's, so the window top does not change.
        finite = tl.max(tl.reshape(finite, [SAMPLE // NKEYS, NKEYS]), 0)
        rank = _maxima_rank(rank, SAMPLE, NKEYS)
    # One block reduction for all three (each is a barrier round across the program's warps on its critical path).
    if PLAIN_REDUCE:
        lo = tl.min(keys, 0)
        hi = tl.max(keys, 0)
        top = tl.max(finite, 0)
    else:
        lo, hi, top = tl.reduce((keys, keys, finite), 0, _minmax_top_combine)
    if (SAMPLE_LOW_GROUPS > 0) and (SAMPLE_LOW_GROUPS < NKEYS):
        # The first window starts at the smallest of G group maxima (group j: lanes j, j + G, ...) when rank <= G:
        # G distinct keys reach it, so the rank-th largest does too, and the window holds only the sample's upper
        # part: its first level's bins are that much narrower (tuning.SAMPLE_LOW_GROUPS).
        low = tl.min(tl.max(tl.reshape(keys, [NKEYS // SAMPLE_LOW_GROUPS, SAMPLE_LOW_GROUPS]), 0), 0)
        lo = tl.where(rank <= SAMPLE_LOW_GROUPS, low, lo)
    need = tl.zeros([], tl.int32) + rank
    go = lo < hi
    for level in tl.static_range(SAMPLE_LEVELS):
        if go:
            shift = _digit_shift(hi - lo, SAMPLE_BITS)
            win = (keys >= lo) & (keys <= hi)
            digit = tl.where(win, (keys - lo) >> shift, 0).to(tl.int32)
            b, above, in_b = _crossing_bin(tl.histogram(digit, SAMPLE_BINS, mask=win), need, SAMPLE_BINS)
            need -= above
            lo, hi = _bin_window(lo, hi, b, shift)
            go = lo < hi
            if (SAMPLE_STOP_DIV > 0) and (level + 1 < SAMPLE_LEVELS):
                # A crossing bin this small already pins the rank closely enough (tuning.SAMPLE_STOP_DIV): the next
                # level's histogram would only move the threshold up by a few sampled keys.
                go = go & (in_b * SAMPLE_STOP_DIV > rank)
    return lo, tl.maximum(top, lo)


@triton.jit
def _maxima_rank(rank, SAMPLE: tl.constexpr, GROUPS: tl.constexpr):
    """The rank among GROUPS group maxima of a SAMPLE-key sample that stands for ``rank`` in the sample: a key
    reached by a share p = rank / SAMPLE of the sample is reached by a group's maximum (m = SAMPLE / GROUPS keys
    spread over the row) with probability 1 - (1 - p)**m, so GROUPS - floor(GROUPS * (1 - p)**m), at least 1. The
    power by squaring in float32 (m is a power of two); ``reference.maxima_rank`` mirrors it operation for
    operation. The product rank * (1 / SAMPLE) is exact (a power of two), so a fused multiply-add rounds alike."""
    q = 1.0 - rank.to(tl.float32) * (1.0 / SAMPLE)
    for i in tl.static_range(16):
        if (GROUPS << i) < SAMPLE:
            q = q * q
    r = GROUPS - (q * GROUPS).to(tl.int32)
    return tl.minimum(tl.maximum(r, 1), GROUPS)


@triton.jit
def _sample_rank(n, aim, SAMPLE: tl.constexpr):
    """Rank in the sample whose key should leave about ``aim`` of the row's n scores at or above it."""
    r = (aim * SAMPLE + n - 1) // n
    return tl.minimum(tl.maximum(r, 1), SAMPLE)


@triton.jit
def _row_threshold(row_ptr, n, aim, CAP: tl.constexpr, SAMPLE: tl.constexpr, SAMPLE_GROUP: tl.constexpr,
                   SAMPLE_MAXIMA: tl.constexpr):
    """The staging threshold of a row of n > K columns, the guess: the key near rank ``aim * SAMPLE / n`` of the
    row's deterministic sample (1 = admit all for rows that fit the slot). Every program that computes it for a row
    gets the same value."""
    if n <= CAP:
        thr = tl.full([], 1, tl.uint32)
    else:
        thr = _sample_threshold(row_ptr, n, _sample_rank(n, aim, SAMPLE), SAMPLE, SAMPLE_GROUP, SAMPLE_MAXIMA)
    return thr


@triton.jit
def _row_threshold_window(row_ptr, n, aim, CAP: tl.constexpr, SAMPLE: tl.constexpr, SAMPLE_GROUP: tl.constexpr,
                          SAMPLE_MAXIMA: tl.constexpr):
    """``_row_threshold`` plus a key window [lo, hi] in which the row's K-th largest key likely lies: the sample
    threshold and the sample's largest key below +inf's (``_sample_bracket``). A row that fits the slot is still
    admitted whole (threshold 1), its window taken from the same sample (positions repeat when n < SAMPLE; any
    window is correct, only its resolution depends on it). Every program that computes it for a row gets the same
    values."""
    lo, hi = _sample_bracket(row_ptr, n, _sample_rank(n, aim, SAMPLE), SAMPLE, SAMPLE_GROUP, SAMPLE_MAXIMA)
    thr = tl.where(n <= CAP, tl.full([], 1, tl.uint32), lo)
    return thr, lo, hi


@triton.jit
def _window_digit(keys, lo, shift, NBINS: tl.constexpr):
    """Bin of each order key in a histogram over the window from ``lo`` in bins of 2**shift keys: keys below the
    window go to bin 0 and keys past its last bin to bin NBINS - 1. Monotone in the key, so the bins above a
    crossing bin hold only larger keys, whatever the window."""
    return tl.where(keys >= lo, tl.minimum((keys - lo) >> shift, NBINS - 1), 0).to(tl.int32)


@triton.jit
def _hint_threshold(hint_ptr, row_ptr, n, K: tl.constexpr, KB: tl.constexpr):
    """Smallest order key at the valid (0 <= h < n) positions of a K-entry hint; KEY_MAX if none is valid.

    With K distinct valid positions, at least K scores reach it (the same lemma as the hint-free bracket); with
    duplicates or invalid entries callers must verify the count before trusting it."""
    slot = tl.arange(0, KB)
    hint = tl.load(hint_ptr + slot, mask=slot < K, other=-1)
    ok = (hint >= 0) & (hint < n)
    x = tl.load(row_ptr + hint, mask=ok, other=0.0).to(tl.float32)
    return tl.min(tl.where(ok, _order_key(x), 0xFFFFFFFF), 0)


@triton.jit
def _select_staged(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K: tl.constexpr, CAP: tl.constexpr,
                   MIN_TILE: tl.constexpr, HAS_VALUES: tl.constexpr, CHUNK: tl.constexpr):
    """Exact top-K of ``count`` staged candidates (K <= count <= CAP), on the smallest tile that holds them: every
    block operation costs in proportion to the tile's lanes, not the candidates. Tiles: CAP/2 (the sample aims at
    fewer survivors than that; measured 20-25% faster than CAP at K=512 on the H200, within noise at K=2048), CAP,
    and MIN_TILE lanes too when MIN_TILE < CAP/2 (``tuning.SELECT_MIN_TILE``; the test on MIN_TILE is a constexpr,
    so a disabled small tile is not compiled at all). With CHUNK > 0 (``tuning.SELECT_CHUNK``), candidates that fit
    CAP/2 are selected by ``_select_staged_looped`` instead of on a tile."""
    if CHUNK > 0:
        if (count <= CAP // 2) and (K <= CAP // 2):
            _select_staged_looped(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP, CHUNK, HAS_VALUES)
        else:
            _select_staged_tile(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP, HAS_VALUES, True)
    elif MIN_TILE < CAP // 2:
        if (count <= MIN_TILE) and (K <= MIN_TILE):
            _select_staged_tile(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, MIN_TILE, HAS_VALUES, True)
        else:
            _select_half_or_full(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP, HAS_VALUES)
    else:
        _select_half_or_full(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP, HAS_VALUES)


@triton.jit
def _select_within_half(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K: tl.constexpr, CAP: tl.constexpr,
                        MIN_TILE: tl.constexpr, HAS_VALUES: tl.constexpr, CHUNK: tl.constexpr, LARGE_BIN: tl.constexpr):
    """``_select_staged`` for K <= count <= CAP/2 (K <= CAP/2): the CAP/2-lane tile, and the MIN_TILE-lane one only
    where K < MIN_TILE (at K = MIN_TILE it would serve count == K alone), so a kernel that selects nothing larger
    compiles one or two tiles instead of three. Without LARGE_BIN a crossing bin past CROSS_CAP is left to the caller
    (``_select_staged_tile``). Returns 1 when the row's output is written, else 0 (its slot unchanged)."""
    done = tl.full([], 1, tl.int32)
    if CHUNK > 0:
        _select_staged_looped(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP, CHUNK, HAS_VALUES)
    elif (K < MIN_TILE) and (MIN_TILE < CAP // 2):
        if count <= MIN_TILE:
            done = _select_staged_tile(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, MIN_TILE,
                                       HAS_VALUES, LARGE_BIN)
        else:
            done = _select_staged_tile(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP // 2,
                                       HAS_VALUES, LARGE_BIN)
    else:
        done = _select_staged_tile(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP // 2, HAS_VALUES,
                                   LARGE_BIN)
    return done


@triton.jit
def _select_half_or_full(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K: tl.constexpr,
                         CAP: tl.constexpr, HAS_VALUES: tl.constexpr):
    """``_select_staged`` on a CAP/2-lane tile when the candidates (and K) fit it, else on the CAP-lane tile."""
    if (count <= CAP // 2) and (K <= CAP // 2):
        _select_staged_tile(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP // 2, HAS_VALUES, True)
    else:
        _select_staged_tile(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP, HAS_VALUES, True)


@triton.jit
def _select_staged_tile(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K: tl.constexpr, CAP: tl.constexpr,
                        HAS_VALUES: tl.constexpr, LARGE_BIN: tl.constexpr):
    """Exact top-K of ``count`` staged candidates (K <= count <= CAP). The slot's head is reused as scratch: its
    content is lost.

    One histogram (2**``tuning.SELECT_BIN_BITS`` bins) over the candidates' key window splits them into certain
    winners (bins above the crossing bin), losers, and the crossing bin. The crossing bin is usually a few dozen to a
    few hundred candidates: they are
    compacted to the slot's head and the remaining ``need`` of them are selected on a small tile, so the radix
    levels run on CROSS_CAP lanes instead of CAP. A crossing bin larger than CROSS_CAP is refined in place, with
    LARGE_BIN; without, nothing is written and the slot is left as it was, for a caller that selects such rows
    elsewhere (the streaming family's accept launch, ``tuning.STREAM_ACCEPT_LARGE_BIN``), and the refinement's radix
    levels over CAP lanes are not compiled. Returns 1 when the row's output is written, else 0."""
    keys, cols, live = _load_slot(slot_keys, slot_cols, count, CAP)
    lo, hi = _minmax(keys, live)
    certain, cross, need, in_b = _split_at_crossing_bin(keys, live, lo, hi, K)
    done = tl.full([], 1, tl.int32)
    if need == in_b:
        # The whole crossing bin is needed: no refinement at all.
        _emit_selected(out_ptr, val_ptr, row_ptr, cols, certain | cross, 0, HAS_VALUES)
    elif in_b <= CROSS_CAP:
        tl.debug_barrier()  # every lane has read the slot before its head is overwritten
        cpos = tl.cumsum(cross.to(tl.int32), 0) - 1
        tl.store(slot_keys + cpos, keys.to(tl.int32, bitcast=True), mask=cross)
        tl.store(slot_cols + cpos, cols, mask=cross)
        tl.debug_barrier()  # the compacted crossing bin is visible to every lane
        _select_compacted(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, cols, certain, K - need, in_b, need,
                          CROSS_CAP, HAS_VALUES)
    else:
        if LARGE_BIN:
            sel = certain | _select_tile(keys, cols, cross, need)
            _emit_selected(out_ptr, val_ptr, row_ptr, cols, sel, 0, HAS_VALUES)
        else:
            done = tl.zeros([], tl.int32)
    return done


@triton.jit
def _slot_chunk(slot_keys, c, count, CHUNK: tl.constexpr):
    """Order keys of the staged candidates ``c .. c + CHUNK - 1`` (0 past ``count``), which lanes hold one, and the
    slot positions. Read past L1 (``.cg``), as ``_load_slot``."""
    i = c + tl.arange(0, CHUNK)
    live = i < count
    raw = tl.load(slot_keys + i, mask=live, other=0, cache_modifier=".cg")
    return tl.where(live, _order_key(raw.to(tl.float32, bitcast=True)), 0), live, i


@triton.jit
def _select_staged_looped(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K: tl.constexpr, CAP: tl.constexpr,
                          CHUNK: tl.constexpr, HAS_VALUES: tl.constexpr):
    """``_select_staged_tile``'s selection (count <= CAP/2, K <= CAP/2) in loops over CHUNK-candidate chunks of the
    slot instead of on one CAP/2-lane tile: a pass for the key window, a pass for the histogram (SELECT_BINS bins),
    then one pass that writes the certain winners (bins above the crossing bin) to the output and compacts the
    crossing bin into the slot's unused tail (positions count .. count + in_b - 1 < CAP), then the radix select of
    the crossing bin on a CROSS_CAP-lane tile. A crossing bin larger than CROSS_CAP (and not needed whole) goes to
    ``_select_staged_tile`` on the CAP/2 tile.

    Why (NOTES entry 21; measured level with the tile select, entry 22): the tile select runs as one straight-line
    path of ~4,700 instructions per warp (entry 20: a quarter of its stall samples wait for instruction fetch at 512
    rows) and holds CAP/2 lanes of keys, columns and digits in registers. The loops execute about as many
    instructions from a path a few times shorter, read the slot three times from L2 instead of once, and hold CHUNK
    lanes."""
    lo = tl.full([], 0xFFFFFFFF, tl.uint32)
    hi = tl.zeros([], tl.uint32)
    for c in range(0, count, CHUNK):
        keys, live, _i = _slot_chunk(slot_keys, c, count, CHUNK)
        c_lo, c_hi = _minmax(keys, live)
        lo = tl.minimum(lo, c_lo)
        hi = tl.maximum(hi, c_hi)
    shift = _digit_shift(hi - lo, SELECT_BITS)
    hist = tl.zeros([SELECT_BINS], tl.int32)
    for c in range(0, count, CHUNK):
        keys, live, _i = _slot_chunk(slot_keys, c, count, CHUNK)
        hist += tl.histogram(tl.where(live, (keys - lo) >> shift, 0).to(tl.int32), SELECT_BINS, mask=live)
    b, above, in_b = _crossing_bin(hist, K, SELECT_BINS)
    need = K - above
    if (need == in_b) | (in_b <= CROSS_CAP):
        # A crossing bin needed whole is emitted with the certain winners: the winners' lowest bin drops to b and
        # no lane is compacted (scalar bins, not a scalar flag and-ed into the lanes' masks: Triton's interpreter
        # turns a boolean scalar & a boolean tensor into int32).
        whole = (need == in_b).to(tl.int32)
        win_above = b - whole
        cross_bin = tl.where(need == in_b, -1, b)
        won = tl.zeros([], tl.int32)
        crossed = tl.zeros([], tl.int32)
        for c in range(0, count, CHUNK):
            keys, live, i = _slot_chunk(slot_keys, c, count, CHUNK)
            cols = tl.load(slot_cols + i, mask=live, other=0, cache_modifier=".cg")
            digit = tl.where(live, (keys - lo) >> shift, 0).to(tl.int32)
            win = live & (digit > win_above)
            cross = live & (digit == cross_bin)
            # One scan for both: winners in the low 16 bits, crossing-bin lanes in the high ones (CHUNK < 2**16).
            packed = win.to(tl.int32) + (cross.to(tl.int32) << 16)
            run = tl.cumsum(packed, 0)
            pos = won + (run & 0xFFFF) - 1
            tl.store(out_ptr + pos, cols, mask=win)
            if HAS_VALUES:
                v = tl.load(row_ptr + cols, mask=win, other=0.0).to(tl.float32)
                tl.store(val_ptr + pos, v, mask=win)
            tail = count + crossed + (run >> 16) - 1
            tl.store(slot_keys + tail, keys.to(tl.int32, bitcast=True), mask=cross)
            tl.store(slot_cols + tail, cols, mask=cross)
            total = tl.sum(packed, 0)
            won += total & 0xFFFF
            crossed += total >> 16
        if need != in_b:
            tl.debug_barrier()  # the compacted crossing bin is visible to every lane
            j = tl.arange(0, CROSS_CAP)
            small = j < in_b
            skeys = tl.load(slot_keys + count + j, mask=small, other=0, cache_modifier=".cg").to(tl.uint32,
                                                                                                bitcast=True)
            scols = tl.load(slot_cols + count + j, mask=small, other=0, cache_modifier=".cg")
            ssel = _select_tile(tl.where(small, skeys, 0), scols, small, need)
            _emit_selected(out_ptr, val_ptr, row_ptr, scols, ssel, above, HAS_VALUES)
    else:
        _select_staged_tile(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP // 2, HAS_VALUES, True)


@triton.jit
def _split_at_crossing_bin(keys, live, lo, hi, K: tl.constexpr):
    """One histogram (SELECT_BINS bins) of the ``live`` keys over their window [lo, hi]: (lanes in bins above the
    bin holding the K-th largest key, lanes in that crossing bin, how many of the crossing bin are needed, its
    size)."""
    shift = _digit_shift(hi - lo, SELECT_BITS)
    digit = tl.where(live, (keys - lo) >> shift, 0).to(tl.int32)
    b, above, in_b = _crossing_bin(tl.histogram(digit, SELECT_BINS, mask=live), K, SELECT_BINS)
    return live & (digit > b), live & (digit == b), K - above, in_b


@triton.jit
def _select_compacted(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, cols, certain, n_certain, in_b, need,
                      M: tl.constexpr, HAS_VALUES: tl.constexpr):
    """Emit the ``n_certain`` certain winners (``certain`` lanes of ``cols``) and the ``need`` winners among a
    crossing bin of ``in_b <= M`` candidates compacted to the slot's head, chosen by radix levels on an M-lane tile.
    The second emission starts at ``n_certain`` (known from the histogram), so it waits on no count of the first."""
    j = tl.arange(0, M)
    small = j < in_b
    skeys = tl.load(slot_keys + j, mask=small, other=0, cache_modifier=".cg").to(tl.uint32, bitcast=True)
    scols = tl.load(slot_cols + j, mask=small, other=0, cache_modifier=".cg")
    skeys = tl.where(small, skeys, 0)
    ssel = _select_tile(skeys, scols, small, need)
    _emit_selected(out_ptr, val_ptr, row_ptr, cols, certain, 0, HAS_VALUES)
    _emit_selected(out_ptr, val_ptr, row_ptr, scols, ssel, n_certain, HAS_VALUES)


@triton.jit
def _share_bounds(n, part, split, TILE: tl.constexpr):
    """Columns [start, end) that program ``part`` of ``split`` streams in a row of n: whole tiles, so shares never
    overlap and every program of the row computes the same split. ``split`` may be a constexpr (the split family)
    or a runtime int (the streaming family, whose programs per row change with the batch)."""
    tiles = (n + TILE - 1) // TILE
    share = (tiles + split - 1) // split * TILE
    start = part * share
    return start, tl.minimum(start + share, n)


@triton.jit
def _load_slot(slot_keys, slot_cols, count, CAP: tl.constexpr):
    """The ``count`` staged (key, column) pairs of a slot on a CAP-lane tile (keys 0 past them), and which lanes
    hold one. The staging stores raw float32 bits (``_stage_tile``); they become order keys here, on CAP lanes once
    per row instead of on every streamed score. Staged data may come from other programs, so it is read past L1
    (``.cg``)."""
    i = tl.arange(0, CAP)
    live = i < count
    raw = tl.load(slot_keys + i, mask=live, other=0, cache_modifier=".cg")
    cols = tl.load(slot_cols + i, mask=live, other=0, cache_modifier=".cg")
    return tl.where(live, _order_key(raw.to(tl.float32, bitcast=True)), 0), cols, live


@triton.jit
def _key_floor(thr):
    """float32 ``f`` for staging against order key ``thr`` (>= 1) with one float compare per score.

    ``not (x < f)`` holds for every x with ``_order_key(x) >= thr`` (NaN compares unordered, so it always passes),
    and the scores it admits are again all scores at or above some order key (at most thr): +0.0 also admits -0.0,
    a threshold above +inf's key admits +inf too, one below -inf's key gives a NaN ``f`` that admits everything.
    An upward-closed superset is all the selection needs: when it holds at least K scores it holds the top K."""
    t = tl.minimum(thr.to(tl.uint32), tl.full([], 0xFF800000, tl.uint32))  # the key of +inf
    bits = tl.where(t >= tl.full([], 0x80000000, tl.uint32), t & 0x7FFFFFFF, t ^ 0xFFFFFFFF)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _tile_offsets(TILE: tl.constexpr, LANES: tl.constexpr):
    """Column offsets of a staging tile: a [TILE / LANES, LANES] block, one score per thread across a row."""
    return tl.arange(0, TILE // LANES)[:, None] * LANES + tl.arange(0, LANES)[None, :]


@triton.jit
def _unaligned(ptr):
    """``ptr`` itself, moved through inline PTX so that the compiler assumes nothing about its alignment."""
    addr = tl.inline_asm_elementwise("mov.b64 $0, $1;", "=l,l", [ptr.to(tl.int64)], dtype=tl.int64, is_pure=True,
                                     pack=1)
    return addr.to(ptr.dtype)


@triton.jit
def _load_tile(row_ptr, cols, end, MASKED: tl.constexpr):
    """The float32 scores of columns ``cols`` (0.0 past ``end`` when MASKED).

    A tile one warp wide with the ballot (``_lane_rank``) is loaded one score per thread per row, never in vectors:
    the ballot needs each tile row across the warp's lanes in column order, and from a 16-byte aligned row (say a
    row stride divisible by 4) Triton would load 4-score vectors in a [4, 8]-thread layout, where the ballot ranks
    the wrong scores together. Hiding the row pointer's alignment keeps the load scalar; each tile row is still one
    coalesced 128-byte request (and the one-warp staging loop, sm_90, Triton 3.9, takes ~410 instructions per 512
    scores for aligned and unaligned rows alike, where the aligned one took 508 converting the vectors' layout)."""
    if BALLOT_ASM and cols.shape[1] == 32:
        row_ptr = _unaligned(row_ptr)
    if MASKED:
        x = tl.load(row_ptr + cols, mask=cols < end, other=0.0).to(tl.float32)
    else:
        x = tl.load(row_ptr + cols).to(tl.float32)
    return x


@triton.jit
def _load_tile_at(row_ptr, s, end, TILE: tl.constexpr, LANES: tl.constexpr, MASKED: tl.constexpr):
    """``_load_tile`` of the tile at column ``s`` (``s + _tile_offsets(TILE, LANES)``), addressed from one pointer
    per lane: a thread's TILE / LANES scores then lie at constant distances from it, which the loads take as
    immediate offsets (sm_90 SASS: no 64-bit address add per score)."""
    lane_ptr = (row_ptr + s + tl.arange(0, LANES))[None, :]
    rows = (tl.arange(0, TILE // LANES) * LANES)[:, None]
    if MASKED:
        x = tl.load(lane_ptr + rows, mask=(s + tl.arange(0, LANES))[None, :] + rows < end, other=0.0)
    else:
        x = tl.load(lane_ptr + rows)
    return x.to(tl.float32)


@triton.jit
def _stage_flags(x, cols, end, f, MASKED: tl.constexpr):
    """Pass flags (int32 0 / 1) of the scores ``x`` of one tile of columns ``cols`` (a [ROWS, LANES] block, lanes
    along axis 1, loaded by ``_load_tile``) against ``not (x < f)``, and their per-lane sums. The flag goes through a
    float select because a boolean tensor kept for the stores is packed into bit masks by the backend."""
    if MASKED:
        flag = tl.where((cols < end) & ~(x < f), 1.0, 0.0).to(tl.int32)
    else:
        flag = tl.where(x < f, 0.0, 1.0).to(tl.int32)
    return flag, tl.sum(flag, 0)


@triton.jit
def _lane_rank(flag):
    """Ranks of the 0 / 1 ``flag`` of a [ROWS, 32] tile loaded by ``_load_tile`` (each row across one warp's lanes,
    lane = column): for each element, how many set flags precede it in its row, and the row's count of set flags
    (int32 [ROWS, 32] both). On the GPU one ballot per row: each thread counts the set bits of the warp's vote below
    its own lane, three instructions in all where a scan across the lanes takes five shuffle steps. The interpreter
    gets the same numbers from a scan.

    The ballot is only right in a layout with one score per thread per row (sizePerThread [1, 1], threadsPerWarp [1,
    32]), which ``_load_tile`` keeps; ``test_gvr_staging.py`` checks the stage kernel's compiled layout on the GPU.
    Results stored with aligned vector stores can still pull the asm into a vector layout (a test kernel's did):
    the staging's stores scatter, so they never do."""
    if BALLOT_ASM:
        rank, tot = tl.inline_asm_elementwise(
            asm="{ .reg .pred p; .reg .b32 b, m; setp.ne.s32 p, $2, 0; vote.sync.ballot.b32 b, p, 0xffffffff; "
                "mov.u32 m, %lanemask_lt; and.b32 m, m, b; popc.b32 $0, m; popc.b32 $1, b; }",
            constraints="=r,=r,r", args=[flag], dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    else:
        rank = tl.cumsum(flag, 1) - flag
        tot = tl.broadcast_to(tl.sum(flag, 1)[:, None], flag.shape)
    return rank, tot


@triton.jit
def _stage_at(x, cols, flag, per_lane, base, slot_keys, slot_cols, CAP: tl.constexpr):
    """Write the flagged scores of a tile (``_stage_flags``) to the slot from position ``base`` on: raw float32 bits
    and columns, in column order for a one-warp tile with STAGE_BALLOT (``_lane_rank``), else lane by lane.
    Positions are clamped to the slot (CAP - 1) instead of masked: a count past CAP fails the attempt anyway, so what
    such writes leave in the slot is never read. Returns, flattened to [TILE], which scores got a position inside the
    slot.

    Why this shape (sm_90 SASS of the one-warp staging loop, ``benchmarks/NOTES.md`` entry 14): a 1-D tile scans
    TILE/LANES separate lane-wide prefix sums (one per register of a thread), ~1700 instructions per 1024 scores,
    which made the staging instruction-bound. Here each thread's registers run along axis 0, so the positions are a
    running sum within the thread plus ONE scan of the per-lane counts; or, one warp wide, a ballot per register and
    a running sum of the row counts, which also keeps each store's addresses together."""
    if STAGE_BALLOT and cols.shape[1] == 32:
        # One warp wide: the positions run along the lanes instead, so each store instruction of the warp writes
        # consecutive slot entries (a few sectors) instead of one sector per lane: rows of ties at 512 x 16387
        # K=2048, whose tiles admit every score, spent 106 us of H200 time in this kernel with the running sums,
        # 26 us with the ballot (NOTES entry 30).
        rank, tot = _lane_rank(flag)
        pos = base + tl.cumsum(tot, 0) - tot + rank
    else:
        pos = base + (tl.cumsum(per_lane, 0) - per_lane)[None, :] + tl.cumsum(flag, 0) - 1
    # Stored as 1-D vectors (the same element-to-thread map): a 2-D store lets Triton 3.6 re-layout it through
    # shared memory.
    TILE: tl.constexpr = cols.shape[0] * cols.shape[1]
    in_slot = tl.reshape((flag != 0) & (pos < CAP), [TILE])  # unused by most callers, and then not computed
    pos = tl.reshape(tl.minimum(pos, CAP - 1), [TILE])
    keep = tl.reshape(flag, [TILE]) != 0
    tl.store(slot_keys + pos, tl.reshape(x, [TILE]).to(tl.int32, bitcast=True), mask=keep)
    tl.store(slot_cols + pos, tl.reshape(cols, [TILE]), mask=keep)
    return in_slot


@triton.jit
def _stage_tile(x, cols, end, f, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr, MASKED: tl.constexpr):
    """Stage the scores ``x`` of one tile of columns ``cols`` (a [ROWS, LANES] block, lanes along axis 1, loaded by
    ``_load_tile``) that pass ``not (x < f)``: reserve space with one atomic on the row's counter (several programs
    may stage into one slot), then ``_stage_at``. Returns, flattened to [TILE], which scores got a position inside
    the slot."""
    flag, per_lane = _stage_flags(x, cols, end, f, MASKED)
    base = tl.atomic_add(count_ptr, tl.sum(per_lane, 0), sem="relaxed")
    return _stage_at(x, cols, flag, per_lane, base, slot_keys, slot_cols, CAP)


@triton.jit
def _popcount(m):
    """Set bits of each uint32 of ``m`` (the SWAR count: a dozen integer operations, no intrinsic, so the interpreter
    runs it too)."""
    m = m - ((m >> 1) & 0x55555555)
    m = (m & 0x33333333) + ((m >> 2) & 0x33333333)
    return (((m + (m >> 4)) & 0x0F0F0F0F) * 0x01010101) >> 24


@triton.jit
def _bit_index(low):
    """Index of the one set bit of each uint32 power of two ``low``: its float32 exponent (exact: a power of two
    converts without rounding)."""
    return (low.to(tl.float32).to(tl.int32, bitcast=True) >> 23) - 127


@triton.jit
def _sparse_bits(x, s, end, f, MASKED: tl.constexpr):
    """The survivors of the [ROWS, LANES] tile ``x`` of columns ``s + _tile_offsets(ROWS * LANES, LANES)`` (ROWS <=
    32) that pass ``not (x < f)``, as one bit mask per thread (bit r: the thread's score in tile row r) and its
    count. Returns ([LANES] uint32, [LANES] int32)."""
    ROWS: tl.constexpr = x.shape[0]
    LANES: tl.constexpr = x.shape[1]
    if MASKED:
        cols = s + _tile_offsets(ROWS * LANES, LANES)
        keep = (cols < end) & ~(x < f)
    else:
        keep = ~(x < f)
    # The bits are disjoint, so their sum is their union.
    m = tl.sum(tl.where(keep, (tl.full([ROWS], 1, tl.uint32) << tl.arange(0, ROWS).to(tl.uint32))[:, None], 0), 0)
    return m, _popcount(m).to(tl.int32)


@triton.jit
def _sparse_store(m, cnt, base, s, row_ptr, slot_keys, slot_cols, CAP: tl.constexpr):
    """Store the survivors ``m`` (``_sparse_bits`` of the tile at column ``s``) at slot positions from ``base`` on,
    thread by thread: the warp loops as many times as its fullest thread has survivors, each thread storing its next
    survivor per turn (the score is read again, from the line the tile's load brought into L1: a register cannot be
    picked by a runtime index)."""
    LANES: tl.constexpr = m.shape[0]
    lane = tl.arange(0, LANES)
    pos = base + tl.cumsum(cnt, 0) - cnt
    # A tile reserved past a full slot (a row of ties) takes no turns: its writes would go unread.
    for _ in range(tl.where(base < CAP, tl.max(cnt, 0), 0)):
        live = m != 0
        low = m & (0 - m)  # the lowest remaining survivor
        col = s + _bit_index(low) * LANES + lane
        v = tl.load(row_ptr + col, mask=live).to(tl.float32)
        p = tl.minimum(pos, CAP - 1)  # as in ``_stage_tile``: past CAP the attempt fails, the writes go unread
        tl.store(slot_keys + p, v.to(tl.int32, bitcast=True), mask=live)
        tl.store(slot_cols + p, col, mask=live)
        m = m ^ low
        pos += 1


@triton.jit
def _stage_tile_sparse(x, s, end, f, row_ptr, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr,
                       MASKED: tl.constexpr):
    """``_stage_tile`` that stores only the survivors: the same admitted scores, positions and reservation, at a
    cost that follows the survivors instead of the tile (``_sparse_bits``, one atomic, ``_sparse_store``). A decode
    tile admits ~2% of its scores, under one per thread, so the store turns are few, against two predicated stores
    per score in ``_stage_tile``."""
    m, cnt = _sparse_bits(x, s, end, f, MASKED)
    base = tl.atomic_add(count_ptr, tl.sum(cnt, 0), sem="relaxed")
    _sparse_store(m, cnt, base, s, row_ptr, slot_keys, slot_cols, CAP)


@triton.jit
def _reserve_late(count_ptr, cnt):
    """Reserve ``sum(cnt)`` slot positions on the row's counter without waiting for the answer. A reservation
    through one scalar atomic is lowered (Triton 3.6, sm_90) to the atomic and, right after it, a shuffle of its
    result to every thread, so the warp waits there for the atomic's round trip; ptxas does the same to an atomic on
    an address it can prove uniform. Here thread 0 alone adds, at a pointer that differs per thread (``count_ptr +
    lane``, every other lane masked off: never accessed), so nothing reads the result until ``_reserved`` does.
    Returns [LANES] int32, the old count in lane 0."""
    lane = tl.arange(0, cnt.shape[0])
    first = lane == 0
    return tl.atomic_add(count_ptr + lane, tl.where(first, tl.sum(cnt, 0), 0), mask=first, sem="relaxed")


@triton.jit
def _reserved(r):
    """The position ``_reserve_late`` reserved from (its lane 0), as a scalar: the first read of the atomic's
    result, where the warp waits for it."""
    return tl.sum(tl.where(tl.arange(0, r.shape[0]) == 0, r, 0), 0)


@triton.jit
def _stage_share(row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr, TILE: tl.constexpr,
                 LANES: tl.constexpr):
    """Stage every score of columns [start, end) that ``_key_floor(thr)`` admits (all with key >= thr, thr >= 1)
    into the row's slot, reserving positions with one atomic per tile on the row's counter ``count_ptr`` (several
    programs may stage into one slot). The counter ends up holding the exact count of admitted scores, even past
    CAP; only CAP are staged, in no particular order. Only the share's last tile can be partial (``_share_bounds``
    gives whole-tile shares). LANES: the program's threads (32 x warps), the width of a tile row."""
    _stage_tiles(row_ptr, start, start, end, _key_floor(thr), count_ptr, slot_keys, slot_cols, CAP, TILE, LANES)


@triton.jit
def _stage_share_after(x0, row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr,
                       TILE: tl.constexpr, LANES: tl.constexpr):
    """``_stage_share`` whose first tile's scores ``x0`` were loaded already (``_load_tile(row_ptr, start +
    _tile_offsets(TILE, LANES), end, True)``): a program that must wait for its threshold issues that load first,
    so the wait and the load overlap."""
    f = _key_floor(thr)
    _stage_tile(x0, start + _tile_offsets(TILE, LANES), end, f, count_ptr, slot_keys, slot_cols, CAP, True)
    _stage_tiles(row_ptr, start + TILE, start, end, f, count_ptr, slot_keys, slot_cols, CAP, TILE, LANES)


@triton.jit
def _stage_share_sparse(x0, row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr,
                        TILE: tl.constexpr, LANES: tl.constexpr, AHEAD: tl.constexpr):
    """``_stage_share_after`` through ``_stage_tile_sparse``. AHEAD 1: each whole tile's successor is requested
    before the tile is staged (whole tiles only, so no load needs a mask; the last one's look-ahead rereads it).
    AHEAD 2: that, and each tile's reservation read one tile later (``_reserve_late``): a tile's survivors are
    stored after the next tile's pass flags are taken and its reservation sent, so two round trips overlap the
    work instead of one stalling the warp per tile. AHEAD 0: neither."""
    f = _key_floor(thr)
    full = start + tl.maximum(end - start, 0) // TILE * TILE
    if AHEAD == 2:
        # (m, cnt, r, sp): the pass flags, counts, pending reservation and first column of the tile not yet stored.
        m, cnt = _sparse_bits(x0, start, end, f, True)
        r = _reserve_late(count_ptr, cnt)
        sp = start
        if full - start >= 2 * TILE:
            last = full - TILE
            x = _load_tile_at(row_ptr, start + TILE, end, TILE, LANES, False)
            for s in range(start + TILE, full, TILE):
                ahead = _load_tile_at(row_ptr, tl.minimum(s + TILE, last), end, TILE, LANES, False)
                m_next, cnt_next = _sparse_bits(x, s, end, f, False)
                r_next = _reserve_late(count_ptr, cnt_next)
                _sparse_store(m, cnt, _reserved(r), sp, row_ptr, slot_keys, slot_cols, CAP)
                m, cnt, r, sp = m_next, cnt_next, r_next, s
                x = ahead
        if (full < end) & (full >= start + TILE):  # the partial last tile, unless it was the first
            m_next, cnt_next = _sparse_bits(_load_tile_at(row_ptr, full, end, TILE, LANES, True), full, end, f, True)
            r_next = _reserve_late(count_ptr, cnt_next)
            _sparse_store(m, cnt, _reserved(r), sp, row_ptr, slot_keys, slot_cols, CAP)
            m, cnt, r, sp = m_next, cnt_next, r_next, full
        _sparse_store(m, cnt, _reserved(r), sp, row_ptr, slot_keys, slot_cols, CAP)
    else:
        _stage_tile_sparse(x0, start, end, f, row_ptr, count_ptr, slot_keys, slot_cols, CAP, True)
        if AHEAD == 1:
            if full - start >= 2 * TILE:
                last = full - TILE
                x = _load_tile_at(row_ptr, start + TILE, end, TILE, LANES, False)
                for s in range(start + TILE, full, TILE):
                    ahead = _load_tile_at(row_ptr, tl.minimum(s + TILE, last), end, TILE, LANES, False)
                    _stage_tile_sparse(x, s, end, f, row_ptr, count_ptr, slot_keys, slot_cols, CAP, False)
                    x = ahead
        else:
            for s in range(start + TILE, full, TILE):
                _stage_tile_sparse(_load_tile_at(row_ptr, s, end, TILE, LANES, False), s, end, f, row_ptr,
                                   count_ptr, slot_keys, slot_cols, CAP, False)
        if (full < end) & (full >= start + TILE):  # the partial last tile, unless it was the first
            _stage_tile_sparse(_load_tile_at(row_ptr, full, end, TILE, LANES, True), full, end, f, row_ptr,
                               count_ptr, slot_keys, slot_cols, CAP, True)


@triton.jit
def _stage_tiles(row_ptr, s0, start, end, f, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr, TILE: tl.constexpr,
                 LANES: tl.constexpr):
    """The staging loop of a share [start, end) from column ``s0`` (``start`` plus whole tiles): the whole tiles,
    then the partial last one if it starts at or after ``s0``. ``s0`` keeps ``start``'s divisibility (no clamp to
    ``end``), which keeps the loop's address arithmetic as lean as a loop from ``start`` (sm_90 SASS).

    Not software-pipelined: Triton 3.6's pipelining of this loop (``tl.range(..., num_stages=3)``: asynchronous
    copies into shared memory, two tiles ahead) measured 1.2-3.0x slower on the H200 (NOTES entry 20)."""
    offs = _tile_offsets(TILE, LANES)
    # An empty share (start >= end: a row shorter than the split assumes) stages nothing; the max keeps that from
    # depending on how // rounds a negative span.
    full = start + tl.maximum(end - start, 0) // TILE * TILE
    for s in range(s0, full, TILE):
        _stage_tile(_load_tile(row_ptr, s + offs, end, False), s + offs, end, f, count_ptr, slot_keys, slot_cols,
                    CAP, False)
    if (full < end) & (full >= s0):
        _stage_tile(_load_tile(row_ptr, full + offs, end, True), full + offs, end, f, count_ptr, slot_keys,
                    slot_cols, CAP, True)


@triton.jit
def _admitted_span(x, keep, lo, hi):
    """Running elementwise (min, max) order keys of the scores ``x`` where ``keep``."""
    keys = _order_key(x)
    return tl.minimum(lo, tl.where(keep, keys, 0xFFFFFFFF)), tl.maximum(hi, tl.where(keep, keys, 0))


@triton.jit
def _stage_share_prefetched(x0, row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr,
                            TILE: tl.constexpr, LANES: tl.constexpr, SPAN: tl.constexpr, hist_ptr, win_lo, shift,
                            HIST: tl.constexpr, NBINS: tl.constexpr):
    """``_stage_share`` for a program that streams its share alone (the split family), with one tile in flight ahead
    of the one it stages: the first tile's scores ``x0`` come loaded (``_load_tile(row_ptr, start +
    _tile_offsets(TILE, LANES), end, True)``, requested before the program computes its threshold), and each tile's
    successor is requested before the tile is staged, so its load's latency overlaps that staging. With SPAN it also
    returns the smallest and largest order key it admitted ((KEY_MAX, 0) for none; the cooperative kernel's row
    window), kept per thread and reduced once after the loop; without SPAN the returned pair is unused. With HIST it
    also counts every score it stages inside the slot into the row's NBINS-bin histogram at ``hist_ptr``
    (``_window_digit`` over the window from ``win_lo``, bins of 2**shift keys), one relaxed atomic per such score: a
    tile admits a few percent of its scores, and ``tl.histogram`` of a masked 2-D tile miscounts on Triton 3.6
    (``_sample_bracket``). Admitted scores past the capacity are not counted: the attempt fails and its histogram is
    never read, and on a row of ties (all equal, -inf tails) every admitted score would hit the same bin, one
    address, serialising ~131K atomics per row (NOTES entry 25: 8 x 131075 all equal 93 -> 202 us). Nor is bin 0
    (``_crossing_bin_counted`` derives it from the row's count): the bin of the window's lowest keys and of every
    admitted key below the window, where the staged scores of a row of ties (its threshold is the tied key) and most
    of a row admitted whole (n <= CAP) fall, each another run of same-address atomics.

    Why (NOTES entry 19): a split program is one per SM, so nothing else on the SM hides its loads; without the
    look-ahead each tile cost a full memory round trip, then its staging (8 x 131075 K=2048: 32.7 -> 26.6 us).
    Every tile goes through the masked path (a look-ahead past ``end`` is masked out and reads nothing); the
    compares this adds are cheap beside the round trip. Two tiles ahead measured level with one (8 x 131075 K=2048
    28.1 / 28.5 us) and holds another tile's registers."""
    offs = _tile_offsets(TILE, LANES)
    f = _key_floor(thr)
    lo = tl.full([TILE // LANES, LANES], 0xFFFFFFFF, tl.uint32)
    hi = tl.zeros([TILE // LANES, LANES], tl.uint32)
    x = x0
    for s in range(start, end, TILE):
        ahead = _load_tile(row_ptr, s + TILE + offs, end, True)
        in_slot = _stage_tile(x, s + offs, end, f, count_ptr, slot_keys, slot_cols, CAP, True)
        if SPAN:
            lo, hi = _admitted_span(x, ((s + offs) < end) & ~(x < f), lo, hi)
        if HIST:
            digit = _window_digit(tl.reshape(_order_key(x), [TILE]), win_lo, shift, NBINS)
            tl.atomic_add(hist_ptr + digit, tl.full([TILE], 1, tl.int32), mask=in_slot & (digit > 0), sem="relaxed")
        x = ahead
    if SPAN:
        if PLAIN_REDUCE:
            lo = tl.min(tl.reshape(lo, [TILE]), 0)
            hi = tl.max(tl.reshape(hi, [TILE]), 0)
        else:
            lo, hi = tl.reduce((tl.reshape(lo, [TILE]), tl.reshape(hi, [TILE])), 0, _minmax_combine)
    return lo, hi


@triton.jit
def _restage(row_ptr, n, thr, slot_keys, slot_cols, CAP: tl.constexpr, TILE: tl.constexpr, LANES: tl.constexpr):
    """One program stages the whole row against ``thr`` into the row's slot (the retry ladder's rungs); returns the
    exact count of admitted scores, even past CAP (only CAP are staged).

    The program owns the slot, so positions come from a running count in registers, not from the row's counter: a
    counter atomic per tile put an L2 round trip into every step of the loop, after the tile's load. Each tile's
    successor is requested before the tile is staged, and a tile that admits nothing, or comes after the slot is
    full, stores nothing. (With the atomic and no look-ahead, rows of ties at 64 x 131075 K=2048, whose tie rung
    restages the row once, took 172 us on the H200, 1.15x torch.topk's time; 108 us without: ``benchmarks/NOTES.md``
    entry 29.)"""
    offs = _tile_offsets(TILE, LANES)
    f = _key_floor(thr)
    count = 0 * n
    x = _load_tile(row_ptr, offs, n, True)
    for s in range(0, n, TILE):
        ahead = _load_tile(row_ptr, s + TILE + offs, n, True)  # past n: masked, nothing read
        flag, per_lane = _stage_flags(x, s + offs, n, f, True)
        total = tl.sum(per_lane, 0)
        if (total > 0) & (count < CAP):
            _stage_at(x, s + offs, flag, per_lane, count, slot_keys, slot_cols, CAP)
        count += total
        x = ahead
    tl.debug_barrier()  # staged by all threads, read by all threads
    return count


@triton.jit
def _restage_share_ties(row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP: tl.constexpr,
                        TILE: tl.constexpr, LANES: tl.constexpr):
    """One program's part of the cooperative tie rung (``kernels/split.py``) over its share [start, end): stage the
    scores with order key above ``thr`` (through ``_key_floor(thr + 1)``, an exact key set wherever the rung runs)
    into the row's slot through the counter ``count_ptr``, as ``_stage_share`` does, and return how many of the
    share's scores have order key ``thr`` itself (int32). The share was streamed once already, so its reads hit L2;
    no look-ahead."""
    offs = _tile_offsets(TILE, LANES)
    f = _key_floor(thr + 1)
    ties = tl.zeros([TILE // LANES, LANES], tl.int32)
    for s in range(start, end, TILE):
        cols = s + offs
        x = _load_tile(row_ptr, cols, end, True)
        _stage_tile(x, cols, end, f, count_ptr, slot_keys, slot_cols, CAP, True)
        ties += ((cols < end) & (_order_key(x) == thr)).to(tl.int32)
    return tl.sum(tl.sum(ties, 1), 0)


@triton.jit
def _emit_column_order(out_ptr, val_ptr, row_ptr, start, n, key, base, need, ABOVE: tl.constexpr,
                       TILE: tl.constexpr, HAS_VALUES: tl.constexpr):
    """Scan columns [start, n) of the row in column order, writing to consecutive slots from ``base`` the ``need``
    lowest columns whose order key equals ``key`` (the contract's tie rule) and, with ABOVE, every column whose key
    is larger: the emission pass of the whole-row path (ABOVE) and of the tie rung (without ABOVE the scan stops
    once the ties are found; the cooperative tie rung scans one program's share). Returns how many ties it wrote
    (fewer than ``need`` only when the columns hold fewer)."""
    offs = tl.arange(0, TILE)
    ties = 0 * n
    while (start < n) & ((ties < need) | ABOVE):
        cols = start + offs
        live = cols < n
        keys = _load_keys(row_ptr, cols, n)
        eq = live & (keys == key)
        sel = eq & (ties + tl.cumsum(eq.to(tl.int32), 0) <= need)
        if ABOVE:
            sel = sel | (live & (keys > key))
        base = _emit_selected(out_ptr, val_ptr, row_ptr, cols, sel, base, HAS_VALUES)
        ties += tl.sum(eq.to(tl.int32), 0)
        start += TILE
    return tl.minimum(ties, need)


@triton.jit
def _exact_key_set(t):
    """True when ``_key_floor(t)`` admits exactly the scores with order key >= t: t within [key(-inf), key(+inf))
    and not the key of +0.0 (whose float also admits -0.0)."""
    lo = tl.full([], 0x007FFFFF, tl.uint32)  # the key of -inf
    hi = tl.full([], 0xFF800000, tl.uint32)  # the key of +inf
    return (t >= lo) & (t < hi) & (t != tl.full([], 0x80000000, tl.uint32))


@triton.jit
def _retry_rank(rank, count, aim, SAMPLE: tl.constexpr):
    """Sample rank of the retry ladder's first rung, after a staging at sample rank ``rank`` admitted ``count`` < K
    scores: ``rank`` scaled by ``aim / count``, so the restaging aims at ``aim`` survivors again (a row's survivor
    count grows about in proportion to the rank), at least ``rank + 1``, at most SAMPLE. ``count >= 1`` whenever a
    threshold comes from the row's own sample; the max guards the division anyway.

    Was a fixed 4x rank: with K at a quarter of the capacity (K=2048, CAP 8192), a row that fell just under K
    admitted about 4 x K = CAP on the retry, past it with the sample's noise, and went on to the tie rung and the
    exact whole-row path, ~9 single-program passes over the row (64 x 131075 K=2048 with 1024-score samples: 950 us
    with the fixed rank, 122 us re-aimed; ``benchmarks/NOTES.md`` entry 21)."""
    r = (rank * aim + count - 1) // tl.maximum(count, 1)
    return tl.minimum(tl.maximum(r, rank + 1), SAMPLE)


def _outlined(fn):
    """The ``@triton.jit`` function ``fn`` compiled as a call (``noinline``) instead of inlined into its caller: one
    source, two forms, so that a kernel can keep a rare path's registers off its main path."""
    return triton.jit(noinline=True)(fn.fn)


@triton.jit
def _refine_row(out_ptr, val_ptr, row_ptr, hint_ptr, n, count, thr, aim, slot_keys, slot_cols, first_rung,
                K: tl.constexpr,
                KB: tl.constexpr, TILE: tl.constexpr, CAP: tl.constexpr, SAMPLE: tl.constexpr,
                SAMPLE_GROUP: tl.constexpr, SAMPLE_MAXIMA: tl.constexpr, MIN_TILE: tl.constexpr,
                HINT_FREE: tl.constexpr, HAS_VALUES: tl.constexpr, LANES: tl.constexpr, TIE_RUNG: tl.constexpr,
                SELECT_CHUNK: tl.constexpr):
    """Refine a row (n > K) whose survivors of one staging attempt against order key ``thr`` (``count`` of them)
    sit in its slot; one program.

    Accept path: K <= count <= CAP, exact selection on the staged candidates. Otherwise the retry ladder, each rung
    a single-program pass over the row (slow, never wrong): a lower sample rank that aims at ``aim`` survivors again
    when too few survived (``_retry_rank``), then the hint's smallest score (hinted mode), then (TIE_RUNG,
    ``tuning.TIE_RUNG``) the tie rung, then the exact whole-row path. A rung restages the row into its slot alone
    (``_restage``); the row's counter is not touched.

    The tie rung serves a staging that admitted more than CAP scores because a huge number of them tie at the
    threshold's key t (all-equal rows, a few distinct values, -inf padding): it restages against t + 1. If that
    holds K to CAP scores, they are selected as usual; if fewer than K, all of them win and the rest are the
    lowest-column scores whose key is t (the ties the first staging counted), found by a column-order scan that stops
    early. It runs only where both staging sets are exact key sets (``_exact_key_set``).

    ``first_rung``: False skips the first rung, which the row's programs already took together (the split family's
    cooperative form, ``tuning.SPLIT_COOP_LOW_RUNG``): its count and threshold come in as ``count`` and ``thr``, and
    a second try from the same sample would admit no more."""
    if first_rung & (count < K) & (n > CAP):
        rank = _sample_rank(n, aim, SAMPLE)
        if rank < SAMPLE:
            thr = _sample_threshold(row_ptr, n, _retry_rank(rank, count, aim, SAMPLE), SAMPLE, SAMPLE_GROUP,
                                    SAMPLE_MAXIMA)
            count = _restage(row_ptr, n, thr, slot_keys, slot_cols, CAP, TILE, LANES)
    if not HINT_FREE:
        if count < K:
            thr = _hint_threshold(hint_ptr, row_ptr, n, K, KB)
            count = _restage(row_ptr, n, thr, slot_keys, slot_cols, CAP, TILE, LANES)
    done = tl.zeros([], tl.int32)
    if TIE_RUNG:
        if (count > CAP) & (n > CAP):
            if _exact_key_set(thr) & _exact_key_set(thr + 1):
                above = _restage(row_ptr, n, thr + 1, slot_keys, slot_cols, CAP, TILE, LANES)
                if above < K:
                    keys, cols, live = _load_slot(slot_keys, slot_cols, above, CAP)
                    # All ``above`` staged scores win; the ties follow them from slot ``above``.
                    _emit_selected(out_ptr, val_ptr, row_ptr, cols, live, 0, HAS_VALUES)
                    ties = _emit_column_order(out_ptr, val_ptr, row_ptr, 0 * n, n, thr, above, K - above, False, TILE,
                                              HAS_VALUES)
                    # The last staging counted more than CAP scores at or above thr, so the ties are there; should
                    # they not be, the exact whole-row path below rewrites every slot.
                    done = (ties == K - above).to(tl.int32)
                else:
                    count = above
    if done == 0:
        if (count >= K) & (count <= CAP):
            _select_staged(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP, MIN_TILE, HAS_VALUES,
                           SELECT_CHUNK)
        else:
            _exact_row(out_ptr, val_ptr, row_ptr, n, K, TILE, HAS_VALUES)
