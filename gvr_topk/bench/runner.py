"""Runs the benchmark: every arm of every case on the same inputs, in one process, each timed output checked.

Arms
----
``hinted``   the op with the previous step's top-K as ``pre_idx`` (the decode path), CUDA-graph replay.
``invalid``  the op with an all -1 hint (legal, useless), CUDA-graph replay.
``free``     the op with ``pre_idx=None`` (hint-free mode), CUDA-graph replay.
``torch``    ``torch.topk(logits, K, dim=1, sorted=False)`` over the full row width, CUDA-graph replay.
``floor``    the one-pass read floor (:mod:`gvr_topk.bench.floor`), best of three splits, CUDA-graph replay.
``eager``    the hinted call made from Python each time (``gvr_topk.run_varlen``), plus the same through
             ``torch.ops.gvr.topk_varlen``; GPU idle at the start event, so host overhead is included.
"""

import sys
import time
from collections import OrderedDict
from dataclasses import asdict
from typing import Callable
from typing import Dict
from typing import List
from typing import Optional
from typing import Sequence

import torch

import gvr_topk

from .. import reference
from .. import workspace as ws
from . import floor as floor_mod
from . import timing
from .cases import Case
from .data import Inputs
from .data import make_inputs
from .exact import _canon
from .exact import check_exact_fast

ARMS = ("hinted", "invalid", "free", "torch", "floor", "eager")
#: Arms that call the op (their outputs are checked against the contract, tie rule included).
OP_ARMS = ("hinted", "invalid", "free")
#: Value written into outputs before the checked replay, so a replay that wrote nothing cannot pass.
POISON = -7


class Progress:
    """tqdm bar on stderr when tqdm is installed, else one line per case."""

    def __init__(self, total: int, enabled: bool = True):
        self.total, self.done, self.bar = total, 0, None
        self.enabled = enabled
        if enabled:
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, unit="case", file=sys.stderr, dynamic_ncols=True)
            except ImportError:
                print("note: tqdm is not installed (pip install 'gvr-topk[bench]'); printing one line per case",
                      file=sys.stderr)

    def update(self, name: str) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(name, refresh=False)
            self.bar.update(1)
        elif self.enabled:
            print(f"[{self.done}/{self.total}] {name}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _hint_recall(hint: torch.Tensor, ref_idx: torch.Tensor, lengths: torch.Tensor, next_n: int,
                 k: int) -> Optional[float]:
    """Mean share of a long row's exact top-K that its request's hint already names (how good the hint is)."""
    long_rows = lengths > k
    if not bool(long_rows.any()):
        return None
    rows, npad1 = ref_idx.shape[0], int(lengths.max()) + 1
    member = torch.zeros(rows, npad1, dtype=torch.bool, device=ref_idx.device)
    member.scatter_(1, ref_idx.to(torch.int64).clamp(min=0), True)
    h = hint.to(torch.int64).repeat_interleave(next_n, dim=0)
    hit = member.gather(1, h.clamp(0, npad1 - 1)) & (h >= 0) & (h < lengths[:, None])
    share = hit.sum(1).to(torch.float64) / k
    return float(share[long_rows].mean())


def _arm_record(t: Optional[timing.Timing] = None, *, exact: Optional[bool] = None, problems=(),
                error: Optional[str] = None, skipped: Optional[str] = None, **extra) -> dict:
    """JSON record of one arm: timing fields, ``exact`` (None: not checked), problems, and why it failed
    (``error``) or did not run (``skipped``)."""
    rec = t.to_dict() if t is not None else {"median_us": None}
    rec.update(exact=exact, problems=list(problems), error=error, skipped=skipped)
    rec.update(extra)
    return rec


def _err_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]


