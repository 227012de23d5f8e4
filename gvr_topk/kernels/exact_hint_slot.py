"""Whole-row exact entry point with the plugin's three-input argument order (``@triton.jit`` code only).

Regime: where no workspace can be given (ahead-of-time plugin engines) and rows exceed a register tile; one
program per row streams it (one min/max pass, one histogram pass per radix level, one emission pass), so it is
several times slower than the staging families. A TensorRT plugin passes every input pointer in its input order
(scores, kv_lens, hint), then the scalars, then the outputs: this entry takes the hint pointer and never reads it,
so it shares one argument list with the register kernel. Exactness comes from ``_exact_row``.
"""

import triton
import triton.language as tl

from ._common import _emit_short
from ._common import _exact_row
from ._common import _row_length


@triton.jit
def _gvr_exact_hint_slot_kernel(
    logits_ptr, kv_lens_ptr, pre_idx_ptr,  # inputs (the hint is accepted for the argument order, never read) ...
    n_bound, row_stride, next_n, cr_shift,  # ... then scalars ...
    indices_ptr,  # ... then outputs: dense int32 [rows, K]
    K: tl.constexpr, KB: tl.constexpr, TILE: tl.constexpr,
):
    """One program per row, any row length, no workspace."""
    row = tl.program_id(0)
    n = _row_length(row, kv_lens_ptr, 0, next_n, cr_shift, n_bound, True)
    row_ptr = logits_ptr + row.to(tl.int64) * row_stride
    out_ptr = indices_ptr + row.to(tl.int64) * K
    if n <= K:
        _emit_short(out_ptr, out_ptr, row_ptr, n, K, KB, False)
    else:
        _exact_row(out_ptr, out_ptr, row_ptr, n, K, TILE, False)
