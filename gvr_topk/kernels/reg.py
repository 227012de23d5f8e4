"""Register-resident family ``reg``: one program per row, the whole row held in registers.

Regime: rows up to ``tuning.REG_MAX_N`` columns, any batch (``route`` sends it rows of at most
``tuning.REG_ROUTE_MAX_N``). Memory traffic: the row is read once; the hint (HINT_FREE off) adds K index loads and
K scattered score loads. The launcher compiles HINT_FREE for hinted calls too unless ``tuning.REG_USE_HINT`` is set:
the hint-free bracket below made the hint's loads a net cost (NOTES entry 33).

GVR structure: bracket -> count -> exact refine, all on the register tile.

* Bracket (guess): a lower threshold T that at least K scores reach. Hint-free: the smallest of K scores at
  distinct positions (at most K-1 scores exceed the K-th largest, so one of any K distinct positions is <= it,
  hence count(x >= T) >= K), from the register tile with no extra load. Where the tile holds at least 2 KB lanes
  (KB = K rounded up to a power of two): the largest key of each of KB disjoint groups of lanes, whose smallest sits
  near the row's (1/KB)**(KB/BLOCK) quantile (about half the row above it at K=512 of 4096 lanes); else positions
  0..K-1, the row's minimum in effect. Hinted: the smallest score at the valid hint positions, which usually sits
  much closer to the K-th score.
* Verify: count(x >= T) >= K is checked; a hint that fails it (duplicates, -1 entries, out-of-range entries, or no
  valid entry at all) falls back to the hint-free bracket for that row, so a bad hint costs one reduction.
* Refine: exact radix selection restricted to the candidates x >= T (``_select_tiles``).

The register tile is BLOCK lanes (a power of two) plus, when TAIL > 0, a tail tile of TAIL lanes for columns BLOCK ..
BLOCK + TAIL - 1: a row a few columns past a power of two (4111 = 4096 + 15) then holds 4096 + 16 lanes instead of
8192, and every radix level and the emission scan touch half as many dead lanes.
"""

import triton
import triton.language as tl

from ._common import _emit_selected
from ._common import _emit_short
from ._common import _load_keys
from ._common import _order_key
from ._common import _row_length
from ._common import _select_tiles