class Runner:
    """Runs cases on one device.

    Parameters
    ----------
    device : torch.device
        ``cuda:i`` (graph and eager timing) or ``cpu`` (one host-timed call per arm, for smoke tests).
    arms : sequence of str
        Subset of :data:`ARMS`.
    reps : int
        Timed repetitions per arm (GPU).
    progress : bool
        Show progress on stderr.
    """

    def __init__(self, device: torch.device, arms: Sequence[str] = ARMS, reps: int = 25, progress: bool = True):
        bad = [a for a in arms if a not in ARMS]
        if bad:
            raise ValueError(f"unknown arm(s) {bad}; expected a subset of {ARMS}")
        self.device = device
        self.arms = tuple(a for a in ARMS if a in arms)
        self.reps = max(int(reps), 1)
        self.cuda = device.type == "cuda"
        self.progress = progress
        self.flush = timing.L2Flush(device) if self.cuda else None
        self.num_sms = torch.cuda.get_device_properties(device).multi_processor_count if self.cuda else 132
        self.notes: List[str] = []
        if not self.cuda and not gvr_topk.kernels_interpreted():
            self.notes.append("CPU run without TRITON_INTERPRET=1: the op fell back to the torch reference and the "
                              "read floor was skipped (set TRITON_INTERPRET=1 to run the Triton kernels)")

    # ------------------------------------------------------------------ timing helpers
    def _timed(self, fn: Callable[[], object]):
        """(Timing, graph or None, output of the captured call / the host call)."""
        if not self.cuda:
            holder = {}

            def call():
                holder["out"] = fn()

            t = timing.time_host(call, 1)
            return t, None, holder["out"]
        graph, out = timing.capture(fn)  # one eager call on the capturing stream first: compiles outside capture
        return timing.time_graph(graph, self.flush, self.reps), graph, out

    def _replay_checked(self, graph, poison: Sequence[torch.Tensor]) -> None:
        if graph is None:
            return
        for t in poison:
            t.fill_(POISON)
        graph.replay()
        torch.cuda.synchronize()

    # ------------------------------------------------------------------ floor (once per input)
    def _floor(self, case: Case, inp: Inputs) -> dict:
        if not self.cuda and not gvr_topk.kernels_interpreted():
            return _arm_record(skipped="needs a GPU or TRITON_INTERPRET=1")
        rows, npad = inp.logits.shape
        n_env = min(case.max_seq_len // case.compress_ratio, npad)
        kv = inp.kv_lens if case.varlen else None
        splits = floor_mod.split_candidates(rows, n_env, self.num_sms) if self.cuda else \
            [floor_mod.floor_split(rows, n_env, self.num_sms)]
        best = None
        tried = {}
        try:
            for s in splits:
                rm = floor_mod.RowMax(inp.logits, kv, n_env, s, next_n=case.next_n,
                                      compress_ratio=case.compress_ratio)
                t, graph, _ = self._timed(rm)
                tried[str(s)] = t.median_us
                if best is None or t.median_us < best[1].median_us:
                    best = (s, t, graph, rm)
                else:
                    del graph
            s, t, graph, rm = best
            self._replay_checked(graph, [rm.out])
            cols = torch.arange(npad, device=inp.logits.device)
            masked = torch.where(cols[None, :] < inp.lengths[:, None], inp.logits.to(torch.float32),
                                 torch.full((), float("-inf"), device=inp.logits.device))
            want = masked.amax(dim=1) if npad else torch.full((rows,), float("-inf"), device=self.device)
            bad = torch.nonzero(_canon(rm.out) != _canon(want)).flatten()[:5].tolist()
            problems = [f"row {r}: row max {float(rm.out[r])} != {float(want[r])}" for r in bad]
            return _arm_record(t, exact=not problems, problems=problems, split=s, splits_tried=tried)
        except Exception as e:  # a failing arm becomes a table cell, the run goes on
            return _arm_record(error=_err_text(e), exact=False, splits_tried=tried)

    # ------------------------------------------------------------------ one case
    def run_case(self, case: Case, inp: Inputs, floor_rec: Optional[dict]) -> dict:
        """Time and check every arm of ``case`` on ``inp``; returns the case's JSON record."""
        logits, kv = inp.logits, inp.kv_lens
        rows, npad = logits.shape
        k = case.k
        n_env = min(case.max_seq_len // case.compress_ratio, npad)
        plan = gvr_topk.route(rows, n_env, npad, k)  # exactly what the op decides
        ref_idx, _ = reference.topk_varlen(logits, kv, k, next_n=case.next_n, compress_ratio=case.compress_ratio)
        hint = inp.hint_for(k)
        read_bytes = int(inp.lengths.sum()) * logits.element_size()
        rec = dict(name=case.name, suite=case.suite, data=case.data, rows=rows, batch=case.batch,
                   next_n=case.next_n, compress_ratio=case.compress_ratio, n=npad, n_env=n_env, k=k,
                   max_seq_len=case.max_seq_len, mean_len=float(inp.lengths.to(torch.float64).mean()),
                   short_rows=int((inp.lengths <= k).sum()), read_bytes=read_bytes, plan=asdict(plan),
                   hint_recall=_hint_recall(hint, ref_idx, inp.lengths, case.next_n, k), arms={})
        workspace = torch.zeros(ws.workspace_bytes(rows, k), dtype=torch.uint8, device=self.device)
        hints = {"hinted": hint, "invalid": torch.full_like(hint, -1), "free": None}
        call_kw = dict(next_n=case.next_n, compress_ratio=case.compress_ratio, max_seq_len=case.max_seq_len)

        def check(out):
            return check_exact_fast(logits, out, kv_lens=kv, next_n=case.next_n, compress_ratio=case.compress_ratio,
                                    ref_indices=ref_idx)

        for arm in OP_ARMS:
            if arm not in self.arms:
                continue
            out = torch.empty((rows, k), dtype=torch.int32, device=self.device)
            pre = hints[arm]

            def fn(out=out, pre=pre):
                gvr_topk.run_varlen(logits, pre, kv, out, workspace=workspace, **call_kw)

            try:
                t0 = time.perf_counter()
                t, graph, _ = self._timed(fn)
                setup_s = time.perf_counter() - t0
                self._replay_checked(graph, [out])
                problems = check(out)
                rec["arms"][arm] = _arm_record(t, exact=not problems, problems=problems, setup_s=setup_s)
                del graph
            except Exception as e:
                rec["arms"][arm] = _arm_record(error=_err_text(e), exact=False)

        if "eager" in self.arms:
            rec["arms"]["eager"] = self._eager(case, logits, hint, kv, workspace, call_kw, check)

        if "torch" in self.arms:
            try:
                t, graph, res = self._timed(lambda: torch.topk(logits, k, dim=1, sorted=False))
                self._replay_checked(graph, [res.indices])
                if bool((inp.lengths > k).all()):
                    # torch.topk has no varlen layout (short rows), so it is checked only where every row is long;
                    # it picks any of tied columns, so only its value multiset is held to the contract.
                    problems = check_exact_fast(logits, res.indices, kv_lens=kv, next_n=case.next_n,
                                                compress_ratio=case.compress_ratio, tie_rule=False)
                    exact = not problems
                else:
                    problems, exact = [], None
                rec["arms"]["torch"] = _arm_record(t, exact=exact, problems=problems)
                del graph, res
            except Exception as e:
                rec["arms"]["torch"] = _arm_record(error=_err_text(e), exact=False)

        if floor_rec is not None:
            rec["arms"]["floor"] = floor_rec
        return rec

    def _eager(self, case, logits, hint, kv, workspace, call_kw, check) -> dict:
        rows, k = logits.shape[0], case.k
        out = torch.empty((rows, k), dtype=torch.int32, device=self.device)
        if not self.cuda:
            return _arm_record(skipped="eager timing needs a GPU (CPU runs time one host call per arm instead)")
        try:
            def fn():
                gvr_topk.run_varlen(logits, hint, kv, out, workspace=workspace, **call_kw)

            def fn_op():
                torch.ops.gvr.topk_varlen(logits, hint, kv, out, None, case.next_n, case.compress_ratio,
                                          case.max_seq_len)

            fn()
            t = timing.time_eager(fn, self.flush, self.reps)
            out.fill_(POISON)
            fn()
            torch.cuda.synchronize()
            problems = check(out)
            fn_op()
            t_op = timing.time_eager(fn_op, self.flush, self.reps)
            out.fill_(POISON)
            fn_op()
            torch.cuda.synchronize()
            problems += [f"torch.ops path: {p}" for p in check(out)]
            return _arm_record(t, exact=not problems, problems=problems, op_median_us=t_op.median_us,
                               op_host_us=t_op.host_us)
        except Exception as e:
            return _arm_record(error=_err_text(e), exact=False)

    # ------------------------------------------------------------------ all cases
    def run(self, cases: Sequence[Case], on_progress: Optional[Callable[[List[dict]], None]] = None) -> List[dict]:
        """Run ``cases`` (inputs generated once per ``data_key``); returns one record per case, in order.

        ``on_progress`` receives the records finished so far after every input group (for partial saves).
        """
        groups: Dict[tuple, List[Case]] = OrderedDict()
        for c in cases:
            groups.setdefault(c.data_key, []).append(c)
        results: Dict[Case, dict] = {}
        bar = Progress(len(cases), self.progress)
        try:
            for group in groups.values():
                k_max = max(c.k for c in group)
                try:
                    inp = make_inputs(group[0], k_max, self.device)
                except Exception as e:  # e.g. out of memory: every case of the group becomes an error row
                    for c in group:
                        results[c] = dict(name=c.name, suite=c.suite, data=c.data, rows=c.rows, batch=c.batch,
                                          next_n=c.next_n, compress_ratio=c.compress_ratio, n=c.n, k=c.k,
                                          arms={}, error=_err_text(e))
                        bar.update(c.name)
                    continue
                floor_rec = self._floor(group[0], inp) if "floor" in self.arms else None
                for c in group:
                    results[c] = self.run_case(c, inp, floor_rec)
                    bar.update(c.name)
                del inp
                if self.cuda:
                    torch.cuda.empty_cache()
                if on_progress is not None:
                    on_progress([results[c] for c in cases if c in results])
        finally:
            bar.close()
        return [results[c] for c in cases]
