"""Workspace layout and the default per-(device, stream) workspace.

Layout (bytes, int32 words)::

    [ counters: ROW_WORDS x 3 words ][ cooperative scratch: COOP_ROWS x coop_words() ]
    [ staged keys: slots x CAP ][ staged columns: slots x CAP ]

ROW_WORDS = ``dispatch.row_slots()`` (max of SPLIT_MAX_ROWS, SPLIT_MAX_ROWS_SHORT, STREAM_CHUNK_ROWS). The split
family reads the first ROW_WORDS words as 2 words per row (survivor count, arrival count; hence at most ROW_WORDS / 2
rows, ``dispatch.split_rows_max()``); the streaming family reads the counter area as three
arrays of ROW_WORDS words (survivor counts, thresholds, the per-row flags of ``tuning.STREAM_ROW_WAIT``). The
cooperative scratch serves the split family's cooperative form (``kernels/split.py`` lists its words), one block per
row up to COOP_ROWS = ``coop_rows()``. Counts, arrivals, flags and the scratch's counters and histogram are zero at
rest: the program that finishes a row resets them, so a workspace is zeroed once at allocation and never again
(CUDA-graph replays need no memset). Thresholds, the scratch's compacted candidates and the candidate area need no
initialisation. Only the streaming families use a workspace; ``reg`` needs none.
"""

import warnings
from typing import Dict
from typing import Tuple

import torch

from . import tuning
from .dispatch import Plan
from .dispatch import capacity
from .dispatch import row_slots
from .launch.cache import capturing

_ALIGN = 256
#: int32 counter words per row slot (see the module docstring).
_COUNTER_WORDS = 3


def coop_words() -> int:
    """int32 words of one row's cooperative scratch: 8 counters, the row histogram (2**SPLIT_COOP_BIN_BITS bins),
    the compacted crossing bin's keys and columns (CROSS_CAP each)."""
    return 8 + (1 << tuning.SPLIT_COOP_BIN_BITS) + 2 * tuning.CROSS_CAP


def coop_rows() -> int:
    """Most rows the split family's cooperative form serves in one launch (the rows ``route`` sends to ``split``)."""
    return max(tuning.SPLIT_MAX_ROWS, tuning.SPLIT_MAX_ROWS_SHORT)


def head_bytes() -> int:
    """Bytes at the start of a workspace that must be zero at rest (counters and cooperative scratch)."""
    return 4 * _COUNTER_WORDS * row_slots() + 4 * coop_rows() * coop_words()


def _slots(plan_family: str, num_rows: int) -> int:
    if plan_family == "split":
        return num_rows
    if plan_family == "stream":
        return min(num_rows, tuning.STREAM_CHUNK_ROWS)
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
    split_rows = max(tuning.SPLIT_MAX_ROWS, tuning.SPLIT_MAX_ROWS_SHORT)  # the most rows route sends to ``split``
    slots = max(_slots("stream", num_rows), _slots("split", num_rows) if num_rows <= split_rows else 0)
    total = head_bytes() + 8 * slots * cap
    return -(-total // _ALIGN) * _ALIGN


def views(workspace: torch.Tensor, plan: Plan, num_rows: int):
    """int32 views (counters, staged keys, staged columns) of a byte workspace for one launch.

    ``counters`` holds 2 words per row slot, (survivors, arrivals), for ``split`` (in its first 2 x ROW_WORDS
    words); for ``stream`` its three runs of ROW_WORDS words are the survivor counts, the thresholds and the flags
    (see :func:`stream_views`)."""
    words = workspace.view(torch.int32)
    slots = _slots(plan.family, num_rows)
    head = head_bytes() // 4
    counters = words[:_COUNTER_WORDS * row_slots()]
    keys = words[head:head + slots * plan.cap]
    cols = words[head + slots * plan.cap:head + 2 * slots * plan.cap]
    return counters, keys, cols


def coop_view(workspace: torch.Tensor) -> torch.Tensor:
    """int32 view of the cooperative scratch (``coop_rows()`` x ``coop_words()`` words) of a byte workspace."""
    words = workspace.view(torch.int32)
    return words[_COUNTER_WORDS * row_slots():head_bytes() // 4]


def stream_views(workspace: torch.Tensor, plan: Plan, num_rows: int):
    """int32 views (survivor counts, thresholds, per-row flags, staged keys, staged columns) for the ``stream``
    family."""
    counters, keys, cols = views(workspace, plan, num_rows)
    rw = row_slots()
    return counters[:rw], counters[rw:2 * rw], counters[2 * rw:], keys, cols


_DEFAULT: Dict[Tuple[torch.device, int], torch.Tensor] = {}
# Workspaces replaced by a larger one stay alive: a CUDA graph captured earlier may still point at them.
_RETIRED = []
#: Whether :func:`default_workspace` has warned of a workspace made during capture (once per process).
_WARNED_CAPTURE = False


def default_workspace(device: torch.device, nbytes: int) -> torch.Tensor:
    """The library-owned workspace of (device, current stream), grown to ``nbytes`` when needed.

    One per stream, so ops running concurrently on different streams never share staging memory. Only the head
    (counters and cooperative scratch, :func:`head_bytes`: 0.5 MB with today's tuning) needs zeros, so creating or
    growing one costs a memset of it. Made during CUDA-graph capture, that memset becomes part of the graph and runs
    on every replay: correct (the counters are zero whenever a replay starts), but 1-2 us (NOTES entry 43), so the
    first such capture in a process warns. Warm the op on the capturing stream before capture
    (``gvr_topk.warmup(..., stream=s)`` and ``torch.cuda.graph(g, stream=s)``) or pass ``workspace=``.
    """
    global _WARNED_CAPTURE
    stream = torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else 0
    head = head_bytes()
    key = (device, stream, head)  # a re-tuned counter area gets a workspace of its own, zeroed for its layout
    ws = _DEFAULT.get(key)
    if ws is None or ws.numel() < nbytes:
        if capturing(device) and not _WARNED_CAPTURE:
            _WARNED_CAPTURE = True
            warnings.warn(f"gvr_topk: the default workspace of this stream was {'grown' if ws is not None else 'made'}"
                          f" during CUDA-graph capture, so the graph zeroes {head} bytes on every replay (1-2 us); "
                          "warm up on the capturing stream first (gvr_topk.warmup(..., stream=s), then "
                          "torch.cuda.graph(g, stream=s)) or pass workspace=. Warned once per process.",
                          stacklevel=2)
        if ws is not None:
            _RETIRED.append(ws)
        ws = torch.empty(max(nbytes, _ALIGN), dtype=torch.uint8, device=device)
        ws[:head].zero_()
        _DEFAULT[key] = ws
    return ws
