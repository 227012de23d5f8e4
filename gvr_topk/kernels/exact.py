"""Whole-row exact family (no workspace, any row length): the fallback path as a kernel of its own.

Regime: where no workspace can be given (ahead-of-time plugin engines) and rows exceed a register tile. Memory
traffic: one min/max pass, one histogram pass per radix level (<= 4) and one emission pass per row, so it is several
times slower than the staging families; it exists for completeness, not speed.
"""

import triton
import triton.language as tl

from ._common import _emit_short
from ._common import _exact_row
from ._common import _row_length


@triton.jit
def _gvr_exact_io_kernel(
    logits_ptr, kv_lens_ptr,  # inputs first ...
    n_bound, row_stride, next_n, cr_shift,  # ... then scalars ...
    indices_ptr,  # ... then outputs (ahead-of-time plugin argument order)
    K: tl.constexpr, KB: tl.constexpr, TILE: tl.constexpr,
):
    """One program per row: dense int32 ``indices`` [rows, K], varlen rows from ``kv_lens``."""
    row = tl.program_id(0)
    n = _row_length(row, kv_lens_ptr, 0, next_n, cr_shift, n_bound, True)
    row_ptr = logits_ptr + row.to(tl.int64) * row_stride
    out_ptr = indices_ptr + row.to(tl.int64) * K
    if n <= K:
        _emit_short(out_ptr, out_ptr, row_ptr, n, K, KB, False)
    else:
        _exact_row(out_ptr, out_ptr, row_ptr, n, K, TILE, False)
