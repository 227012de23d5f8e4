"""The one op-registration module: every ``torch.ops.gvr`` op is defined here, each with a fake.

``gvr::topk_varlen`` is destination-passing (writes ``indices`` / ``values``, returns None), opaque to
``torch.compile`` (Dynamo keeps it as one node and functionalises the mutation), and safe inside CUDA graphs when
``max_seq_len`` is given. The fake only checks arguments: it reads no data and allocates nothing.
"""

from typing import Optional

import torch

from . import api

NAMESPACE = "gvr"


@torch.library.custom_op(f"{NAMESPACE}::topk_varlen", mutates_args=("indices", "values"))
def topk_varlen(logits: torch.Tensor, pre_idx: Optional[torch.Tensor], kv_lens: torch.Tensor, indices: torch.Tensor,
                values: Optional[torch.Tensor], next_n: int, compress_ratio: int,
                max_seq_len: Optional[int]) -> None:
    """``torch.ops.gvr.topk_varlen``: :func:`gvr_topk.run_varlen` as a custom op (same arguments and contract)."""
    api._execute(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, None, None)


@topk_varlen.register_fake
def _topk_varlen_fake(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len) -> None:
    api._validate(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, None, None)
    return None
