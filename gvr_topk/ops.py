"""The one op-registration module: every ``torch.ops.gvr`` op is defined here, each with a fake.

``gvr::topk_varlen`` is destination-passing (writes ``indices`` / ``values``, returns None), opaque to
``torch.compile`` (Dynamo keeps it as one node and functionalises the mutation), and safe inside CUDA graphs when
``max_seq_len`` is given. The fake only checks arguments: it reads no data and allocates nothing.

The op is registered with ``torch.library.Library`` (schema + one CompositeExplicitAutograd kernel) rather than
``torch.library.custom_op``: the eager call then costs ~4 us of dispatch instead of ~30 us (measured on the CI CPU
with a zero-row call, which isolates the registration overhead; the H200 host measured 49 vs 24 us per call for the
op against ``run_varlen`` with ``custom_op``). The op has no autograd formula: it only writes integer indices and
values that are never differentiated.
"""

from typing import Optional

import torch

from . import api

NAMESPACE = "gvr"

_LIB = torch.library.Library(NAMESPACE, "DEF")
_LIB.define("topk_varlen(Tensor logits, Tensor? pre_idx, Tensor kv_lens, Tensor(a!) indices, Tensor(b!)? values, "
            "int next_n, int compress_ratio, int? max_seq_len) -> ()")


def topk_varlen(logits: torch.Tensor, pre_idx: Optional[torch.Tensor], kv_lens: torch.Tensor, indices: torch.Tensor,
                values: Optional[torch.Tensor], next_n: int, compress_ratio: int,
                max_seq_len: Optional[int]) -> None:
    """``torch.ops.gvr.topk_varlen``: :func:`gvr_topk.run_varlen` as a torch op (same arguments and contract).

    Parameters
    ----------
    logits : torch.Tensor
        ``(rows, npad)`` float32 / bfloat16 / float16 scores.
    pre_idx : torch.Tensor or None
        int32 ``(rows // next_n, >= K)`` hint, or None (hint-free).
    kv_lens : torch.Tensor
        int32 ``(rows // next_n,)`` uncompressed KV lengths.
    indices : torch.Tensor
        int32 ``(rows, K)`` output (mutated).
    values : torch.Tensor or None
        float32 ``(rows, >= K)`` output (mutated), or None.
    next_n, compress_ratio : int
        Rows per request and KV compression ratio.
    max_seq_len : int or None
        Bound of ``kv_lens``; given, the op does no host synchronisation (CUDA-graph capturable).
    """
    api._execute(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, None, None)


_LIB.impl("topk_varlen", topk_varlen, "CompositeExplicitAutograd")


@torch.library.register_fake(f"{NAMESPACE}::topk_varlen", lib=_LIB)
def _topk_varlen_fake(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len) -> None:
    api._validate(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, None, None)
    return None
