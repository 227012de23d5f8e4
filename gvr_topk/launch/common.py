"""What every launcher shares: the per-call pointer arguments, the fixed ints and constexprs, the family table."""

#: Tensor arguments every family takes, in launch order (the launcher cache fills these in per call).
POINTER_ARGS = ("indices_ptr", "values_ptr", "logits_ptr", "pre_idx_ptr", "kv_lens_ptr")


def static_kwargs(*, k: int, next_n: int, cr_shift: int, n_uniform: int, n_bound: int, row_stride: int,
                  out_stride: int, val_stride: int, pre_stride: int, hint_free: bool, varlen: bool,
                  has_values: bool) -> dict:
    """The ints and constexprs every family takes; a pure function of tensor metadata and the int arguments."""
    return dict(n_bound=n_bound, row_stride=row_stride, out_stride=out_stride, val_stride=val_stride,
                pre_stride=pre_stride, n_uniform=n_uniform, next_n=next_n, cr_shift=cr_shift, K=k,
                KB=max(16, 1 << (k - 1).bit_length()), HINT_FREE=hint_free, VARLEN=varlen, HAS_VALUES=has_values)


def stage_lanes(tile: int, num_warps: int) -> int:
    """Width of a staging tile row: one score per thread of the program (``_common._stage_share``), at most the
    tile."""
    return min(tile, 32 * num_warps)


def family_module(family: str):
    """The launcher module of ``family``: ``kernel()``, ``grid``, ``family_kwargs``, ``workspace_kwargs``."""
    from . import reg
    from . import split
    from . import stream

    return {"reg": reg, "stream": stream, "split": split}[family]
