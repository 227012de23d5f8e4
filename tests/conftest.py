"""Test-session setup shared by every test.

Without a CUDA GPU the Triton kernels run through Triton's interpreter: ``TRITON_INTERPRET=1`` must be set before
triton is first imported, which is why this happens here, at collection time, before any test module imports
``gvr_topk``. Also the fixtures more than one test file uses.
"""

import os

import pytest
import torch

ON_GPU = torch.cuda.is_available()
if not ON_GPU:
    os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture
def every_sampled_key(monkeypatch):
    """The sample threshold's histogram levels over every sampled key in launches of any row count
    (``tuning.SAMPLE_MAXIMA_MAX_ROWS`` 0), for tests whose rows are built around the whole sample's ranks; prepared
    launches are dropped before and after, so plans are rebuilt with the value and without it."""
    import gvr_topk
    from gvr_topk import tuning

    monkeypatch.setattr(tuning, "SAMPLE_MAXIMA_MAX_ROWS", 0)
    gvr_topk.clear_launch_cache()
    yield
    monkeypatch.undo()
    gvr_topk.clear_launch_cache()


def _just_under_k_row(n: int, k: int, seed: int) -> torch.Tensor:
    """A row whose sample threshold admits a little fewer than K scores while 4x its sample rank would admit more
    than the slot holds. The sampled scores are evenly spaced over (0, 1), so the thresholds of the ranks involved
    are fixed (rank 79 of 512: 0.847, rank 125: 0.757, rank 316: 0.384 at n=20000, K=2048); the unsampled scores sit
    in bands between them: 0.95 K minus the rank in [0.9, 1), 1000 in [0.77, 0.84), 8000 in [0.45, 0.7), the rest
    below 0.35. Built for the sample thresholds over every sampled key (``every_sampled_key``)."""
    import gvr_topk
    from gvr_topk import reference
    from gvr_topk import tuning

    plan = gvr_topk.route(1, n, n, k, num_sms=132)
    sampled = reference.sample_columns(n, plan.sample, tuning.SAMPLE_GROUP)
    rank = reference.sample_rank(n, plan.aim, plan.sample)
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, generator=g) * 0.35
    x[sampled] = 1.0 - (torch.arange(sampled.numel(), dtype=torch.float32) + 0.5) / sampled.numel()
    free = torch.ones(n, dtype=torch.bool)
    free[sampled] = False
    order = free.nonzero().flatten()[torch.randperm(int(free.sum()), generator=g)]
    bands = ((int(0.95 * k) - rank, 0.9, 1.0), (1000, 0.77, 0.84), (8000, 0.45, 0.7))
    at = 0
    for count, lo, hi in bands:
        x[order[at:at + count]] = lo + (hi - lo) * torch.rand(count, generator=g)
        at += count
    return x


@pytest.fixture
def under_k_row():
    """The builder ``(n, k, seed) -> [n] float32 row`` of a row that stages a little under K (CPU tensor), for the
    retry ladder's first rung in both families."""
    return _just_under_k_row
