"""Pure host-side dispatch: ``route(b, n, npad, k) -> Plan``.

No tensors, no device queries: every input is a plain int, so the rules are unit-tested on CPU (golden plans, both
sides of each threshold, every family reachable). Constants come from :mod:`gvr_topk.tuning`.
"""

from dataclasses import dataclass
from typing import Optional

from . import tuning

#: Kernel families, the names ``family=`` accepts.
FAMILIES = ("reg", "stream", "split")


@dataclass(frozen=True)
class Plan:
    """How one launch runs.

    Attributes
    ----------
    family : str
        One of :data:`FAMILIES`.
    block : int
        ``reg``: the register tile (columns held per program, with ``tail``); ``stream``/``split``: scores per loop
        iteration.
    num_warps : int
        Warps per program.
    cap : int
        Candidate capacity per row (streaming families; 0 for ``reg``).
    aim : int
        Survivors the sampled threshold aims for (streaming families).
    sample : int
        Scores sampled per row to place the threshold (streaming families).
    split : int
        Programs per row: ``split`` (all of them), ``stream`` (its staging kernel); 1 for ``reg``.
    select_warps : int
        ``stream``: warps of the per-row select kernel (0 for the other families).
    select_maxnreg : int
        ``stream``: register cap per thread of the select kernel, 0 for none.
    coop : bool
        ``split``: the programs of a row share the selection (the cooperative form, ``kernels/split.py``) where the
        launch can keep them all resident (``launch.split.coop_mode``); False for the other families.
    maxnreg : int
        ``reg``: register cap per thread of its program (``tuning.REG_MAXNREG``), 0 for none and for the other
        families (the streaming select's cap is ``select_maxnreg``).
    tail : int
        ``reg``: lanes of the tail tile that holds columns ``block`` .. ``block + tail - 1`` (0: none), so a row a
        little longer than a power of two is not padded to the next one; 0 for the other families.
    maxima : int
        Streaming families: group maxima of the sample that the sample threshold's histogram levels run over
        (:func:`sample_maxima`), 0 for every sampled key and for ``reg``.
    """

    family: str
    block: int
    num_warps: int
    cap: int = 0
    aim: int = 0
    sample: int = 0
    split: int = 1
    select_warps: int = 0
    select_maxnreg: int = 0
    coop: bool = False
    maxnreg: int = 0
    tail: int = 0
    maxima: int = 0


def _pow2_ceil(x: int) -> int:
    return 1 << max(int(x) - 1, 0).bit_length()


def _check(b: int, n: int, npad: int, k: int) -> None:
    for name, v in (("b", b), ("n", n), ("npad", npad), ("k", k)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"route: {name} must be an int, got {type(v).__name__}")
    if b < 1:
        raise ValueError(f"route: b (rows) must be >= 1, got {b}")
    if k < 1:
        raise ValueError(f"route: k must be >= 1, got {k}")
    if npad < 1 or n < 0:
        raise ValueError(f"route: need npad >= 1 and n >= 0, got npad={npad}, n={n}")


def capacity(k: int) -> int:
    """Candidate capacity of the streaming families for ``k`` selections per row."""
    for k_max, cap in tuning.CAP_BY_K:
        if k <= k_max:
            return cap
    return tuning.CAP_BY_K[-1][1]


def _reg_plan(n: int, b: int, num_sms: int) -> Plan:
    block = max(_pow2_ceil(n), tuning.REG_MIN_BLOCK)
    tail = 0
    if block // 2 >= tuning.REG_MIN_BLOCK and n <= block // 2 + block // 4:
        # Half the tile plus a tail tile of at most a quarter of it: fewer lanes for every radix level to sweep, for
        # one more (small) reduction and histogram per level.
        block //= 2
        tail = max(_pow2_ceil(n - block), tuning.REG_TAIL_MIN)
    # Warps by the lanes held: within one wave (a program per SM) the tail tile's lanes count too, past it only the
    # main tile's, so that more programs share an SM (tuning.REG_WARPS).
    lanes = block + tail if b <= num_sms else block
    warps = next(w for size, w in tuning.REG_WARPS if lanes <= size)
    return Plan("reg", block=block, num_warps=warps, maxnreg=tuning.REG_MAXNREG, tail=tail)


