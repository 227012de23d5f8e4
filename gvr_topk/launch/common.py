"""What every launcher shares: the per-call pointer arguments, the fixed ints and constexprs, the family table, and
the signature holder of a family launched as several kernels."""

import inspect

import triton.language as tl

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


def param_names(kernel) -> tuple:
    """Parameter names of a ``@triton.jit`` kernel (or of anything with a signature), in order."""
    return tuple(inspect.signature(getattr(kernel, "fn", kernel)).parameters)


def union_signature(name: str, kernels, add=(), drop=()):
    """A function that only carries a signature: the union of ``kernels``' parameters (keyword-only, first
    occurrence wins, constexpr annotations kept), without ``drop``, plus the constexprs ``add``. The launcher cache
    reads a family's parameters from it to build compile keys, so one key covers the variants of all its kernels."""
    params = {}
    for k in kernels:
        for pname, p in inspect.signature(getattr(k, "fn", k)).parameters.items():
            params.setdefault(pname, p.replace(kind=inspect.Parameter.KEYWORD_ONLY))
    for pname in drop:
        params.pop(pname, None)
    for pname in add:
        params[pname] = inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, annotation=tl.constexpr)

    def fn(**kwargs):  # a signature holder only
        raise NotImplementedError

    fn.__signature__ = inspect.Signature(list(params.values()))
    fn.__name__ = name
    return fn
