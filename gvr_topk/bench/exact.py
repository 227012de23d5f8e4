"""Vectorised exactness check with the semantics of :func:`gvr_topk.testing.check_exact`, on the data's device.

``check_exact`` walks rows on the CPU, which takes minutes at 512 x 262143; the benchmark checks every timed output,
so it needs the same verdicts in a few whole-matrix operations. Both functions report the same rows, in the same
order, with the first failing check of each row (tested against each other on CPU).
"""

from typing import List
from typing import Optional

import torch

from .. import contract
from .. import reference
from ..testing import _canon


def check_exact_fast(logits: torch.Tensor, indices: torch.Tensor, *, kv_lens: Optional[torch.Tensor] = None,
                     next_n: int = 1, compress_ratio: int = 1, n_valid: Optional[int] = None,
                     values: Optional[torch.Tensor] = None, tie_rule: bool = True, max_report: int = 5,
                     ref_indices: Optional[torch.Tensor] = None) -> List[str]:
    """Problems found in a top-k output; an empty list means the output is exact.

    Parameters
    ----------
    logits : torch.Tensor
        ``(rows, npad)`` float32 / bfloat16 / float16 scores given to the op.
    indices : torch.Tensor
        int32 ``(rows, K)`` output, on the same device.
    kv_lens, next_n, compress_ratio, n_valid
        The row-length arguments of the call (:func:`gvr_topk.reference.row_lengths`).
    values : torch.Tensor, optional
        float32 ``(rows, >= K)`` values output.
    tie_rule : bool
        Also require the contract's index set (lowest columns win ties at the K-th score).
    max_report : int
        Report at most this many rows.
    ref_indices : torch.Tensor, optional
        int32 ``(rows, K)`` output of :func:`gvr_topk.reference.topk_varlen` for these inputs, when the caller
        checks several outputs of one input and computes it once.

    Returns
    -------
    list of str
        One description per failing row (first failing check of the row, in the order short-row layout, index
        range, duplicates, value multiset, tie rule, values), rows in ascending order, like ``check_exact``.
    """
    rows, npad = logits.shape
    k = indices.shape[1]
    dev = logits.device
    if rows == 0:
        return []
    if npad == 0:
        # Every row is empty: only the all-PAD layout is legal.
        bad = (indices != contract.PAD_INDEX).any(1)
        return [f"row {r} (n=0 <= K={k}): expected 0..n-1 then -1, got {indices[r, :8].tolist()}..."
                for r in torch.nonzero(bad).flatten()[:max_report].tolist()]
    n = reference.row_lengths(kv_lens, rows, npad, next_n=next_n, compress_ratio=compress_ratio,
                              n_valid=n_valid).to(dev)
    idx = indices.to(dev, torch.int64)
    slot = torch.arange(k, device=dev)
    short = n <= k
    long_ = ~short

    # Short rows: exactly 0 .. n-1 then PAD.
    want_short = torch.where(slot[None, :] < n[:, None], slot[None, :], contract.PAD_INDEX)
    bad_short = short & (idx != want_short).any(1)

    # Long rows: range, then uniqueness, then the value multiset against torch.topk, then the tie rule.
    bad_range = long_ & ((idx < 0) | (idx >= n[:, None])).any(1)
    srt = torch.sort(idx, dim=1).values
    dups = (srt[:, 1:] == srt[:, :-1]).sum(1) if k > 1 else torch.zeros(rows, dtype=torch.int64, device=dev)
    ok_so_far = long_ & ~bad_range
    bad_dup = ok_so_far & (dups > 0)
    ok_so_far = ok_so_far & ~bad_dup

    x32 = logits.to(torch.float32)
    got_v = torch.gather(x32, 1, idx.clamp(0, npad - 1))
    cols = torch.arange(npad, device=dev)
    # Columns past a row's length never compete: -inf can only tie with in-window -inf, which leaves the
    # multiset unchanged. A long row has n > K, so npad > K there and kk == K (kk < K only when no row is long).
    kk = min(k, npad)
    masked = torch.where(cols[None, :] < n[:, None], x32, torch.full_like(x32, float("-inf")))
    theirs = torch.topk(masked, kk, dim=1, sorted=False).values if kk > 0 else x32[:, :0]
    del masked
    mine_c = torch.sort(_canon(got_v[:, :kk]), dim=1).values
    theirs_c = torch.sort(_canon(theirs), dim=1).values
    n_diff = (mine_c != theirs_c).sum(1)
    bad_multiset = ok_so_far & (n_diff > 0)
    ok_so_far = ok_so_far & ~bad_multiset

    bad_tie = torch.zeros_like(ok_so_far)
    if tie_rule:
        if ref_indices is None:
            ref_indices, _ = reference.topk_varlen(logits, kv_lens, k, next_n=next_n,
                                                   compress_ratio=compress_ratio, n_valid=n_valid)
        ref_srt = torch.sort(ref_indices.to(dev, torch.int64), dim=1).values
        bad_tie = ok_so_far & (srt != ref_srt).any(1)

    bad_vals = torch.zeros_like(ok_so_far)
    if values is not None:
        live = idx >= 0
        want_v = torch.where(live, got_v, torch.full_like(got_v, contract.PAD_VALUE))
        clean = ~(bad_short | bad_range | bad_dup | bad_multiset | bad_tie)
        bad_vals = clean & (_canon(values[:, :k].to(dev)) != _canon(want_v)).any(1)

    bad = bad_short | bad_range | bad_dup | bad_multiset | bad_tie | bad_vals
    problems: List[str] = []
    if not bool(bad.any()):
        return problems
    for r in torch.nonzero(bad).flatten()[:max_report].tolist():
        nr = int(n[r])
        if bool(bad_short[r]):
            problems.append(f"row {r} (n={nr} <= K={k}): expected 0..n-1 then -1, got {idx[r, :8].tolist()}...")
        elif bool(bad_range[r]):
            problems.append(f"row {r}: index outside [0, {nr}): min {int(idx[r].min())}, max {int(idx[r].max())}")
        elif bool(bad_dup[r]):
            problems.append(f"row {r}: {int(dups[r])} duplicate indices")
        elif bool(bad_multiset[r]):
            problems.append(f"row {r} (n={nr}): value multiset differs from torch.topk in {int(n_diff[r])} of {k} "
                            "places")
        elif bool(bad_tie[r]):
            extra = sorted(set(idx[r].tolist()) - set(ref_indices[r].tolist()))[:5]
            problems.append(f"row {r} (n={nr}): index set breaks the tie rule (e.g. chose {extra})")
        else:
            problems.append(f"row {r}: values differ from the logits at the chosen indices / pad value")
    return problems
