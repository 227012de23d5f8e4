"""Split family ``split``: SPLIT programs per row, for few long rows.

Regime: small batches (rows <= ``tuning.SPLIT_MAX_ROWS``, or ``SPLIT_MAX_ROWS_SHORT`` rows of at most
``SPLIT_SHORT_MAX_N`` columns) of long rows: one program streams a 512 KB row at only
~17 GB/s on the H200, so a single row needs tens of programs to approach the read floor.

GVR structure without inter-program communication before the hand-off:

1. Every program of a row samples the *same* positions, so all compute the same threshold.
2. Each streams its contiguous share of the row once and stages survivors into the row's workspace slot, reserving
   space with one atomic per tile on the row's counter.
3. After a barrier, each program adds 1 to the row's arrival counter (acq_rel); the program that arrives last is
   the finisher. It resets both counters to zero (the workspace restores itself, so CUDA-graph replays need no
   memset) and runs the exact selection on the staged candidates.
4. Exactly one parallel staging attempt; if it did not hold the answer, the finisher alone walks the retry ladder
   (``_refine_row``: a lower sample rank, the hint in hinted mode, the exact whole-row path). Slow, never wrong.
"""

import triton
import triton.language as tl

from ._common import _emit_short
from ._common import _refine_row
from ._common import _row_length
from ._common import _row_threshold
from ._common import _share_bounds
from ._common import _stage_share


@triton.jit
def _gvr_split_kernel(
    indices_ptr, values_ptr,  # outputs
    logits_ptr, pre_idx_ptr, kv_lens_ptr,  # inputs
    ws_count_ptr, ws_keys_ptr, ws_cols_ptr,  # workspace: int32 [rows, 2] (zero at rest), int32 [rows, CAP] x 2
    n_bound, row_stride, out_stride, val_stride, pre_stride,
    n_uniform, next_n, cr_shift, aim,
    K: tl.constexpr, KB: tl.constexpr, TILE: tl.constexpr, CAP: tl.constexpr, SAMPLE: tl.constexpr,
    SAMPLE_GROUP: tl.constexpr, MIN_TILE: tl.constexpr, SPLIT: tl.constexpr,
    HINT_FREE: tl.constexpr,
    VARLEN: tl.constexpr, HAS_VALUES: tl.constexpr, LANES: tl.constexpr, TIE_RUNG: tl.constexpr,
):
    part = tl.program_id(0)
    row = tl.program_id(1)
    n = _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN)
    row_ptr = logits_ptr + row.to(tl.int64) * row_stride
    out_ptr = indices_ptr + row.to(tl.int64) * out_stride
    val_ptr = values_ptr + row.to(tl.int64) * val_stride
    if n <= K:
        if part == 0:
            _emit_short(out_ptr, val_ptr, row_ptr, n, K, KB, HAS_VALUES)
    else:
        start, end = _share_bounds(n, part, SPLIT, TILE)  # this program's share of the row
        thr = _row_threshold(row_ptr, n, aim, CAP, SAMPLE, SAMPLE_GROUP)
        count_ptr = ws_count_ptr + row.to(tl.int64) * 2
        arrive_ptr = count_ptr + 1
        slot_keys = ws_keys_ptr + row.to(tl.int64) * CAP
        slot_cols = ws_cols_ptr + row.to(tl.int64) * CAP
        # ---- this program's share of the row ----
        _stage_share(row_ptr, start, end, thr, count_ptr, slot_keys, slot_cols, CAP, TILE, LANES)
        # ---- hand-off: the last program to arrive finishes the row ----
        tl.debug_barrier()
        arrived = tl.atomic_add(arrive_ptr, 1, sem="acq_rel")
        if arrived == SPLIT - 1:
            count = tl.atomic_xchg(count_ptr, 0, sem="acq_rel")
            tl.atomic_xchg(arrive_ptr, 0, sem="relaxed")
            _refine_row(out_ptr, val_ptr, row_ptr, pre_idx_ptr + (row // next_n).to(tl.int64) * pre_stride, n,
                        count, thr, aim, count_ptr, slot_keys, slot_cols, K, KB, TILE, CAP, SAMPLE, SAMPLE_GROUP,
                        MIN_TILE, HINT_FREE, HAS_VALUES, LANES, TIE_RUNG)