def _stream_params(n: int, k: int):
    cap = capacity(k)
    aim = min(k + tuning.AIM_MARGIN, int(cap * tuning.AIM_MAX_FRACTION))
    want = _pow2_ceil(-(-tuning.SAMPLE_ABOVE * n // aim))
    sample = min(max(want, tuning.SAMPLE_MIN), tuning.SAMPLE_MAX, cap)
    return cap, aim, sample


def sample_maxima(rows: int) -> int:
    """Group maxima the sample threshold's histogram levels run over in a streaming launch.

    Where few rows share the GPU the threshold sits on each row's critical path and its histograms set its time;
    with many rows its scattered loads do, which the maxima do not reduce (``tuning.SAMPLE_MAXIMA``).

    Parameters
    ----------
    rows : int
        Rows of the launch (the streaming family's chunk).

    Returns
    -------
    int
        ``tuning.SAMPLE_MAXIMA`` for at most ``tuning.SAMPLE_MAXIMA_MAX_ROWS`` rows, else 0 (every sampled key).

    Raises
    ------
    ValueError
        ``tuning.SAMPLE_MAXIMA`` is neither 0 nor a power of two.
    """
    m = tuning.SAMPLE_MAXIMA
    if type(m) is not int or m < 0 or m & (m - 1):
        raise ValueError(f"tuning.SAMPLE_MAXIMA: expected 0 or a power of two, got {m!r}")
    return m if rows <= tuning.SAMPLE_MAXIMA_MAX_ROWS else 0


def _split_factor(b: int, n: int, num_sms: int) -> int:
    # At most the target in all (rounded down): a split program holds a whole SM (its select's registers), so one
    # program past a multiple of the SM count starts a second wave that waits for the first.
    target = tuning.SPLIT_TARGET_PROGRAMS * num_sms // tuning.DEFAULT_NUM_SMS
    r = min(target // b, -(-n // tuning.SPLIT_MIN_CHUNK), tuning.SPLIT_MAX)
    return max(r, tuning.SPLIT_MIN)


def _split_tile(n: int, split: int) -> int:
    # The long tile where each program's share (whole short tiles, as ``_common._share_bounds`` splits a row of n)
    # holds at least one: fewer reservation round trips per share (tuning.SPLIT_TILE_LONG).
    tiles = -(-n // tuning.SPLIT_TILE)
    share = -(-tiles // split) * tuning.SPLIT_TILE
    return tuning.SPLIT_TILE_LONG if share >= tuning.SPLIT_TILE_LONG else tuning.SPLIT_TILE


def _split_coop(b: int, split: int, aim: int, num_sms: int) -> bool:
    # Where the row's lone finisher would select on a large tile (aim past SPLIT_COOP_AIM_ABOVE) and the row has
    # enough programs to share it; every program must fit the GPU at once (one per SM, as the split rule plans).
    return (tuning.SPLIT_COOP != "off" and aim > tuning.SPLIT_COOP_AIM_ABOVE
            and split >= tuning.SPLIT_COOP_MIN_SPLIT and b * split <= num_sms)


def row_slots() -> int:
    """Row slots of a workspace's counter area: the most rows any family keeps counters for in one launch (the split
    family's routed rows, the streaming family's chunk). Read from ``tuning`` at call time, so a re-tuned process
    (the probes) sizes workspaces and bounds forced launches by the values in force, both from this one
    definition."""
    return max(tuning.SPLIT_MAX_ROWS, tuning.SPLIT_MAX_ROWS_SHORT, tuning.STREAM_CHUNK_ROWS)


def split_rows_max() -> int:
    """Most rows of one ``split`` launch (forced: ``route`` sends it at most ``tuning.SPLIT_MAX_ROWS_SHORT``). The
    family keeps two counter words per row (survivors, arrivals), zero at rest, in the counter area's first
    :func:`row_slots` words: the only part every family leaves zero (the streaming family keeps its thresholds in
    the next ``row_slots()`` words and never clears them, so split counters there would start from stale values)."""
    return row_slots() // 2


def plan_for(family: str, b: int, n: int, npad: int, k: int, *, num_sms: Optional[int] = None) -> Plan:
    """The plan of one given family at a shape (what ``family=`` forces).

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    b, n, npad, k : int
        Rows, row length (the envelope for varlen batches), row width, selections per row.
    num_sms : int, optional
        SMs of the target GPU (default: the H200's 132).

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        Unknown family, ``reg`` for rows longer than ``tuning.REG_MAX_N``, or ``split`` for more than
        :func:`split_rows_max` rows.
    """
    _check(b, n, npad, k)
    num_sms = tuning.DEFAULT_NUM_SMS if num_sms is None else num_sms
    if num_sms < 1:
        raise ValueError(f"route: num_sms must be >= 1, got {num_sms}")
    n = min(max(n, k + 1), npad) if npad > k else npad
    if family == "reg":
        if n > tuning.REG_MAX_N:
            raise ValueError(f"family='reg' holds at most {tuning.REG_MAX_N} columns per row, got n={n}")
        return _reg_plan(n, b, num_sms)
    if family == "stream":
        cap, aim, sample = _stream_params(n, k)
        chunk = min(b, tuning.STREAM_CHUNK_ROWS)
        split = min(max(-(-tuning.STREAM_TARGET_PROGRAMS // chunk), tuning.STREAM_MIN_SPLIT),
                    max(n // tuning.STREAM_MIN_CHUNK, 1), tuning.STREAM_SPLIT_MAX)
        # A select program fills an SM: a chunk with more rows than SMs runs smaller programs instead, two per SM
        # (four for rows on the short staging tile).
        short = n <= tuning.STREAM_TILE_SHORT_MAX_N
        block = tuning.STREAM_TILE_SHORT if short else tuning.STREAM_TILE
        if chunk <= num_sms:
            select_warps, select_maxnreg = tuning.SELECT_WARPS, 0
        elif short:
            select_warps, select_maxnreg = tuning.SELECT_MANY_SHORT_WARPS, tuning.SELECT_MANY_SHORT_MAXNREG
        else:
            select_warps, select_maxnreg = tuning.SELECT_MANY_WARPS, tuning.SELECT_MANY_MAXNREG
        return Plan("stream", block=block, num_warps=tuning.STREAM_WARPS, cap=cap, aim=aim,
                    sample=sample, split=max(split, 1), select_warps=select_warps, select_maxnreg=select_maxnreg,
                    maxima=sample_maxima(chunk))
    if family == "split":
        if b > split_rows_max():
            raise ValueError(f"family='split' serves at most {split_rows_max()} rows per launch (two counter words "
                             f"per row in the workspace's zero-at-rest area), got {b} rows")
        cap, aim, sample = _stream_params(n, k)
        split = _split_factor(b, n, num_sms)
        return Plan("split", block=_split_tile(n, split), num_warps=tuning.SPLIT_WARPS, cap=cap, aim=aim,
                    sample=sample, split=split, coop=_split_coop(b, split, aim, num_sms), maxima=sample_maxima(b))
    raise ValueError(f"family must be one of {FAMILIES} or None, got {family!r}")


def route(b: int, n: int, npad: int, k: int, *, num_sms: Optional[int] = None) -> Plan:
    """Choose the kernel family and its parameters for a launch.

    Parameters
    ----------
    b : int
        Rows in the launch (``batch * next_n``).
    n : int
        Row length the launch must cover: the longest valid row (the envelope) for varlen batches.
    npad : int
        Row width of the score matrix (``logits.shape[1]``); ``n`` is clamped to it.
    k : int
        Selections per row.
    num_sms : int, optional
        SMs of the target GPU (default 132, the H200).

    Returns
    -------
    Plan
        ``plan.family`` is ``"reg"`` for rows of at most ``tuning.REG_ROUTE_MAX_N`` columns (held in one program's
        registers), ``"split"`` for few long rows
        (several programs per row, so a small batch still fills the GPU; up to ``tuning.SPLIT_MAX_ROWS`` rows, or
        ``tuning.SPLIT_MAX_ROWS_SHORT`` rows of at most ``tuning.SPLIT_SHORT_MAX_N`` columns), else ``"stream"``.
    """
    _check(b, n, npad, k)
    n_eff = min(max(n, k + 1), npad) if npad > k else npad
    if n_eff <= tuning.REG_ROUTE_MAX_N:
        family = "reg"
    elif b <= tuning.SPLIT_MAX_ROWS or (b <= tuning.SPLIT_MAX_ROWS_SHORT and n_eff <= tuning.SPLIT_SHORT_MAX_N):
        family = "split"
    else:
        family = "stream"
    return plan_for(family, b, n, npad, k, num_sms=num_sms)
