"""What every launcher shares: the validated problem, and the family table."""

from dataclasses import dataclass
from typing import Optional

import torch

from ..dispatch import Plan


@dataclass
class LaunchArgs:
    """A validated call, ready to launch (tensors already checked by ``gvr_topk.api``).

    Attributes
    ----------
    logits : torch.Tensor
        ``(rows, npad)`` scores, inner stride 1.
    pre_idx : torch.Tensor or None
        int32 ``(batch, >=K)`` hint, or None (hint-free).
    kv_lens : torch.Tensor or None
        int32 ``(batch,)``, or None (every row has ``n_uniform`` columns).
    indices : torch.Tensor
        int32 ``(rows, >=K)`` output.
    values : torch.Tensor or None
        float32 ``(rows, >=K)`` output.
    k, next_n, cr_shift, n_uniform, n_bound : int
        Selections per row, rows per request, log2(compress_ratio), uniform row length, and the bound every row
        length is clamped to (the envelope).
    """

    logits: torch.Tensor
    pre_idx: Optional[torch.Tensor]
    kv_lens: Optional[torch.Tensor]
    indices: torch.Tensor
    values: Optional[torch.Tensor]
    k: int
    next_n: int
    cr_shift: int
    n_uniform: int
    n_bound: int

    def common_kwargs(self) -> dict:
        """Kernel arguments every family takes, by name (dummies for absent optional tensors are never read)."""
        a = self
        return dict(
            pointer_kwargs(a.logits, a.pre_idx, a.kv_lens, a.indices, a.values),
            **static_kwargs(k=a.k, next_n=a.next_n, cr_shift=a.cr_shift, n_uniform=a.n_uniform, n_bound=a.n_bound,
                            row_stride=a.logits.stride(0), out_stride=a.indices.stride(0),
                            val_stride=a.values.stride(0) if a.values is not None else 0,
                            pre_stride=a.pre_idx.stride(0) if a.pre_idx is not None else 0,
                            hint_free=a.pre_idx is None, varlen=a.kv_lens is not None,
                            has_values=a.values is not None))


#: Tensor arguments every family takes, in launch order (the launcher cache fills these in per call).
POINTER_ARGS = ("indices_ptr", "values_ptr", "logits_ptr", "pre_idx_ptr", "kv_lens_ptr")


def pointer_kwargs(logits, pre_idx, kv_lens, indices, values) -> dict:
    """The per-call tensor arguments; an absent optional tensor is replaced by ``indices`` (never read)."""
    return dict(indices_ptr=indices, values_ptr=values if values is not None else indices, logits_ptr=logits,
                pre_idx_ptr=pre_idx if pre_idx is not None else indices,
                kv_lens_ptr=kv_lens if kv_lens is not None else indices)


def static_kwargs(*, k: int, next_n: int, cr_shift: int, n_uniform: int, n_bound: int, row_stride: int,
                  out_stride: int, val_stride: int, pre_stride: int, hint_free: bool, varlen: bool,
                  has_values: bool) -> dict:
    """The ints and constexprs every family takes; a pure function of tensor metadata and the int arguments."""
    return dict(n_bound=n_bound, row_stride=row_stride, out_stride=out_stride, val_stride=val_stride,
                pre_stride=pre_stride, n_uniform=n_uniform, next_n=next_n, cr_shift=cr_shift, K=k,
                KB=max(16, 1 << (k - 1).bit_length()), HINT_FREE=hint_free, VARLEN=varlen, HAS_VALUES=has_values)


def family_module(family: str):
    """The launcher module of ``family``: ``kernel()``, ``grid``, ``family_kwargs``, ``workspace_kwargs``."""
    from . import reg
    from . import split
    from . import stream

    return {"reg": reg, "stream": stream, "split": split}[family]


def launch(plan: Plan, args: LaunchArgs, workspace: Optional[torch.Tensor]) -> None:
    """Run ``plan`` on ``args`` (``workspace``: a byte tensor of ``workspace_bytes`` size for streaming families)."""
    from . import reg
    from . import split
    from . import stream

    launcher = {"reg": reg.launch_reg, "stream": stream.launch_stream, "split": split.launch_split}[plan.family]
    launcher(plan, args, workspace)
