"""Streaming family ``stream``: many long rows, three kernels (four launches) per launch chunk of rows.

Regime: batches larger than the split family's (the batch alone gives enough rows to fill the GPU), rows longer than
a register tile. A one-program-per-row loop streams a 512 KB row at only ~17 GB/s on the H200, and a fused kernel
that also selects carries the selection's registers through the streaming loop (low occupancy), so the work is
split into three kernels over a chunk of rows:

1. ``_gvr_threshold_kernel`` (one program per row), guess: the order key at rank ``aim * S / n`` of a deterministic
   S-score sample (1 = admit everything for rows that fit the staging slot). Computed once per row, not once per
   streaming program: computed in every one-warp staging program instead, the guess cost 1.0-3.2x the whole launch
   (``benchmarks/NOTES.md`` entry 16).
2. ``_gvr_stage_kernel`` (``split`` programs per row, register-light), verify: each program streams its share once and
   stages the scores at or above the threshold into the row's workspace slot; the row's counter ends up holding the
   exact survivor count. Short rows (n <= K) are written here. Rows on the long tile store only their survivors
   (``STAGE_SPARSE``, ``tuning.STREAM_STAGE_SPARSE``).
3. ``_gvr_select_kernel`` (one program per row), refine: resets the counter (the workspace restores itself, so
   CUDA-graph replays need no memset) and selects exactly on the staged candidates. A staging that missed walks the
   retry ladder (a lower sample rank, the hint in hinted mode, the exact whole-row path): slow, never wrong. By
   default (``tuning.STREAM_SELECT_APART``) this kernel is launched twice: an accept launch compiled for the path
   decode rows take (K to CAP/2 candidates), then a ladder launch for the rows it passed on.

The programs per row (``split``) are a runtime argument of the stage and select kernels, not a constexpr, and not
specialised either (``do_not_specialize``): they change with the batch (up to 64; 4 to 32 over batches of 33 to 512
rows of 131072 columns), and as a constexpr they compiled a variant of both kernels per batch size (a DeepSeek-V3.2
warm-up over 67 CUDA-graph batch sizes: 16 stage and 64 select variants, ``benchmarks/probe_variants.py``); they
set only each program's share and the select's wait target, once per program.

Memory traffic on the accept path: one sample per row, one full read of the row, the survivors written and read
back once.

With ``PDL`` (``tuning.STREAM_PDL``, Hopper and later) the stage and select kernels are launched as programmatic
dependents of the kernel before them: each program of the earlier kernel signals at its start that the next grid may
be scheduled, and every program of the later kernel waits (``_gdc_wait``: the earlier grid complete, its writes
visible) before it touches anything that grid writes or reads. So the launches keep stream order's meaning,
while the next grid's launch and ramp overlap the tail of the one before it.

With ``ROW_WAIT`` (``tuning.STREAM_ROW_WAIT``) the stage and accept-select programs wait for their own row instead of
the whole grid before: each row has a flag word (zero at rest) that its threshold program and each of its ``split``
staging programs count up when done (release), the staging programs wait for 1 and the row's select program for
1 + split (acquire), then resets it. A row's staging can then start while other rows' thresholds are still being
sampled, and its select while other rows still stage. It cannot deadlock: a dependent grid is only scheduled once
every program of the grid before has started, so every program waited for is resident or done. Without PDL the
grids run one after the other and every wait passes at once; the flags are kept all the same, so the protocol is
the same on every path. Every row, short or not, goes through it, so the accept launch's grid finishing implies
that the two grids before it finished.
"""

import triton
import triton.language as tl

from ._common import _emit_short
from ._common import _gdc_launch_dependents
from ._common import _gdc_wait
from ._common import _load_tile
from ._common import _refine_row
from ._common import _row_length
from ._common import _row_publish
from ._common import _row_threshold
from ._common import _row_wait
from ._common import _select_within_half
from ._common import _share_bounds
from ._common import _stage_share_after
from ._common import _stage_share_sparse
from ._common import _tile_offsets


