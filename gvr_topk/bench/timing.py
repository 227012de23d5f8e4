"""Timing protocol: CUDA-graph replay with a cold L2 before every replay, the eager call path, and host timing for
CPU smoke runs.

Graph replay (the protocol the targets use): the call is captured once into a ``torch.cuda.CUDAGraph`` after an
eager warm-up on the capturing stream (so Triton compiles, and the stream's workspace is made, outside capture).
Each repetition zeroes a buffer larger than the L2 cache, records a start event, replays, records an end event; the
GPU is still busy with the flush when the host enqueues the replay, so the event pair measures the graph's device
time only, without host launch cost.

Eager path: each repetition flushes, then *synchronises* before recording the start event, so the GPU is idle and
the measured interval includes everything the host does before the kernel starts (argument checks, dispatch,
Triton's launcher): this is what a decode loop without graphs pays.
"""

import time
from dataclasses import asdict
from dataclasses import dataclass
from typing import Callable
from typing import Dict
from typing import List
from typing import Optional
from typing import Sequence
from typing import Tuple

import torch

#: Smallest flush buffer: twice the H200's 60 MB L2 would do; a floor keeps GPUs with unreported L2 covered.
MIN_FLUSH_BYTES = 128 * 1024 * 1024


@dataclass
class Timing:
    """Summary of repeated measurements, in microseconds.

    Attributes
    ----------
    median_us, p20_us, p80_us : float
        Median and 20th / 80th percentiles.
    reps : int
        Measurements taken.
    clock : str
        ``"graph"`` (device time of a graph replay), ``"eager"`` (device interval of an eager call started on an
        idle GPU) or ``"host"`` (wall clock around one call, CPU runs).
    host_us : float, optional
        Median host-side duration of the call itself (eager clock only).
    """

    median_us: float
    p20_us: float
    p80_us: float
    reps: int
    clock: str
    host_us: Optional[float] = None

    def to_dict(self) -> dict:
        return asdict(self)


