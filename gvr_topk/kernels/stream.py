"""Streaming family ``stream``: one program per row (grid-stride over rows), rows of any length.

Regime: many rows (the batch alone fills the GPU), rows longer than a register tile. Memory traffic on the accept
path: one sample (SAMPLE/8 sectors) plus one full read of the row; candidates are staged in the caller's
workspace (one CAP-slot per program) and read back once.

GVR structure:

1. Guess: the order key at rank ``aim * SAMPLE / n`` of a deterministic sample of the row (hint-free and hinted
   alike: the sample, not the hint, places the threshold on the accept path).
2. Verify: one streaming pass stages every score >= the threshold and counts them exactly.
3. Refine: K <= count <= CAP means the top-K lies among the staged scores: exact radix selection there.
4. Retry ladder (costs time, never exactness): a lower sample rank (4x the aim); in hinted mode then the hint's
   smallest score; finally the exact whole-row path.
Rows with n <= CAP skip the sample and stage everything.
"""

import triton
import triton.language as tl

from ._common import _emit_short
from ._common import _exact_row
from ._common import _hint_threshold
from ._common import _row_length
from ._common import _sample_rank
from ._common import _sample_threshold
from ._common import _select_staged
from ._common import _stage_range
from ._common import _stage_share
from ._common import WARP_COLS


