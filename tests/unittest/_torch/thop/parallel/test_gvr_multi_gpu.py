"""Multi-GPU behaviour of the gvr top-k op (skipped unless at least 2 CUDA GPUs are present).

* Tensors on ``cuda:1`` while the current device is ``cuda:0``: every entry point (``run_varlen``, ``run``,
  ``topk``, ``torch.ops.gvr.topk_varlen``), the default workspace and every family give exact results, the
  current device is left alone, and nothing is allocated or launched on ``cuda:0``.
* NCCL determinism: two processes, one GPU each, run the example decode layer on identical seeded inputs and
  all-gather their top-k indices; the index sets must be identical on both ranks (ties at the K-th value included)
  and exact (``tests/gpu/nccl_determinism.py``).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gvr_topk
from gvr_topk.testing import check_exact

pytestmark = [pytest.mark.gvr_topk,
              pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs at least 2 CUDA GPUs")]

REPO = Path(__file__).resolve().parents[5]
PKG_ROOT = str(Path(gvr_topk.__file__).resolve().parents[1])


def _gvr_kernel_devices(prof):
    """Device indices of the GPU kernels the profiler saw whose names are the package's (``_gvr*``)."""
    devs = set()
    for evt in prof.events():
        name = getattr(evt, "name", "") or ""
        dev_type = getattr(evt, "device_type", None)
        if "gvr" in name and dev_type is not None and "CUDA" in str(dev_type):
            devs.add(evt.device_index)
    return devs


@pytest.mark.parametrize("family", [None, "reg", "stream", "split"])
@pytest.mark.parametrize("hinted", [False, True])
def test_tensors_on_cuda1_while_current_is_cuda0(family, hinted):
    torch.cuda.set_device(0)
    d1 = torch.device("cuda:1")
    rows, next_n, k = 6, 2, 512
    n = 12000 if family == "reg" else 60000
    g = torch.Generator(device=d1).manual_seed(1)
    x = torch.randn(rows, n, generator=g, device=d1)
    x[1::2, : n // 3] = torch.randint(0, 3, (rows // 2, n // 3), generator=g, device=d1).float()  # ties
    kv = torch.tensor([n, k + 1, 5000], dtype=torch.int32, device=d1)
    hint = None
    if hinted:
        hint = torch.randint(-1, n, (rows // next_n, k), generator=g, device=d1, dtype=torch.int32)
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    mem0 = torch.cuda.memory_allocated(0)
    reserved0 = torch.cuda.memory_reserved(0)
    results = []
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as prof:
        idx = torch.empty(rows, k, dtype=torch.int32, device=d1)
        val = torch.empty(rows, k, device=d1)
        gvr_topk.run_varlen(x, hint, kv, idx, next_n=next_n, values=val, family=family)
        results.append(("run_varlen", idx, val, kv, next_n, None))
        idx2 = torch.empty(rows, k, dtype=torch.int32, device=d1)
        gvr_topk.run_varlen(x, hint, kv, idx2, next_n=next_n, max_seq_len=n, family=family)
        results.append(("run_varlen max_seq_len", idx2, None, kv, next_n, None))
        idx3 = torch.empty(rows, k, dtype=torch.int32, device=d1)
        hint_rows = hint.repeat_interleave(next_n, 0) if hinted else None
        gvr_topk.run(x, hint_rows, 7000, idx3, family=family)
        results.append(("run", idx3, None, None, 1, 7000))
        if family is None:
            i4, v4 = gvr_topk.topk(x, k, kv_lens=kv, pre_idx=hint, next_n=next_n, return_values=True)
            results.append(("topk", i4, v4, kv, next_n, None))
            i5 = torch.empty(rows, k, dtype=torch.int32, device=d1)
            torch.ops.gvr.topk_varlen(x, hint, kv, i5, None, next_n, 1, n)
            results.append(("torch.ops.gvr.topk_varlen", i5, None, kv, next_n, None))
        torch.cuda.synchronize(1)
    assert torch.cuda.current_device() == 0, "the op changed the current device"
    torch.cuda.synchronize(0)
    assert torch.cuda.memory_allocated(0) == mem0, "memory was allocated on cuda:0"
    assert torch.cuda.memory_reserved(0) == reserved0, "memory was reserved on cuda:0"
    for what, i, v, kvl, nn, nv in results:
        assert i.device == d1
        problems = check_exact(x, i, kv_lens=kvl, next_n=nn, n_valid=nv, values=v)
        assert not problems, f"{what}: {problems}"
    devs = _gvr_kernel_devices(prof)
    if devs:  # the profiler saw the kernels: every one ran on cuda:1
        assert devs == {1}, f"gvr kernels ran on devices {devs}"
    if family in ("stream", "split"):
        # The library-owned workspace these calls used was created on cuda:1.
        from gvr_topk import workspace as ws_mod
        defaults = getattr(ws_mod, "_DEFAULT", None)
        if isinstance(defaults, dict):
            assert d1 in {t.device for t in defaults.values() if isinstance(t, torch.Tensor)}


@pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_nccl_available(),
                    reason="needs torch.distributed with NCCL")
def test_nccl_ranks_choose_identical_index_sets():
    """Two ranks (one GPU each) run the example decode layer and tie-heavy calls on identical inputs; the
    all-gathered index sets must be identical on every rank and exact (``tests/gpu/nccl_determinism.py``)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PKG_ROOT, os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, str(REPO / "tests" / "gpu" / "nccl_determinism.py")], env=env,
                       capture_output=True, text=True, timeout=int(os.environ.get("GVR_NCCL_TIMEOUT", "600")))
    out = p.stdout + p.stderr
    print(out[-3000:])
    assert p.returncode == 0, out[-4000:]
    assert "NCCL-DETERMINISM OK" in out, out[-4000:]
