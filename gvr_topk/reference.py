"""Pure-torch implementation of the op's contract: the oracle for tests and benchmarks.

It runs on any device and follows :mod:`gvr_topk.contract` exactly, tie rule included, so a kernel's index set
can be compared with it for equality (not only its value multiset).
"""

import struct
from typing import Optional

import torch

from . import contract
from . import tuning


def row_lengths(kv_lens: Optional[torch.Tensor], num_rows: int, npad: int, *, next_n: int = 1,
                compress_ratio: int = 1, n_valid: Optional[int] = None) -> torch.Tensor:
    """Valid length of every row.

    Parameters
    ----------
    kv_lens : torch.Tensor or None
        int32 ``(num_rows // next_n,)``: uncompressed KV length of each request. ``None`` means every row has
        length ``n_valid`` (or ``npad`` when that is ``None`` too).
    num_rows, npad : int
        Rows of the score matrix and its row width.
    next_n, compress_ratio : int
        Rows per request and the KV compression ratio (a power of two).
    n_valid : int, optional
        Uniform row length used when ``kv_lens`` is ``None``.

    Returns
    -------
    torch.Tensor
        int64 ``(num_rows,)`` on ``kv_lens``' device: ``n_r = (kv_lens[r // next_n] - next_n + r % next_n + 1)
        // compress_ratio`` clamped to ``[0, npad]``.
    """
    if kv_lens is None:
        n = npad if n_valid is None else n_valid
        return torch.full((num_rows,), min(max(int(n), 0), npad), dtype=torch.int64)
    r = torch.arange(num_rows, device=kv_lens.device)
    kv = kv_lens.to(torch.int64)[r // next_n]
    n = torch.div(kv - next_n + (r % next_n) + 1, compress_ratio, rounding_mode="floor")
    return n.clamp(0, npad)


def order_keys(x: torch.Tensor) -> torch.Tensor:
    """Order-preserving int64 keys of float scores (the order the contract selects in).

    Parameters
    ----------
    x : torch.Tensor
        float32, bfloat16 or float16 scores, any shape.

    Returns
    -------
    torch.Tensor
        int64 keys in ``[0, 2**32)``, same shape: larger key = larger score; every NaN maps to ``2**32 - 1``,
        above +inf; -0.0 sits one below +0.0.
    """
    u = x.to(torch.float32).contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    key = torch.where(u >= 0x80000000, u ^ 0xFFFFFFFF, u | 0x80000000)
    return torch.where(torch.isnan(x), torch.full_like(key, 0xFFFFFFFF), key)


def sample_columns(n: int, sample: int, group: int) -> torch.Tensor:
    """Columns the kernels' sample threshold reads in a row of ``n`` scores (the host mirror of the kernels'
    ``_sample_threshold``): ``sample // group`` groups of ``group`` adjacent columns spread evenly over ``[0, n)``.

    Parameters
    ----------
    n : int
        Valid columns of the row; ``n >= sample``.
    sample : int
        Sample size (``Plan.sample``), a power of two.
    group : int
        Adjacent columns per group (``tuning.SAMPLE_GROUP``), a power of two dividing ``sample``.

    Returns
    -------
    torch.Tensor
        int64 ``(sample,)``: distinct columns in ``[0, n)``, ascending.
    """
    if not (1 <= group <= sample and sample % group == 0 and n >= sample):
        raise ValueError(f"sample_columns: need 1 <= group <= sample, group | sample and n >= sample; got n={n}, "
                         f"sample={sample}, group={group}")
    groups = sample // group
    start = (torch.arange(groups, dtype=torch.int64) * (n // group) // groups) * group
    return (start[:, None] + torch.arange(group)[None, :]).reshape(-1)


def sample_rank(n: int, aim: int, sample: int) -> int:
    """Rank in the sample whose key should leave about ``aim`` of a row's ``n`` scores at or above it (the host
    mirror of the kernels' ``_sample_rank``)."""
    return min(max((aim * sample + n - 1) // n, 1), sample)


def retry_rank(rank: int, count: int, aim: int, sample: int) -> int:
    """Sample rank of the retry ladder's first rung after a staging at sample rank ``rank`` admitted ``count`` < K
    scores (the host mirror of the kernels' ``_retry_rank``): ``rank`` scaled by ``aim / count``, rounded up, at
    least ``rank + 1``, at most ``sample``."""
    return min(max((rank * aim + count - 1) // max(count, 1), rank + 1), sample)


def balanced_shares(lengths, k: int, tile: int, programs: int) -> list:
    """Staging programs per row of a split-family launch whose staging is shared out by row length
    (``tuning.SPLIT_BALANCE``; the host mirror of the kernels' ``_balanced_shares``).

    Parameters
    ----------
    lengths : sequence of int
        Valid length of every row of the launch (``row_lengths``).
    k, tile, programs : int
        K, the staging tile (``plan.block``) and the launch's programs (``plan.split * rows``; at least the number
        of rows).

    Returns
    -------
    list of int
        Per row: 0 for a short row (n <= K), else ``1 + (programs - long rows) * tiles // all tiles`` capped at the
        row's tiles (``ceil(n / tile)``). The sum is at most ``programs``; rows of one length get
        ``programs // rows`` each (capped at their tiles).
    """
    tiles = [-(-int(n) // tile) if n > k else 0 for n in lengths]
    longs = sum(t > 0 for t in tiles)
    total = max(sum(tiles), 1)
    return [min(1 + (programs - longs) * t // total, t) if t else 0 for t in tiles]


def digit_shift(span: int, bits: int = 8) -> int:
    """The radix shift the kernels use for a key window of width ``span`` (the host mirror of ``_digit_shift``):
    the float32 exponent of ``span`` minus ``bits - 1``, at least 0, so that ``span >> shift < 2**bits``.

    Parameters
    ----------
    span : int
        ``hi - lo`` of a key window, in ``[0, 2**32)``.
    bits : int
        Bits per radix level (``2**bits`` bins).

    Returns
    -------
    int
        The shift, in ``[0, 33 - bits]``.
    """
    f = struct.unpack("<I", struct.pack("<f", float(span)))[0]  # rounds to nearest even, as the GPU converts
    return max((f >> 23) - 127 - (bits - 1), 0)


def sample_threshold(keys: torch.Tensor, rank: int, sample: int, group: int, maxima: int = 0) -> int:
    """The staging threshold the kernels derive from a row's sample (the host mirror of ``_sample_threshold``).

    ``tuning.SAMPLE_LEVELS`` histogram levels of ``2**tuning.SAMPLE_BIN_BITS`` bins over the sampled order keys,
    each keeping the bin where the ``rank``-th largest sampled key falls; the result is that bin's lower edge after
    the last level. The first window spans the sampled keys from their minimum, or from the smallest of
    ``tuning.SAMPLE_LOW_GROUPS`` group maxima when that is set and ``rank`` is at most it; with
    ``tuning.SAMPLE_STOP_DIV`` set, the levels stop after one whose crossing bin holds at most
    ``rank / SAMPLE_STOP_DIV`` sampled keys. With ``maxima`` set the levels run over that many group maxima of the
    sample at :func:`maxima_rank`'s rank instead. Used to simulate survivor
    counts on the host (``benchmarks/sim_survivors.py``); a test checks it against the streaming family's
    thresholds.

    Parameters
    ----------
    keys : torch.Tensor
        int64 ``(n,)`` order keys of one row (:func:`order_keys`), ``n >= sample``.
    rank, sample, group : int
        :func:`sample_rank`'s rank, ``Plan.sample`` and ``tuning.SAMPLE_GROUP``.
    maxima : int, optional
        ``Plan.maxima``: group maxima the levels run over (0, or at least ``sample``: every sampled key).

    Returns
    -------
    int
        The threshold, an order key in ``[0, 2**32)``.
    """
    return sample_threshold_levels(keys, rank, sample, group, maxima)[0]


def maxima_rank(rank: int, sample: int, groups: int) -> int:
    """The rank among ``groups`` group maxima of a ``sample`` (group j: sampled keys j, j + groups, ...) that stands
    for ``rank`` in the whole sample (the host mirror of ``_common._maxima_rank``, float32 operation for operation).

    A key reached by a share p = rank / sample of the sample is reached by the maximum of a group of m = sample /
    groups sampled keys with probability 1 - (1 - p)**m (keys spread over the row taken as independent), so the
    rank among the maxima is ``groups - floor(groups * (1 - p)**m)``, at least 1. The power is taken by squaring
    (m is a power of two) in float32, as the kernels do, so both sides round alike.

    Parameters
    ----------
    rank : int
        Rank in the sample, ``1 <= rank <= sample``.
    sample, groups : int
        Powers of two, ``groups < sample``.

    Returns
    -------
    int
        The rank among the maxima, in ``[1, groups]``.
    """
    q = torch.tensor(1.0, dtype=torch.float32) - torch.tensor(rank, dtype=torch.float32) * (1.0 / sample)
    m = groups
    while m < sample:
        q = q * q
        m *= 2
    return min(max(groups - int(q * groups), 1), groups)


def sample_threshold_levels(keys: torch.Tensor, rank: int, sample: int, group: int, maxima: int = 0) -> tuple:
    """:func:`sample_threshold` and the number of histogram levels it took (``tuning.SAMPLE_STOP_DIV`` may stop it
    early; a degenerate window stops it too).

    Parameters
    ----------
    keys : torch.Tensor
        int64 ``(n,)`` order keys of one row, ``n >= sample``.
    rank, sample, group, maxima : int
        As for :func:`sample_threshold`.

    Returns
    -------
    tuple
        ``(threshold, levels)``: the threshold, an order key in ``[0, 2**32)``, and the levels run, in
        ``[0, tuning.SAMPLE_LEVELS]``.
    """
    k = keys[sample_columns(keys.numel(), sample, group)].tolist()
    m = maxima
    if 0 < m < sample:
        k, rank = [max(k[j::m]) for j in range(m)], maxima_rank(rank, sample, m)
    lo, hi, need = min(k), max(k), rank
    g = tuning.SAMPLE_LOW_GROUPS
    if 0 < g < sample and rank <= g:
        lo = min(max(k[j::g]) for j in range(g))
    bits = tuning.SAMPLE_BIN_BITS
    stop_div = tuning.SAMPLE_STOP_DIV
    levels = 0
    for _level in range(tuning.SAMPLE_LEVELS):
        if lo >= hi:
            break
        shift = digit_shift(hi - lo, bits)
        hist = [0] * (1 << bits)
        for v in k:
            if lo <= v <= hi:
                hist[(v - lo) >> shift] += 1
        at_or_above, b = 0, 0
        for b in range((1 << bits) - 1, -1, -1):  # highest bin whose count of keys in bins >= it reaches need
            if at_or_above + hist[b] >= need:
                break
            at_or_above += hist[b]
        need -= at_or_above
        new_lo = lo + (b << shift)
        hi = new_lo + min(hi - new_lo, (1 << shift) - 1)
        lo = new_lo
        levels += 1
        if stop_div > 0 and hist[b] * stop_div <= rank:
            break
    return lo, levels


def coop_crossing_bin(keys: torch.Tensor, k: int, plan, bits: Optional[int] = None) -> tuple:
    """The crossing bin the split family's cooperative form leaves to its finisher, for one row (host mirror).

    The kernel stages the row against the sample threshold (the whole row when it fits the slot) and counts what it
    stages into a histogram of ``2**bits`` bins over the sample's window: from the threshold to the largest sampled
    key below +inf's, keys below the window in bin 0 and keys past it in the last bin (``_common._sample_bracket``,
    ``_window_digit``). The crossing bin is the highest bin whose count of keys at or above it reaches K. Mirrors
    rows whose threshold is an exact key set (the staging admits exactly the keys at or above it; a threshold at
    +0.0's key also admits -0.0) and that stage at least K scores, as decode rows do. Used to size the histogram
    (``benchmarks/sim_crossing_bin.py``).

    Parameters
    ----------
    keys : torch.Tensor
        int64 ``(n,)`` order keys of one row (:func:`order_keys`), ``n >= plan.sample``.
    k : int
        Selections per row.
    plan : gvr_topk.dispatch.Plan
        The split family's plan for the row (its ``aim``, ``sample`` and ``cap``).
    bits : int, optional
        Histogram bits (default ``tuning.SPLIT_COOP_BIN_BITS``).

    Returns
    -------
    tuple of int
        (candidates in the crossing bin, how many of them are needed); equal when the whole bin is needed.
    """
    bits = tuning.SPLIT_COOP_BIN_BITS if bits is None else bits
    n = keys.numel()
    rank = sample_rank(n, plan.aim, plan.sample)
    lo = sample_threshold(keys, rank, plan.sample, tuning.SAMPLE_GROUP, plan.maxima)
    sampled = keys[sample_columns(n, plan.sample, tuning.SAMPLE_GROUP)]
    finite = sampled[sampled < 0xFF800000]  # the key of +inf; NaNs lie above it
    top = max(int(finite.max()) if finite.numel() else 0, lo)
    staged = keys[keys >= (1 if n <= plan.cap else lo)]
    digit = torch.where(staged >= lo, torch.clamp((staged - lo) >> digit_shift(top - lo, bits), max=(1 << bits) - 1),
                        0)
    hist = torch.bincount(digit, minlength=1 << bits)
    at_or_above = torch.flip(torch.cumsum(torch.flip(hist, [0]), 0), [0])
    b = int((at_or_above >= k).nonzero().max())
    return int(hist[b]), k - int(at_or_above[b] - hist[b])


def topk_varlen(logits: torch.Tensor, kv_lens: Optional[torch.Tensor], k: int, *, next_n: int = 1,
                compress_ratio: int = 1, n_valid: Optional[int] = None):
    """Reference selection for every row.

    Parameters
    ----------
    logits : torch.Tensor
        ``(num_rows, npad)`` float32 / bfloat16 / float16 scores.
    kv_lens : torch.Tensor or None
        int32 ``(num_rows // next_n,)``; see :func:`row_lengths`.
    k : int
        Selections per row.
    next_n, compress_ratio, n_valid
        See :func:`row_lengths`.

    Returns
    -------
    (torch.Tensor, torch.Tensor)
        int32 indices ``(num_rows, k)`` and float32 values ``(num_rows, k)``, laid out as the contract says
        (long rows sorted by descending order key, ties by ascending index).
    """
    num_rows, npad = logits.shape
    dev = logits.device
    n = row_lengths(kv_lens, num_rows, npad, next_n=next_n, compress_ratio=compress_ratio,
                    n_valid=n_valid).to(dev)
    cols = torch.arange(npad, device=dev)
    valid = cols[None, :] < n[:, None]
    # One int64 key per column, unique within a row: order key first (recentred so the shift stays in int64),
    # then the lower column index wins.
    key = ((order_keys(logits) - 2**31) << 32) | (0xFFFFFFFF - cols)[None, :]
    key = torch.where(valid, key, torch.full_like(key, torch.iinfo(torch.int64).min))
    kk = min(k, npad)
    top = torch.topk(key, kk, dim=1, sorted=True).indices if kk > 0 else cols.new_zeros((num_rows, 0))
    idx = torch.full((num_rows, k), contract.PAD_INDEX, dtype=torch.int64, device=dev)
    idx[:, :kk] = top
    short = n <= k
    slot = torch.arange(k, device=dev)
    ident = torch.where(slot[None, :] < n[:, None], slot[None, :], contract.PAD_INDEX)
    idx = torch.where(short[:, None], ident, idx)
    filled = idx >= 0
    vals = torch.gather(logits.to(torch.float32), 1, idx.clamp(min=0))
    vals = torch.where(filled, vals, torch.full_like(vals, contract.PAD_VALUE))
    return idx.to(torch.int32), vals