@triton.jit
def _gvr_threshold_kernel(
    logits_ptr, kv_lens_ptr, ws_thr_ptr, ws_flag_ptr,  # scores; int32 [batch]; [rows_chunk] out: thresholds, flags
    row0, n_bound, row_stride, n_uniform, next_n, cr_shift, aim,
    CAP: tl.constexpr, SAMPLE: tl.constexpr, SAMPLE_GROUP: tl.constexpr, SAMPLE_MAXIMA: tl.constexpr,
    VARLEN: tl.constexpr,
    PDL: tl.constexpr, ROW_WAIT: tl.constexpr,
):
    """Guess, once per row: the staging threshold from a deterministic sample (1 = admit all for rows that fit the
    slot). Computed here once instead of in every staging program of the row. With ROW_WAIT the row's flag then
    says the threshold is there (``_row_publish``)."""
    if PDL:
        _gdc_launch_dependents()  # the staging grid may be scheduled now; it waits (for this grid, or with
        # ROW_WAIT for its row's flag) before reading a threshold
    local = tl.program_id(0)
    row = row0 + local
    n = _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN)
    thr = _row_threshold(logits_ptr + row.to(tl.int64) * row_stride, n, aim, CAP, SAMPLE, SAMPLE_GROUP, SAMPLE_MAXIMA)
    tl.store(ws_thr_ptr + local, thr.to(tl.int32, bitcast=True))
    if ROW_WAIT:
        _row_publish(ws_flag_ptr + local)  # the threshold is there


@triton.jit(do_not_specialize=["split"])
def _gvr_stage_kernel(
    indices_ptr, values_ptr,  # outputs (short rows are written here)
    logits_ptr, kv_lens_ptr,  # inputs
    ws_count_ptr, ws_thr_ptr, ws_keys_ptr, ws_cols_ptr,  # workspace: counters (zero at rest), thresholds, slots
    ws_flag_ptr,  # workspace: per-row flags (zero at rest; ROW_WAIT)
    row0, n_bound, row_stride, out_stride, val_stride,
    n_uniform, next_n, cr_shift, split,
    K: tl.constexpr, KB: tl.constexpr, TILE: tl.constexpr, CAP: tl.constexpr,
    VARLEN: tl.constexpr, HAS_VALUES: tl.constexpr, LANES: tl.constexpr,
    PDL: tl.constexpr, STAGE_SPARSE: tl.constexpr, ROW_WAIT: tl.constexpr,
):
    """Verify for rows ``row0 + program_id(1)``: every program of a row stages the survivors of its share against
    the row's threshold; the row's counter ends up holding the exact survivor count. Launched with one warp per
    program (``tuning.STREAM_WARPS``): the per-tile reduction and scan then synchronise nothing across warps."""
    if PDL:
        _gdc_launch_dependents()  # the select grid may be scheduled once every staging program has started
    part = tl.program_id(0)
    local = tl.program_id(1)
    row = row0 + local
    n = _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN)
    row_ptr = logits_ptr + row.to(tl.int64) * row_stride
    start, end = _share_bounds(n, part, split, TILE)
    # The share's first tile is requested before the threshold is: the scores and lengths are inputs that no kernel
    # of this launch writes, so with PDL the load overlaps the wait for the threshold (grid or row).
    x0 = _load_tile(row_ptr, start + _tile_offsets(TILE, LANES), end, True)
    if ROW_WAIT:
        _row_wait(ws_flag_ptr + local, 1)  # this row's threshold is there (not yet every row's)
    elif PDL:
        _gdc_wait()  # the threshold grid is complete and its thresholds visible
    if n <= K:
        if part == 0:
            _emit_short(indices_ptr + row.to(tl.int64) * out_stride, values_ptr + row.to(tl.int64) * val_stride,
                        row_ptr, n, K, KB, HAS_VALUES)
    else:
        thr = tl.load(ws_thr_ptr + local).to(tl.uint32, bitcast=True)
        slot_keys = ws_keys_ptr + local.to(tl.int64) * CAP
        slot_cols = ws_cols_ptr + local.to(tl.int64) * CAP
        if STAGE_SPARSE:
            _stage_share_sparse(x0, row_ptr, start, end, thr, ws_count_ptr + local, slot_keys, slot_cols, CAP, TILE,
                                LANES, STAGE_SPARSE - 1)
        else:
            _stage_share_after(x0, row_ptr, start, end, thr, ws_count_ptr + local, slot_keys, slot_cols, CAP, TILE,
                               LANES)
    if ROW_WAIT:
        _row_publish(ws_flag_ptr + local)  # this program's share is staged and counted


