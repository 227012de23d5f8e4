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