@triton.jit
def _gvr_stream_kernel(
    indices_ptr, values_ptr,  # outputs
    logits_ptr, pre_idx_ptr, kv_lens_ptr,  # inputs
    ws_keys_ptr, ws_cols_ptr,  # workspace: int32 [programs, CAP] each
    num_rows, n_bound, row_stride, out_stride, val_stride, pre_stride,
    n_uniform, next_n, cr_shift, aim,
    K: tl.constexpr, KB: tl.constexpr, TILE: tl.constexpr, CAP: tl.constexpr, SAMPLE: tl.constexpr,
    HINT_FREE: tl.constexpr, VARLEN: tl.constexpr, HAS_VALUES: tl.constexpr,
):
    pid = tl.program_id(0)
    slot_keys = ws_keys_ptr + pid.to(tl.int64) * CAP
    slot_cols = ws_cols_ptr + pid.to(tl.int64) * CAP
    nprog = tl.num_programs(0)
    for it in range(0, (num_rows - pid + nprog - 1) // nprog):
        row = pid + it * nprog
        n = _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN)
        row_ptr = logits_ptr + row.to(tl.int64) * row_stride
        out_ptr = indices_ptr + row.to(tl.int64) * out_stride
        val_ptr = values_ptr + row.to(tl.int64) * val_stride
        if n <= K:
            _emit_short(out_ptr, val_ptr, row_ptr, n, K, KB, HAS_VALUES)
        else:
            # ---- guess + verify: sample threshold, one staging pass ----
            if n <= CAP:
                thr = tl.full([], 1, tl.uint32)  # admit every score: the whole row fits the staging slot
                rank = SAMPLE
            else:
                rank = _sample_rank(n, aim, SAMPLE)
                thr = _sample_threshold(row_ptr, n, rank, SAMPLE)
            count = _stage_range(row_ptr, 0, n, thr, slot_keys, slot_cols, CAP, TILE)
            # ---- retry ladder: floor rung, then the hint (hinted mode) ----
            if (count < K) & (rank < SAMPLE):
                thr = _sample_threshold(row_ptr, n, tl.minimum(rank * 4, SAMPLE), SAMPLE)
                count = _stage_range(row_ptr, 0, n, thr, slot_keys, slot_cols, CAP, TILE)
            if not HINT_FREE:
                if count < K:
                    hthr = _hint_threshold(pre_idx_ptr + (row // next_n).to(tl.int64) * pre_stride, row_ptr, n,
                                           K, KB)
                    if hthr < thr:
                        count = _stage_range(row_ptr, 0, n, hthr, slot_keys, slot_cols, CAP, TILE)
            # ---- refine ----
            tl.debug_barrier()  # staged by all threads, read by all threads
            if (count >= K) & (count <= CAP):
                _select_staged(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP, HAS_VALUES)
            else:
                _exact_row(out_ptr, val_ptr, row_ptr, n, K, TILE, HAS_VALUES)
            tl.debug_barrier()  # the slot is restaged for the next row only after every thread read it


# ------------------------------------------------------------------------------------------------------------------
# Two-kernel form for many long rows: a register-light staging kernel with SPLIT programs per row, then one
# selection program per row. Splitting the work this way keeps the streaming pass at high occupancy (the staged
# tile's registers are needed only by the selection kernel) and gives every row several streaming programs.
# ------------------------------------------------------------------------------------------------------------------


@triton.jit
def _gvr_stage_kernel(
    indices_ptr, values_ptr,  # outputs (short rows are written here)
    logits_ptr, kv_lens_ptr,  # inputs
    ws_count_ptr, ws_keys_ptr, ws_cols_ptr,  # workspace: int32 [rows_chunk] (zero at rest), int32 [rows_chunk, CAP] x 2
    row0, n_bound, row_stride, out_stride, val_stride,
    n_uniform, next_n, cr_shift, aim,
    K: tl.constexpr, KB: tl.constexpr, TILE: tl.constexpr, CAP: tl.constexpr, SAMPLE: tl.constexpr,
    SPLIT: tl.constexpr, VARLEN: tl.constexpr, HAS_VALUES: tl.constexpr,
):
    """Guess + verify for rows ``row0 + program_id(1)``: every program of a row computes the same sample threshold
    and stages the survivors of its share; the row's counter ends up holding the exact survivor count."""
    part = tl.program_id(0)
    local = tl.program_id(1)
    row = row0 + local
    n = _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN)
    row_ptr = logits_ptr + row.to(tl.int64) * row_stride
    if n <= K:
        if part == 0:
            _emit_short(indices_ptr + row.to(tl.int64) * out_stride, values_ptr + row.to(tl.int64) * val_stride,
                        row_ptr, n, K, KB, HAS_VALUES)
    else:
        if n <= CAP:
            thr = tl.full([], 1, tl.uint32)  # admit every score: the whole row fits the staging slot
        else:
            thr = _sample_threshold(row_ptr, n, _sample_rank(n, aim, SAMPLE), SAMPLE)
        tiles = (n + TILE - 1) // TILE
        share = (tiles + SPLIT - 1) // SPLIT * TILE
        start = part * share
        end = tl.minimum(start + share, n)
        _stage_share(row_ptr, start, end, thr, ws_count_ptr + local, ws_keys_ptr + local.to(tl.int64) * CAP,
                     ws_cols_ptr + local.to(tl.int64) * CAP, CAP, TILE // WARP_COLS, WARP_COLS)


@triton.jit
def _gvr_select_kernel(
    indices_ptr, values_ptr,  # outputs
    logits_ptr, pre_idx_ptr, kv_lens_ptr,  # inputs
    ws_count_ptr, ws_keys_ptr, ws_cols_ptr,  # the workspace the staging kernel filled
    row0, n_bound, row_stride, out_stride, val_stride, pre_stride,
    n_uniform, next_n, cr_shift, aim,
    K: tl.constexpr, KB: tl.constexpr, TILE: tl.constexpr, CAP: tl.constexpr, SAMPLE: tl.constexpr,
    HINT_FREE: tl.constexpr, VARLEN: tl.constexpr, HAS_VALUES: tl.constexpr,
):
    """Refine for row ``row0 + program_id(0)``: reset the row's counter to zero (the workspace restores itself),
    then select on the staged candidates; a staging that missed (fewer than K, or more than CAP) walks the retry
    ladder in this program: a 4x lower sample rank, the hint (hinted mode), the exact whole-row path."""
    local = tl.program_id(0)
    row = row0 + local
    n = _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN)
    if n > K:
        row_ptr = logits_ptr + row.to(tl.int64) * row_stride
        out_ptr = indices_ptr + row.to(tl.int64) * out_stride
        val_ptr = values_ptr + row.to(tl.int64) * val_stride
        slot_keys = ws_keys_ptr + local.to(tl.int64) * CAP
        slot_cols = ws_cols_ptr + local.to(tl.int64) * CAP
        count = tl.atomic_xchg(ws_count_ptr + local, 0, sem="relaxed")  # the kernel boundary orders the staging
        if (count < K) & (n > CAP):
            rank = _sample_rank(n, aim, SAMPLE)
            if rank < SAMPLE:
                thr = _sample_threshold(row_ptr, n, tl.minimum(rank * 4, SAMPLE), SAMPLE)
                count = _stage_range(row_ptr, 0, n, thr, slot_keys, slot_cols, CAP, TILE)
                tl.debug_barrier()
        if not HINT_FREE:
            if count < K:
                hthr = _hint_threshold(pre_idx_ptr + (row // next_n).to(tl.int64) * pre_stride, row_ptr, n, K, KB)
                count = _stage_range(row_ptr, 0, n, hthr, slot_keys, slot_cols, CAP, TILE)
                tl.debug_barrier()
        if (count >= K) & (count <= CAP):
            _select_staged(out_ptr, val_ptr, row_ptr, slot_keys, slot_cols, count, K, CAP, HAS_VALUES)
        else:
            _exact_row(out_ptr, val_ptr, row_ptr, n, K, TILE, HAS_VALUES)