@triton.jit(do_not_specialize=["split"])
def _gvr_select_kernel(
    indices_ptr, values_ptr,  # outputs
    logits_ptr, pre_idx_ptr, kv_lens_ptr,  # inputs
    ws_count_ptr, ws_thr_ptr, ws_keys_ptr, ws_cols_ptr,  # the workspace the threshold and staging kernels filled
    ws_flag_ptr,  # per-row flags (ROW_WAIT), reset here
    row0, n_bound, row_stride, out_stride, val_stride, pre_stride,
    n_uniform, next_n, cr_shift, aim, split,
    K: tl.constexpr, KB: tl.constexpr, REFINE_TILE: tl.constexpr, CAP: tl.constexpr, SAMPLE: tl.constexpr,
    SAMPLE_GROUP: tl.constexpr, SAMPLE_MAXIMA: tl.constexpr, MIN_TILE: tl.constexpr, HINT_FREE: tl.constexpr,
    VARLEN: tl.constexpr,
    HAS_VALUES: tl.constexpr, REFINE_LANES: tl.constexpr, TIE_RUNG: tl.constexpr, PDL: tl.constexpr,
    SELECT_CHUNK: tl.constexpr, SELECT_PART: tl.constexpr, ROW_WAIT: tl.constexpr,
    ACCEPT_LARGE_BIN: tl.constexpr,
):
    """Refine for row ``row0 + program_id(0)``: reset the row's counter to zero (the workspace restores itself),
    then select on the staged candidates; a staging that missed (fewer than K, or more than CAP) walks the retry
    ladder in this program: a lower sample rank, the hint (hinted mode), the exact whole-row path, streaming
    REFINE_TILE scores per step (the staging kernel's one-warp tile would starve a whole-block program). SELECT_CHUNK
    > 0 (``tuning.SELECT_CHUNK``) selects in loops over chunks of the slot instead of on one tile.

    SELECT_PART (``tuning.STREAM_SELECT_APART``) splits this into two launches of this kernel: 0 does it all in one;
    2 and 3 are the accept launch, which selects the rows whose staging holds K to CAP/2 candidates (2: on the
    MIN_TILE- or CAP/2-lane tile, ``_select_within_half``; 3: on the CAP/2-lane tile alone) and marks every other
    row's counter with ``-1 - count``; 1 is the ladder launch after it, which refines the marked rows only (the
    CAP-lane tile, the retry ladder). The accept launch then compiles without the ladder and the CAP-lane tile: a
    program a quarter the size, without their register spills, for the path every decode row takes. Without
    ACCEPT_LARGE_BIN (``tuning.STREAM_ACCEPT_LARGE_BIN``) the accept launch also marks the rows whose crossing bin
    holds more than CROSS_CAP candidates (a few distinct values) instead of refining them on its tile."""
    local = tl.program_id(0)
    row = row0 + local
    if (SELECT_PART != 1) and ROW_WAIT:
        # This row's threshold program and its ``split`` staging programs are done (not yet every row's); the flag
        # is reset for the next launch. The ladder launch (SELECT_PART 1) waits for the accept launch's whole grid.
        _row_wait(ws_flag_ptr + local, 1 + split)
        tl.atomic_xchg(ws_flag_ptr + local, 0, sem="relaxed")
    elif PDL:
        _gdc_wait()  # the grid before is complete: counts and slots (or the accept launch's marks) are final
    n = _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN)
    if n > K:
        row_ptr = logits_ptr + row.to(tl.int64) * row_stride
        out_ptr = indices_ptr + row.to(tl.int64) * out_stride
        val_ptr = values_ptr + row.to(tl.int64) * val_stride
        slot_keys = ws_keys_ptr + local.to(tl.int64) * CAP
        slot_cols = ws_cols_ptr + local.to(tl.int64) * CAP
        count = tl.atomic_xchg(ws_count_ptr + local, 0, sem="relaxed")  # the kernel boundary orders the staging
        if SELECT_PART >= 2:
            done = tl.zeros([], tl.int32)
            if (count >= K) & (count <= CAP // 2) & (K <= CAP // 2):
                # 3: as if MIN_TILE were CAP/2 (``_select_within_half`` then compiles the CAP/2 tile alone).
                done = _select_within_half(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP,
                                           MIN_TILE if SELECT_PART == 2 else CAP // 2, HAS_VALUES, SELECT_CHUNK,
                                           ACCEPT_LARGE_BIN)
            if done == 0:
                tl.store(ws_count_ptr + local, -1 - count)  # for the ladder launch (a count is never negative)
        else:
            go = True
            if SELECT_PART == 1:  # only the rows the accept launch marked (the others' counters hold 0)
                go = count < 0
                count = -1 - count
            if go:
                thr = tl.zeros([], tl.uint32)
                if TIE_RUNG:  # only the tie rung reads the staging's threshold
                    thr = tl.load(ws_thr_ptr + local).to(tl.uint32, bitcast=True)
                _refine_row(out_ptr, val_ptr, row_ptr, pre_idx_ptr + (row // next_n).to(tl.int64) * pre_stride, n,
                            count, thr, aim, slot_keys, slot_cols, True, K, KB, REFINE_TILE, CAP,
                            SAMPLE, SAMPLE_GROUP, SAMPLE_MAXIMA, MIN_TILE, HINT_FREE, HAS_VALUES, REFINE_LANES,
                            TIE_RUNG, SELECT_CHUNK)
