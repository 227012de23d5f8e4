"""Compile every kernel specialization a run will need, in parallel worker processes, before timing starts.

A Triton specialization of the selection kernels takes 2-6 s to compile on the H200 host and the full grid needs
~60 of them, so compiling in the timing process would dominate the run. Workers make the same calls on random
inputs of the same shapes (compilation depends on shapes, strides, dtypes and hint mode, never on the data); the
compiled kernels land in Triton's on-disk cache, where the timing process finds them. Purely an optimisation:
without it (``--jobs 0``) the first call of each arm compiles, outside the timed region either way.
"""

import multiprocessing as mp
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import List
from typing import Sequence
from typing import Tuple

from .cases import Case

#: (rows, npad, k, next_n, compress_ratio, max_seq_len, varlen, hinted, free, floor_splits)
Spec = Tuple[int, int, int, int, int, int, bool, bool, bool, Tuple[int, ...]]


def specs_for(cases: Sequence[Case], arms: Sequence[str], num_sms: int = 132) -> List[Spec]:
    """Distinct compile jobs of a run (one per case shape and hint mode; the floor's splits with the first K)."""
    from . import floor as floor_mod

    seen = {}
    floors_done = set()
    for c in cases:
        hinted = any(a in arms for a in ("hinted", "invalid", "eager"))
        free = "free" in arms
        n_env = min(c.max_seq_len // c.compress_ratio, c.n)
        splits: Tuple[int, ...] = ()
        fkey = (c.rows, c.n, n_env, c.next_n, c.compress_ratio, c.varlen)
        if "floor" in arms and fkey not in floors_done:
            floors_done.add(fkey)
            splits = tuple(floor_mod.split_candidates(c.rows, n_env, num_sms))
        key = (c.rows, c.n, c.k, c.next_n, c.compress_ratio, c.max_seq_len, c.varlen)
        old = seen.get(key)
        if old is not None:
            splits = tuple(sorted(set(old[-1]) | set(splits)))
        seen[key] = key + (hinted, free, splits)
    return list(seen.values())


def _worker(job) -> List[str]:
    """Run one share of the specs on ``device``; returns error lines (empty when all compiled)."""
    device, specs = job
    import torch

    import gvr_topk
    from . import floor as floor_mod
    from .. import workspace as ws

    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.set_device(device)
    errors = []
    for (rows, npad, k, next_n, cr, max_seq_len, varlen, hinted, free, splits) in specs:
        try:
            x = torch.randn(rows, npad, device=device)
            batch = rows // next_n
            kv = torch.full((batch,), max_seq_len, dtype=torch.int32, device=device)
            out = torch.empty(rows, k, dtype=torch.int32, device=device)
            wsp = torch.zeros(ws.workspace_bytes(rows, k), dtype=torch.uint8, device=device)
            modes = ([torch.randint(0, npad, (batch, k), dtype=torch.int32, device=device)] if hinted else []) + \
                ([None] if free else [])
            for pre in modes:
                gvr_topk.run_varlen(x, pre, kv, out, next_n=next_n, compress_ratio=cr, max_seq_len=max_seq_len,
                                    workspace=wsp)
            n_env = min(max_seq_len // cr, npad)
            for s in splits:
                floor_mod.RowMax(x, kv if varlen else None, n_env, s, next_n=next_n, compress_ratio=cr)()
            if cuda:
                torch.cuda.synchronize()
        except Exception as e:  # reported, never fatal: the timing process compiles what is missing
            errors.append(f"{rows}x{npad} k{k}: {type(e).__name__}: {e}"[:300])
    return errors


def precompile(cases: Sequence[Case], arms: Sequence[str], device, jobs: int, num_sms: int = 132) -> Tuple[float,
                                                                                                             List[str]]:
    """Compile the kernels of ``cases`` with ``jobs`` worker processes on ``device``.

    Returns
    -------
    (float, list of str)
        Wall seconds spent and error lines from the workers.
    """
    specs = specs_for(cases, arms, num_sms)
    if jobs <= 0 or not specs:
        return 0.0, []
    t0 = time.perf_counter()
    # Largest jobs first, dealt round-robin, so the workers finish together.
    specs.sort(key=lambda s: -s[0] * s[1])
    shares = [specs[i::jobs] for i in range(min(jobs, len(specs)))]
    dev = str(device)
    print(f"precompiling {len(specs)} kernel shapes in {len(shares)} processes ...", file=sys.stderr, flush=True)
    # spawn: a forked child cannot use the CUDA context of a parent that already initialised it. An executor, not a
    # Pool: a worker that dies (e.g. a crashing compile) raises here instead of hanging the run.
    errors: List[str] = []
    try:
        with ProcessPoolExecutor(len(shares), mp_context=mp.get_context("spawn")) as pool:
            for part in pool.map(_worker, [(dev, share) for share in shares]):
                errors += part
    except Exception as e:
        errors.append(f"precompile stopped ({type(e).__name__}: {e}); the timing process compiles the rest")
    return time.perf_counter() - t0, errors
