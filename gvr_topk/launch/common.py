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
            indices_ptr=a.indices,
            values_ptr=a.values if a.values is not None else a.indices,
            logits_ptr=a.logits,
            pre_idx_ptr=a.pre_idx if a.pre_idx is not None else a.indices,
            kv_lens_ptr=a.kv_lens if a.kv_lens is not None else a.indices,
            n_bound=a.n_bound,
            row_stride=a.logits.stride(0),
            out_stride=a.indices.stride(0),
            val_stride=a.values.stride(0) if a.values is not None else 0,
            pre_stride=a.pre_idx.stride(0) if a.pre_idx is not None else 0,
            n_uniform=a.n_uniform,
            next_n=a.next_n,
            cr_shift=a.cr_shift,
            K=a.k,
            KB=max(16, 1 << (a.k - 1).bit_length()),
            HINT_FREE=a.pre_idx is None,
            VARLEN=a.kv_lens is not None,
            HAS_VALUES=a.values is not None,
        )


def launch(plan: Plan, args: LaunchArgs, workspace: Optional[torch.Tensor]) -> None:
    """Run ``plan`` on ``args`` (``workspace``: a byte tensor of ``workspace_bytes`` size for streaming families)."""
    from . import reg
    from . import split
    from . import stream

    launcher = {"reg": reg.launch_reg, "stream": stream.launch_stream, "split": split.launch_split}[plan.family]
    launcher(plan, args, workspace)
