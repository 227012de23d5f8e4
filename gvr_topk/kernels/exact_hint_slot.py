"""Whole-row exact entry point with the plugin's three-input argument order (``@triton.jit`` code only).

A TensorRT plugin passes every input pointer to its ahead-of-time kernel, in the plugin's input order: scores,
kv_lens and the hint, then the scalars, then the outputs. ``_gvr_exact_io_kernel`` has no hint slot, so an engine
whose plugin layer has a hint input could not launch it; this entry takes (and never reads) the hint pointer so
the register and whole-row kernels share one argument list. The body is ``_gvr_exact_io_kernel``'s: exactness
comes from ``_exact_row``, whatever the hint holds.
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
