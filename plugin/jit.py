"""The JIT implementation's body: the torch op's own launch path, on the stream TensorRT gives.

Kept apart from the decorated function so it can run (and be tested) without TensorRT: the decorated ``impl`` only
turns TensorRT's tensors into torch views and calls :func:`run`.
"""

from typing import Optional

import torch

import gvr_topk

from . import spec


def run(attrs: spec.PluginAttrs, logits: torch.Tensor, kv_lens: torch.Tensor, pre_idx: torch.Tensor,
        indices: torch.Tensor, stream: Optional[int] = None, tactic: Optional[int] = None) -> None:
    """Select with ``gvr_topk.run_varlen`` on ``stream``, the family forced by ``tactic``.

    Parameters
    ----------
    attrs : spec.PluginAttrs
        Validated plugin attributes.
    logits : torch.Tensor
        float32 ``(rows, npad)``.
    kv_lens : torch.Tensor
        int32 ``(rows // next_n,)``.
    pre_idx : torch.Tensor
        int32 ``(rows // next_n, k)`` hint; ignored when ``attrs.hint_free``.
    indices : torch.Tensor
        int32 ``(rows, k)`` output.
    stream : int, optional
        A ``cudaStream_t`` as an int (TensorRT's); None: torch's current stream.
    tactic : int, optional
        A tactic id from :func:`spec.tactics` (None or 0: the dispatcher decides; the split tactic on more rows than
        ``gvr_topk.dispatch.split_rows_max()`` too).

    Raises
    ------
    TypeError, ValueError
        From ``gvr_topk.run_varlen``'s checks, naming the argument; nothing is written then.
    """
    family = spec.jit_family(tactic)
    if family == "split" and logits.shape[0] > gvr_topk.dispatch.split_rows_max():
        # TensorRT times every offered tactic at shapes of its choosing, and one split launch serves at most
        # split_rows_max() rows: a larger batch under the split tactic takes the dispatcher's family instead of
        # failing the build (the rows count is only known here).
        family = None
    kwargs = dict(next_n=attrs.next_n, compress_ratio=attrs.compress_ratio, max_seq_len=attrs.max_seq_len,
                  family=family)
    hint = None if attrs.hint_free else pre_idx
    if stream is None:
        gvr_topk.run_varlen(logits, hint, kv_lens, indices, **kwargs)
        return
    with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=logits.device)):
        gvr_topk.run_varlen(logits, hint, kv_lens, indices, **kwargs)
