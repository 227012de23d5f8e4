"""Workspace layout and the default per-(device, stream) workspace.

Layout (bytes, int32 words)::

    [ counters: SPLIT_MAX_ROWS x 2 words ][ staged keys: slots x CAP ][ staged columns: slots x CAP ]

The counters (split family: survivors and arrivals per row) are zero at rest: the finishing program of each row
resets them, so a workspace is zeroed once at allocation and never again (CUDA-graph replays need no memset). The
candidate area needs no initialisation. Only the streaming families use a workspace; ``reg`` needs none.
"""

from typing import Dict
from typing import Tuple

import torch

from . import tuning
from .dispatch import Plan
from .dispatch import capacity

_COUNTER_WORDS = 2 * tuning.SPLIT_MAX_ROWS
_ALIGN = 256


def _slots(plan_family: str, num_rows: int) -> int:
    if plan_family == "split":
        return num_rows
    if plan_family == "stream":
        return min(num_rows, tuning.STREAM_MAX_PROGRAMS)
    return 0


def workspace_bytes(num_rows: int, k: int) -> int:
    """Bytes of workspace that any launch over ``num_rows`` rows with ``k`` selections may use.

    Parameters
    ----------
    num_rows : int
        Rows per launch (``batch * next_n``).
    k : int
        Selections per row (``indices.shape[1]``).

    Returns
    -------
    int
        A size valid for every family and row length (the workspace does not depend on the row width).
        Pass a zero-initialised ``torch.uint8`` tensor of at least this size as ``workspace=``.
    """
    if num_rows < 0 or k < 1:
        raise ValueError(f"workspace_bytes: need num_rows >= 0 and k >= 1, got num_rows={num_rows}, k={k}")
    cap = capacity(k)
    slots = max(_slots("stream", num_rows), _slots("split", num_rows) if num_rows <= tuning.SPLIT_MAX_ROWS else 0)
    total = 4 * _COUNTER_WORDS + 8 * slots * cap
    return -(-total // _ALIGN) * _ALIGN


def views(workspace: torch.Tensor, plan: Plan, num_rows: int):
    """int32 views (counters, staged keys, staged columns) of a byte workspace for one launch."""
    words = workspace.view(torch.int32)
    slots = _slots(plan.family, num_rows)
    counters = words[:_COUNTER_WORDS]
    keys = words[_COUNTER_WORDS:_COUNTER_WORDS + slots * plan.cap]
    cols = words[_COUNTER_WORDS + slots * plan.cap:_COUNTER_WORDS + 2 * slots * plan.cap]
    return counters, keys, cols


_DEFAULT: Dict[Tuple[torch.device, int], torch.Tensor] = {}


def default_workspace(device: torch.device, nbytes: int) -> torch.Tensor:
    """The library-owned workspace of (device, current stream), grown to ``nbytes`` when needed.

    One per stream, so ops running concurrently on different streams never share staging memory. Growing it
    allocates, which is refused during CUDA-graph capture: run the op once eagerly (or call ``gvr_topk.warmup``)
    before capturing, or pass ``workspace=``.
    """
    stream = torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else 0
    key = (device, stream)
    ws = _DEFAULT.get(key)
    if ws is None or ws.numel() < nbytes:
        if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            raise RuntimeError(
                f"gvr_topk: the default workspace of {device} (stream {stream:#x}) needs {nbytes} bytes but holds "
                f"{0 if ws is None else ws.numel()}; it cannot grow during CUDA-graph capture. Run the op once "
                "before capture (gvr_topk.warmup) or pass workspace= (see gvr_topk.workspace_bytes).")
        ws = torch.zeros(max(nbytes, _ALIGN), dtype=torch.uint8, device=device)
        _DEFAULT[key] = ws
    return ws