@triton.jit
def _reg_row(
    row, indices_ptr, values_ptr, logits_ptr, pre_idx_ptr, kv_lens_ptr,
    n_bound, row_stride, out_stride, val_stride, pre_stride, n_uniform, next_n, cr_shift,
    K: tl.constexpr, KB: tl.constexpr, BLOCK: tl.constexpr, TAIL: tl.constexpr,
    HINT_FREE: tl.constexpr, VARLEN: tl.constexpr, HAS_VALUES: tl.constexpr,
):
    """Select one row; rows longer than BLOCK + TAIL are never given to it (n_bound <= BLOCK + TAIL)."""
    n = _row_length(row, kv_lens_ptr, n_uniform, next_n, cr_shift, n_bound, VARLEN)
    row_ptr = logits_ptr + row.to(tl.int64) * row_stride
    out_ptr = indices_ptr + row.to(tl.int64) * out_stride
    val_ptr = values_ptr + row.to(tl.int64) * val_stride
    if n <= K:
        _emit_short(out_ptr, val_ptr, row_ptr, n, K, KB, HAS_VALUES)
    else:
        # ---- load the row once; lanes >= n hold key 0, below every score ----
        cols = tl.arange(0, BLOCK)
        keys = _load_keys(row_ptr, cols, n)
        t_cols = cols  # the tail tile's lanes (unused without one)
        t_keys = keys
        if TAIL > 0:
            t_cols = BLOCK + tl.arange(0, TAIL)
            t_keys = _load_keys(row_ptr, t_cols, n)
        # ---- guess: hint-free bracket, a key that K scores at distinct positions reach ----
        if BLOCK >= 2 * KB:
            # The smallest of KB group maxima, group j = lanes {j, j + KB, j + 2 KB, ...}. The groups are disjoint, so
            # this is <= the KB-th largest key <= the K-th. A group whose lanes all lie past n has key 0 (below every
            # score): the bound is then trivial, still true. With G = BLOCK / KB lanes per group it sits near the
            # row's (1/KB)**(1/G) quantile (one group maximum expected below it) instead of the row's minimum.
            lo = tl.min(tl.max(tl.reshape(keys, [BLOCK // KB, KB]), 0), 0)
        else:
            lo = tl.min(tl.where(cols < K, keys, 0xFFFFFFFF), 0)  # positions 0..K-1 themselves
            if TAIL > 0:
                if K > BLOCK:  # K > BLOCK: some of positions 0..K-1 sit in the tail tile
                    lo = tl.minimum(lo, tl.min(tl.where(t_cols < K, t_keys, 0xFFFFFFFF), 0))
        if not HINT_FREE:
            slot = tl.arange(0, KB)
            hint = tl.load(pre_idx_ptr + (row // next_n).to(tl.int64) * pre_stride + slot, mask=slot < K, other=-1)
            ok = (hint >= 0) & (hint < n)
            hx = tl.load(row_ptr + hint, mask=ok, other=0.0).to(tl.float32)
            hint_lo = tl.min(tl.where(ok, _order_key(hx), 0xFFFFFFFF), 0)
            # ---- verify: keep the hint's bracket only if it provably admits K scores ----
            admitted = tl.sum((keys >= hint_lo).to(tl.int32), 0)
            if TAIL > 0:
                admitted += tl.sum((t_keys >= hint_lo).to(tl.int32), 0)
            if admitted >= K:
                lo = tl.maximum(lo, hint_lo)
        # ---- refine: exact selection among the candidates ----
        sel, t_sel = _select_tiles(keys, cols, keys >= lo, t_keys, t_cols, t_keys >= lo, K, TAIL)
        base = _emit_selected(out_ptr, val_ptr, row_ptr, cols, sel, 0, HAS_VALUES)
        if TAIL > 0:
            _emit_selected(out_ptr, val_ptr, row_ptr, t_cols, t_sel, base, HAS_VALUES)


@triton.jit
def _gvr_reg_kernel(
    indices_ptr, values_ptr,  # outputs: int32 [rows, >=K], float32 [rows, >=K] (HAS_VALUES)
    logits_ptr, pre_idx_ptr, kv_lens_ptr,  # inputs: scores [rows, npad], hint int32 [batch, K], int32 [batch]
    n_bound, row_stride, out_stride, val_stride, pre_stride,  # bounds and row strides (elements)
    n_uniform, next_n, cr_shift,  # row-length rule (see _row_length)
    K: tl.constexpr, KB: tl.constexpr, BLOCK: tl.constexpr, TAIL: tl.constexpr,
    HINT_FREE: tl.constexpr, VARLEN: tl.constexpr, HAS_VALUES: tl.constexpr,
):
    _reg_row(tl.program_id(0), indices_ptr, values_ptr, logits_ptr, pre_idx_ptr, kv_lens_ptr,
             n_bound, row_stride, out_stride, val_stride, pre_stride, n_uniform, next_n, cr_shift,
             K, KB, BLOCK, TAIL, HINT_FREE, VARLEN, HAS_VALUES)


@triton.jit
def _gvr_reg_io_kernel(
    logits_ptr, kv_lens_ptr, pre_idx_ptr,  # inputs first ...
    n_bound, row_stride, next_n, cr_shift,  # ... then scalars ...
    indices_ptr,  # ... then outputs: the argument order ahead-of-time plugin runtimes (TensorRT) require
    K: tl.constexpr, KB: tl.constexpr, BLOCK: tl.constexpr, TAIL: tl.constexpr, HINT_FREE: tl.constexpr,
):
    """Entry point for ahead-of-time compilation: varlen rows, dense ``indices`` [rows, K] and hint [batch, K],
    no values output. One program per row, no workspace."""
    _reg_row(tl.program_id(0), indices_ptr, indices_ptr, logits_ptr, pre_idx_ptr, kv_lens_ptr,
             n_bound, row_stride, K, 0, K, 0, next_n, cr_shift,
             K, KB, BLOCK, TAIL, HINT_FREE, True, False)
