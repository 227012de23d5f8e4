"""Exactness checks shared by the tests, the benchmark and the examples.

``check_exact`` verifies one call's output against the contract and ``torch.topk``; it returns a list of problems
(empty when exact) so callers can either assert or report. ``tuning_overrides`` reads the ``NAME=INT`` tuning
overrides that the GPU checks take from the environment (an option that is off by default is checked before it is
adopted).
"""

from typing import List
from typing import Optional

import torch

from . import contract
from . import reference
from . import tuning


def tuning_overrides(text: Optional[str], source: str = "tuning overrides") -> dict:
    """``"NAME=INT[,NAME=INT...]"`` -> ``{NAME: INT}`` for integer values of :mod:`gvr_topk.tuning`.

    Set on ``gvr_topk.tuning`` before the first call, they reach every value read when a launch is prepared; the few
    compiled into the kernels at import (``kernels/_common``'s module constants) are not changed this way.

    Parameters
    ----------
    text : str or None
        The overrides, e.g. ``"SPLIT_BALANCE=1,STREAM_STAGE_SPARSE=3"``; None or empty: none.
    source : str
        Where ``text`` came from, named in the error (e.g. the environment variable).

    Returns
    -------
    dict
        Tuning name -> int.

    Raises
    ------
    ValueError
        An item that is not ``NAME=INT`` with NAME an integer of ``gvr_topk.tuning``, named with ``source``.
    """
    out = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, _, value = item.strip().partition("=")
        if type(getattr(tuning, name, None)) is not int or not value.lstrip("-").isdigit():
            raise ValueError(f"{source}: expected NAME=INT with NAME an integer of gvr_topk.tuning, got "
                             f"{item.strip()!r}")
        out[name] = int(value)
    return out


def _canon(v: torch.Tensor) -> torch.Tensor:
    """float32 bit patterns with -0.0 folded into +0.0 and every NaN made one NaN (the multiset's equality)."""
    v = v.to(torch.float32) + 0.0
    v = torch.where(torch.isnan(v), torch.full_like(v, float("nan")), v)
    return v.view(torch.int32)


def check_exact(logits: torch.Tensor, indices: torch.Tensor, *, kv_lens: Optional[torch.Tensor] = None,
                next_n: int = 1, compress_ratio: int = 1, n_valid: Optional[int] = None,
                values: Optional[torch.Tensor] = None, tie_rule: bool = True, max_report: int = 5) -> List[str]:
    """Problems found in a top-k output; an empty list means the output is exact.

    Parameters
    ----------
    logits : torch.Tensor
        ``(rows, npad)`` scores given to the op.
    indices : torch.Tensor
        int32 ``(rows, K)`` output.
    kv_lens, next_n, compress_ratio, n_valid
        The row-length arguments of the call (see :func:`gvr_topk.reference.row_lengths`).
    values : torch.Tensor, optional
        float32 ``(rows, >= K)`` values output, checked against the logits at the chosen indices.
    tie_rule : bool
        Also require the exact index set of the contract's tie rule (lowest columns win ties at the K-th score).
    max_report : int
        Stop after this many problems.

    Returns
    -------
    list of str
        Row-level descriptions: wrong short-row layout, duplicate or out-of-range indices, a value multiset that
        differs from ``torch.topk``'s (bit for bit, -0.0 == +0.0), a wrong index set, wrong values.
    """
    rows, npad = logits.shape
    k = indices.shape[1]
    lens = reference.row_lengths(kv_lens.cpu() if kv_lens is not None else None, rows, npad, next_n=next_n,
                                 compress_ratio=compress_ratio, n_valid=n_valid).tolist()
    x = logits.detach().cpu()
    idx = indices.detach().cpu().to(torch.int64)
    val = values.detach().cpu()[:, :k] if values is not None else None
    ref_idx = None
    if tie_rule:
        ref_idx, _ = reference.topk_varlen(x, kv_lens.cpu() if kv_lens is not None else None, k, next_n=next_n,
                                           compress_ratio=compress_ratio, n_valid=n_valid)
    problems: List[str] = []
    slot = torch.arange(k)
    for r in range(rows):
        if len(problems) >= max_report:
            break
        n = lens[r]
        got = idx[r]
        if n <= k:
            want = torch.where(slot < n, slot, contract.PAD_INDEX)
            if not torch.equal(got, want):
                problems.append(f"row {r} (n={n} <= K={k}): expected 0..n-1 then -1, got {got[:8].tolist()}...")
                continue
        else:
            if int(got.min()) < 0 or int(got.max()) >= n:
                problems.append(f"row {r}: index outside [0, {n}): min {int(got.min())}, max {int(got.max())}")
                continue
            if torch.unique(got).numel() != k:
                problems.append(f"row {r}: {k - torch.unique(got).numel()} duplicate indices")
                continue
            row = x[r, :n]
            mine = torch.sort(_canon(row[got])).values
            theirs = torch.sort(_canon(torch.topk(row.to(torch.float32), k, sorted=False).values)).values
            if not torch.equal(mine, theirs):
                bad = int((mine != theirs).sum())
                problems.append(f"row {r} (n={n}): value multiset differs from torch.topk in {bad} of {k} places")
                continue
            if ref_idx is not None and set(got.tolist()) != set(ref_idx[r].tolist()):
                extra = sorted(set(got.tolist()) - set(ref_idx[r].tolist()))[:5]
                problems.append(f"row {r} (n={n}): index set breaks the tie rule (e.g. chose {extra})")
                continue
        if val is not None:
            live = got >= 0
            want_v = torch.where(live, x[r].to(torch.float32)[got.clamp(min=0)],
                                 torch.full((k,), contract.PAD_VALUE))
            if not torch.equal(_canon(val[r]), _canon(want_v)):
                problems.append(f"row {r}: values differ from the logits at the chosen indices / pad value")
    return problems