def quantile(samples: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile ``q`` in [0, 1] of ``samples`` (non-empty)."""
    s = sorted(samples)
    if not s:
        raise ValueError("quantile of no samples")
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(samples_us: Sequence[float], clock: str, host_us: Optional[Sequence[float]] = None) -> Timing:
    """:class:`Timing` of raw samples (microseconds)."""
    return Timing(median_us=quantile(samples_us, 0.5), p20_us=quantile(samples_us, 0.2),
                  p80_us=quantile(samples_us, 0.8), reps=len(samples_us), clock=clock,
                  host_us=quantile(host_us, 0.5) if host_us else None)


class L2Flush:
    """Evicts the L2 cache by zeroing a buffer at least twice its size.

    Parameters
    ----------
    device : torch.device
        A CUDA device.
    """

    def __init__(self, device: torch.device):
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0
        self.nbytes = max(2 * int(l2), MIN_FLUSH_BYTES)
        self.buf = torch.empty(self.nbytes // 4, dtype=torch.int32, device=device)

    def __call__(self) -> None:
        self.buf.zero_()


#: One capture stream per device: every graph is captured on it after a warm call on it (see :func:`capture`).
_CAPTURE_STREAMS: Dict[int, torch.cuda.Stream] = {}


def capture_stream() -> torch.cuda.Stream:
    """The stream :func:`capture` warms and captures on by default: one per device, here the current device's."""
    index = torch.cuda.current_device()
    if index not in _CAPTURE_STREAMS:
        _CAPTURE_STREAMS[index] = torch.cuda.Stream(device=index)
    return _CAPTURE_STREAMS[index]


def capture(fn: Callable[[], object], stream: Optional[torch.cuda.Stream] = None
            ) -> Tuple[torch.cuda.CUDAGraph, object]:
    """Capture one call of ``fn`` into a graph, after one eager call of it on the capturing stream.

    The eager call on that stream is what keeps setup out of the graph: the op's library workspace is one per
    stream, and one created during capture adds its zeroing memset to the graph, which then runs on every replay
    (1.1-2.1 us per replay on an H100, NOTES entry 43; the first-captured arm of a probe cell carried it). Triton
    compiles in that call too.

    Parameters
    ----------
    fn : callable
        The call; run once eagerly here, then captured.
    stream : torch.cuda.Stream, optional
        Stream to warm and capture on; default :func:`capture_stream` of the current device.

    Returns
    -------
    (torch.cuda.CUDAGraph, object)
        The graph and what ``fn`` returned during capture (tensors in the graph's memory pool, rewritten by every
        replay).
    """
    stream = capture_stream() if stream is None else stream
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        out = fn()
    torch.cuda.synchronize()
    return graph, out


def time_graph(graph: torch.cuda.CUDAGraph, flush: L2Flush, reps: int, warmup: int = 2) -> Timing:
    """Device time of ``graph.replay()`` with the L2 flushed before each replay.

    Parameters
    ----------
    graph : torch.cuda.CUDAGraph
    flush : L2Flush
    reps : int
        Timed replays (the median of them is reported).
    warmup : int
        Untimed replays first (first-replay costs: instantiation upload, TLB warm-up).
    """
    return time_graphs_interleaved([graph], flush, reps, warmup)[0]


def interleaved_order(arms: int, reps: int) -> List[int]:
    """The replay order of :func:`time_graphs_interleaved`: ``reps`` rounds, each replaying every arm once, in the
    rows of a Williams design (a Latin square balanced for the arm before).

    Over every full period of rounds (``arms`` rounds for an even count of arms, ``2 * arms`` for an odd count) each
    arm sits at each place of a round equally often, and follows each other arm equally often. Rounds that only
    rotate one order keep every arm's neighbours: the arm after torch.topk was then always the same one, 1-3 us
    slower for it on split cells of the H100 (NOTES entry 43).

    Parameters
    ----------
    arms, reps : int
        Arms (>= 1) and rounds (>= 0).

    Returns
    -------
    list of int
        ``arms * reps`` arm indices.
    """
    if arms < 1 or reps < 0:
        raise ValueError(f"interleaved_order: expected arms >= 1 and reps >= 0, got arms={arms}, reps={reps}")
    # First row 0, 1, n-1, 2, n-2, ...: its steps (1, -2, 3, -4, ... mod n) are all different, so its shifts put
    # every ordered pair side by side once; an odd n also needs the shifted rows reversed.
    first = [0] + [(j + 1) // 2 if j % 2 else arms - j // 2 for j in range(1, arms)]
    rows = [[(v + i) % arms for v in first] for i in range(arms)]
    if arms % 2:
        rows += [row[::-1] for row in rows]
    return [a for r in range(reps) for a in rows[r % len(rows)]]


def time_graphs_interleaved(graphs: Sequence[torch.cuda.CUDAGraph], flush: L2Flush, reps: int,
                            warmup: int = 2) -> List[Timing]:
    """:func:`time_graph` for several graphs at once, their replays interleaved (:func:`interleaved_order`).

    Timing arms one after another lets a drift of the GPU's or host's state over the run, or the arm before,
    bias an arm by its place: on the H200 the same two arms differed by 1-5 us by order alone (NOTES entry 42).
    Interleaving in balanced rounds gives every arm the same places and the same arms before it.

    Parameters
    ----------
    graphs : sequence of torch.cuda.CUDAGraph
        One per arm, each already replayed or captured after an eager call.
    flush : L2Flush
    reps : int
        Timed replays per graph.
    warmup : int
        Untimed replays of each graph first.

    Returns
    -------
    list of Timing
        One per graph, in order.
    """
    for _ in range(warmup):
        for g in graphs:
            g.replay()
    order = interleaved_order(len(graphs), reps)
    starts = [torch.cuda.Event(enable_timing=True) for _ in order]
    ends = [torch.cuda.Event(enable_timing=True) for _ in order]
    for j, arm in enumerate(order):
        flush()
        starts[j].record()
        graphs[arm].replay()
        ends[j].record()
    torch.cuda.synchronize()
    samples: List[List[float]] = [[] for _ in graphs]
    for j, arm in enumerate(order):
        samples[arm].append(starts[j].elapsed_time(ends[j]) * 1e3)
    return [summarize(s, "graph") for s in samples]


def time_eager(fn: Callable[[], object], flush: L2Flush, reps: int, warmup: int = 2) -> Timing:
    """Interval from an idle GPU to the end of an eager ``fn()`` call, cold L2 (host overhead included).

    Parameters
    ----------
    fn : callable
        The call, already run once (compiled).
    flush : L2Flush
    reps, warmup : int
        Timed and untimed calls.
    """
    for _ in range(warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    host: List[float] = []
    for i in range(reps):
        flush()
        # Idle GPU before the start event: otherwise the flush would hide the host's launch cost.
        torch.cuda.synchronize()
        starts[i].record()
        t0 = time.perf_counter_ns()
        fn()
        host.append((time.perf_counter_ns() - t0) / 1e3)
        ends[i].record()
    torch.cuda.synchronize()
    return summarize([s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)], "eager", host)


def time_host(fn: Callable[[], object], reps: int = 1) -> Timing:
    """Wall-clock time of ``fn()`` on the host (CPU smoke runs: the Triton interpreter or torch on CPU)."""
    samples = []
    for _ in range(max(reps, 1)):
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1e3)
    return summarize(samples, "host")
