"""Read-floor kernel for the benchmark: the maximum of every row, reading each score exactly once.

It does the least work any exact top-k must do (touch every valid score once), so its time at a shape is the floor
the selection kernels are measured against. It mirrors their memory behaviour on purpose: the same row-length rule
(uniform or varlen), the same contiguous split of a row over ``SPLIT`` programs, and the same self-resetting
hand-off (the last program of a row to arrive publishes the result and zeroes the merge slots), so a CUDA-graph
replay needs no memset kernel that the selection kernels do not pay either.

The merge is a ``tl.atomic_max`` on uint32 order keys (the ``_order_key`` of ``_common``): key 0 means "no score
yet", so an all-zero buffer is the identity, and NaN / -0.0 order exactly as the selection kernels rank them.
"""

import triton
import triton.language as tl

from ._common import _order_key
from ._common import _row_length


@triton.jit
def _rowmax_kernel(
    out_ptr,  # float32 [rows]: the row maximum (-inf for empty rows)
    x_ptr,  # scores [rows, npad], inner stride 1
    kv_lens_ptr,  # int32 [rows // next_n] (VARLEN) or unused
    merge_ptr,  # int32 [rows, 2]: merged order key, arrival count; zero at rest
    n_bound, row_stride, n_uniform, next_n, cr_shift, chunk, split,
    BLOCK: tl.constexpr, VARLEN: tl.constexpr,
):
    part = tl.program_id(0)
    row = tl.program_id(1)
    n = _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN)
    row_ptr = x_ptr + row.to(tl.int64) * row_stride
    start = part * chunk
    end = tl.minimum(start + chunk, n)
    offs = tl.arange(0, BLOCK)
    # A vector of running maxima, reduced once at the end: one compare per score, nothing else per element.
    best = tl.zeros([BLOCK], dtype=tl.uint32)
    for s in range(start, end, BLOCK):
        cols = s + offs
        live = cols < end
        x = tl.load(row_ptr + cols, mask=live, other=0.0).to(tl.float32)
        # Masked lanes must stay at key 0, below every real score (-inf included).
        best = tl.maximum(best, tl.where(live, _order_key(x), 0))
    part_max = tl.max(best, 0)
    slot = merge_ptr + row.to(tl.int64) * 2
    key_ptr = slot.to(tl.pointer_type(tl.uint32))
    tl.atomic_max(key_ptr, part_max, sem="relaxed")
    # acq_rel on the arrival count orders this program's merge before it, and lets the last arrival see them all.
    arrived = tl.atomic_add(slot + 1, 1, sem="acq_rel")
    if arrived == split - 1:
        key = tl.atomic_xchg(key_ptr, 0, sem="acq_rel")
        tl.atomic_xchg(slot + 1, 0, sem="relaxed")
        # Invert _order_key: keys with the top bit set came from non-negative floats. (An xor, not ~key: Triton
        # 3.6's interpreter builds ~'s all-ones operand from -1, which NumPy 2 refuses for uint32.)
        bits = tl.where(key >= 0x80000000, key ^ 0x80000000, key ^ 0xFFFFFFFF)
        val = tl.where(key == 0, float("-inf"), bits.to(tl.float32, bitcast=True))
        tl.store(out_ptr + row, val)
