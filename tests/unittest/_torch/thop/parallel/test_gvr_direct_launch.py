"""Direct launches of compiled kernels (``gvr_topk/launch/direct.py``).

CPU: when a direct launch is built and when the regular path must stay, and the exact argument list a direct launch
hands the compiled kernel's launcher (a recording stand-in for Triton's launcher, checked against the prepared
launch's own arguments by name). GPU: the hot path switches to direct launches after its first call and stays exact
when the tensors behind the pointers change, with the library workspace and with a caller workspace.
"""

import inspect

import pytest
import torch

import gvr_topk
from gvr_topk import api
from gvr_topk import tuning
from gvr_topk.launch import direct
from gvr_topk.launch.common import POINTER_ARGS
from gvr_topk.testing import check_exact

pytestmark = pytest.mark.gvr_topk
DEV = "cuda" if torch.cuda.is_available() else "cpu"
gpu_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


class _Compiled:
    """Stands in for a ``CompiledKernel``: a launcher that records what it is called with."""

    def __init__(self):
        self.calls = []
        self.function = object()
        self.packed_metadata = object()

    def run(self, *args):
        self.calls.append(args)


def _entry(rows=2, n=20000, k=64, family="split"):
    """A prepared launch of ``family`` (one call through the regular path, the interpreter on CPU)."""
    api.clear_launch_cache()
    x = torch.randn(rows, n, device=DEV)
    kv = torch.full((rows,), n, dtype=torch.int32, device=DEV)
    idx = torch.empty(rows, k, dtype=torch.int32, device=DEV)
    gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, family=family)
    (prep,) = api._PREPARED.values()
    return prep.entry


def _names(kernel):
    return list(inspect.signature(getattr(kernel, "fn", kernel)).parameters)


def test_direct_launch_passes_every_argument_in_signature_order():
    entry = _entry(n=4000, family="reg")  # one kernel behind the entry (the split family launches a composite)
    fake = _Compiled()
    ptr_names = POINTER_ARGS + entry.ws_args
    d = direct.build(fake, entry.kernel, entry.grid, entry.scalars, ptr_names)
    if not direct.MIN_TRITON <= direct.triton_version() <= direct.MAX_TRITON:
        assert d is None
        return
    assert d is not None
    ptrs = tuple(4096 * (i + 1) for i in range(len(ptr_names)))
    d(1234, *ptrs)
    (args,) = fake.calls
    grid = tuple(entry.grid) + (1,) * (3 - len(entry.grid))
    assert args[:9] == grid + (1234, fake.function, fake.packed_metadata, None, None, None)
    by_name = dict(zip(_names(entry.kernel), args[9:]))
    assert len(args) - 9 == len(_names(entry.kernel))
    assert {n: by_name[n] for n in ptr_names} == dict(zip(ptr_names, ptrs))
    assert {n: v for n, v in by_name.items() if n not in ptr_names} == {
        n: entry.scalars[n] for n in _names(entry.kernel) if n not in ptr_names}


class _RecordingKernel:
    """Stands in for a ``@triton.jit`` kernel: same parameters, ``kernel[grid](**kwargs)`` records the regular
    launch and returns a :class:`_Compiled`."""

    def __init__(self, real):
        self.fn = real.fn
        self.compiled = _Compiled()
        self.regular = []

    def __getitem__(self, grid):
        def launch(**kwargs):
            self.regular.append((grid, kwargs))
            return self.compiled

        return launch


def test_streaming_family_direct_launches_make_the_regular_launches(monkeypatch):
    """The streaming family's kernels per chunk go direct as one sequence: the same kernels in the same order
    and grids, each handed its own pointers (picked from the call's by name) and exactly the arguments its regular
    launch took. Two chunks of rows, so ``row0`` differs between launches of one kernel."""
    from gvr_topk.launch import stream as stream_launch

    monkeypatch.setattr(tuning, "STREAM_CHUNK_ROWS", 2)
    entry = _entry(rows=3, family="stream")
    monkeypatch.setattr(direct, "triton_version", lambda: (3, 6))
    monkeypatch.setattr(direct, "hooks_installed", lambda: False)
    kernels = [_RecordingKernel(k) for k in entry.kernel.kernels]
    launch = stream_launch.StreamLaunch(*kernels)
    ptr_names = POINTER_ARGS + entry.ws_args
    ptrs = tuple(4096 * (i + 1) for i in range(len(ptr_names)))
    composite = launch.run(**dict(zip(ptr_names, ptrs)), **entry.scalars, grid=entry.grid, warmup=False)
    d = direct.build(composite, launch, entry.grid, entry.scalars, ptr_names)
    # 2 chunks x (threshold, stage, select, and the select's ladder launch when ``tuning.STREAM_SELECT_APART``)
    selects = 2 if tuning.STREAM_SELECT_APART else 1
    assert isinstance(d, direct.DirectSequence) and len(d.parts) == 2 * (2 + selects)
    d(1234, *ptrs)
    for kernel, launches in zip(kernels, (2, 2, 2 * selects)):
        assert len(kernel.regular) == launches and len(kernel.compiled.calls) == launches
        for (grid, kwargs), args in zip(kernel.regular, kernel.compiled.calls):
            assert args[:9] == tuple(grid) + (1,) * (3 - len(grid)) + (
                1234, kernel.compiled.function, kernel.compiled.packed_metadata, None, None, None)
            names = _names(kernel)
            assert dict(zip(names, args[9:])) == {n: kwargs[n] for n in names} and len(args) - 9 == len(names)
    assert [k.regular[-1][1]["row0"] for k in kernels] == [2, 2, 2]
    # One launch that must stay regular keeps the whole sequence regular.
    kernels[1].compiled = None
    assert direct.build(launch.run(**dict(zip(ptr_names, ptrs)), **entry.scalars, grid=entry.grid, warmup=False),
                        launch, entry.grid, entry.scalars, ptr_names) is None


@pytest.mark.parametrize("mode", ["plain", "fused", "phased"])
def test_split_family_direct_launches_make_the_regular_launches(monkeypatch, mode):
    """The split family's launches go direct as one sequence in each of its modes: the plain kernel once, the
    cooperative kernel once (a cooperative launch) or three times (PHASE 1, 2, 3), each with its own pointers and
    exactly the arguments of its regular launch."""
    from gvr_topk.launch import split as split_launch

    entry = _entry(rows=2, n=20000, k=2048, family="split")
    assert entry.plan.coop
    monkeypatch.setattr(direct, "triton_version", lambda: (3, 6))
    monkeypatch.setattr(direct, "hooks_installed", lambda: False)
    plain, coop = (_RecordingKernel(k) for k in entry.kernel.kernels)
    launch = split_launch.SplitLaunch(plain, coop)
    code = {"plain": split_launch.PLAIN, "fused": split_launch.FUSED, "phased": split_launch.PHASED}[mode]
    scalars = dict(entry.scalars, COOP=code)
    ptr_names = POINTER_ARGS + entry.ws_args
    ptrs = tuple(4096 * (i + 1) for i in range(len(ptr_names)))
    composite = launch.run(**dict(zip(ptr_names, ptrs)), **scalars, grid=entry.grid, warmup=False)
    d = direct.build(composite, launch, entry.grid, scalars, ptr_names)
    used = plain if mode == "plain" else coop
    idle = coop if mode == "plain" else plain
    phased = [1, 2, 3]
    assert isinstance(d, direct.DirectSequence) and len(d.parts) == (len(phased) if mode == "phased" else 1)
    assert not idle.regular
    d(1234, *ptrs)
    assert len(used.regular) == len(used.compiled.calls) == len(d.parts)
    names = _names(used)
    for (grid, kwargs), args in zip(used.regular, used.compiled.calls):
        assert grid == entry.grid
        assert args[:9] == tuple(grid) + (1,) * (3 - len(grid)) + (
            1234, used.compiled.function, used.compiled.packed_metadata, None, None, None)
        assert dict(zip(names, args[9:])) == {n: kwargs[n] for n in names} and len(args) - 9 == len(names)
        assert kwargs.get("launch_cooperative_grid", False) is (mode == "fused")
    if mode != "plain":
        assert [kw["PHASE"] for _, kw in used.regular] == ([0] if mode == "fused" else phased)
        assert dict(zip(names, used.compiled.calls[0][9:]))["ws_coop_ptr"] == ptrs[ptr_names.index("ws_coop_ptr")]


def test_regular_path_stays_where_a_direct_launch_is_not_the_same_launch(monkeypatch):
    entry = _entry(n=4000, family="reg")
    ptr_names = POINTER_ARGS + entry.ws_args
    args = (entry.kernel, entry.grid, entry.scalars, ptr_names)
    assert direct.build(None, *args) is None  # the interpreter returns no compiled kernel

    class NoLauncher:
        function = packed_metadata = object()

    assert direct.build(NoLauncher(), *args) is None
    # Pointers not first in this order, or a kernel argument the prepared launch does not fix.
    assert direct.build(_Compiled(), entry.kernel, entry.grid, entry.scalars, ptr_names[::-1]) is None
    short = dict(entry.scalars)
    short.pop("K")
    assert direct.build(_Compiled(), entry.kernel, entry.grid, short, ptr_names) is None
    assert direct.build(_Compiled(), entry.kernel, (1, 1, 1, 1), entry.scalars, ptr_names) is None
    # Another Triton's launcher may take other arguments; a launch hook means someone watches every launch.
    for version in ((3, 2), (3, 5), (3, 10), (4, 0)):
        monkeypatch.setattr(direct, "triton_version", lambda v=version: v)
        assert direct.build(_Compiled(), *args) is None, version
    monkeypatch.setattr(direct, "triton_version", lambda: (3, 6))
    monkeypatch.setattr(direct, "hooks_installed", lambda: True)
    assert direct.build(_Compiled(), *args) is None
    monkeypatch.setattr(direct, "hooks_installed", lambda: False)
    assert direct.build(_Compiled(), *args) is not None
    monkeypatch.setattr(direct, "ENABLED", False)  # GVR_TOPK_DIRECT_LAUNCH=0
    assert direct.build(_Compiled(), *args) is None


@pytest.mark.parametrize("caller_ws", [False, True], ids=["library_ws", "caller_ws"])
def test_hot_path_hands_a_direct_launch_this_calls_pointers(caller_ws):
    """Once a prepared launch holds a direct launch, a hot call hands it the current stream and, in signature order,
    this call's tensor addresses and the workspace views' addresses; nothing goes through the regular path. (On the
    CPU no direct launch is built, so a recorder stands in for one.)"""
    rows, n, k = 2, 20000, 64
    api.clear_launch_cache()
    x = torch.randn(rows, n, device=DEV)
    kv = torch.full((rows,), n, dtype=torch.int32, device=DEV)
    idx = torch.empty(rows, k, dtype=torch.int32, device=DEV)
    wsb = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV) if caller_ws else None
    gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, family="split", workspace=wsb)  # prepares, warms
    (prep,) = api._PREPARED.values()
    entry = prep.entry
    assert entry.hot
    calls = []
    entry.direct = lambda stream, *ptrs: calls.append((stream, ptrs))
    gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, family="split", workspace=wsb)
    ((stream, ptrs),) = calls
    want_stream = torch.cuda.current_stream().cuda_stream if DEV == "cuda" else 0
    assert stream == want_stream
    from gvr_topk import workspace as wsm

    # The library workspace of this device and stream: the one the first call made (same buffer, no regrowth).
    base = (wsb if caller_ws else wsm.default_workspace(x.device, entry.ws_nbytes)).data_ptr()
    ws_ptrs = tuple(base + o for o in entry.ws_offsets)
    # No values and no hint: their pointer arguments carry the indices' address (never read).
    assert ptrs == (idx.data_ptr(), idx.data_ptr(), x.data_ptr(), idx.data_ptr(), kv.data_ptr()) + ws_ptrs


def test_launch_hooks_are_told_apart_from_empty_hook_chains(monkeypatch):
    from triton import knobs

    class Chain:  # newer Triton: a chain of hooks, empty when none is set
        def __init__(self, calls):
            self.calls = calls

    for enter, exit_, want in ((None, None, False), (Chain([]), Chain([]), False), (Chain([print]), None, True),
                               (None, Chain([print]), True), (print, None, True)):
        monkeypatch.setattr(knobs.runtime, "launch_enter_hook", enter, raising=False)
        monkeypatch.setattr(knobs.runtime, "launch_exit_hook", exit_, raising=False)
        assert direct.hooks_installed() is want, (enter, exit_)


def test_triton_version_parses_release_and_dev_strings(monkeypatch):
    import triton

    for text, want in (("3.6.0", (3, 6)), ("3.9.0+git1234", (3, 9)), ("3.10.0rc1", (3, 10)), ("4.0", (4, 0))):
        monkeypatch.setattr(triton, "__version__", text)
        assert direct.triton_version() == want


@gpu_only
@pytest.mark.parametrize("caller_ws", [False, True], ids=["library_ws", "caller_ws"])
@pytest.mark.parametrize("rows,n,k", [(1, 131075, 2048), (4, 16387, 512), (8, 4111, 2048), (96, 16387, 512)])
def test_hot_path_goes_direct_and_stays_exact(rows, n, k, caller_ws):
    """From the second hot call on, launches go direct (split, register and streaming families); every call is
    exact on new data in the same buffers and on other buffers of the same signature."""
    api.clear_launch_cache()
    g = torch.Generator(device=DEV).manual_seed(rows * n + k)
    x = torch.randn(rows, n, device=DEV, generator=g)
    kv = torch.full((rows,), n, dtype=torch.int32, device=DEV)
    idx = torch.empty(rows, k, dtype=torch.int32, device=DEV)
    wsb = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV) if caller_ws else None
    for step in range(4):
        x.copy_(torch.randn(rows, n, device=DEV, generator=g))
        idx.fill_(-7)
        gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, workspace=wsb)
        torch.cuda.synchronize()
        assert not check_exact(x, idx, kv_lens=kv), step
    (prep,) = api._PREPARED.values()
    assert prep.entry.direct is not None, prep.entry.plan
    x2, idx2 = torch.randn(rows, n, device=DEV, generator=g), torch.full((rows, k), -7, dtype=torch.int32, device=DEV)
    gvr_topk.run_varlen(x2, None, kv, idx2, max_seq_len=n, workspace=wsb)
    torch.cuda.synchronize()
    assert not check_exact(x2, idx2, kv_lens=kv)


@gpu_only
def test_streaming_family_launches_stage_and_select_as_programmatic_dependents():
    """On Hopper and later (with a Triton that has grid dependency control) the streaming family's stage and select
    launches (the select's ladder launch included) carry programmatic dependent launch and its threshold launch does
    not; elsewhere none does. The output is exact either way, through the regular and the direct path."""
    from gvr_topk import tuning
    from gvr_topk.kernels import _common

    api.clear_launch_cache()
    rows, n, k = 96, 16387, 512
    g = torch.Generator(device=DEV).manual_seed(17)
    kv = torch.full((rows,), n, dtype=torch.int32, device=DEV)
    idx = torch.empty(rows, k, dtype=torch.int32, device=DEV)
    for step in range(3):
        x = torch.randn(rows, n, device=DEV, generator=g)
        idx.fill_(-7)
        gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n)
        torch.cuda.synchronize()
        assert not check_exact(x, idx, kv_lens=kv), step
    (prep,) = api._PREPARED.values()
    assert prep.entry.plan.family == "stream"
    want = tuning.STREAM_PDL and _common.HAS_GDC and torch.cuda.get_device_capability()[0] >= 9
    assert prep.entry.scalars["PDL"] is want
    if prep.entry.direct is not None:
        # Triton 3.6-3.9 keep the compiled option on the launcher object.
        flags = [getattr(part.launcher, "launch_pdl", None) for part in prep.entry.direct.parts]
        if None not in flags:
            # threshold, stage, select, and the select's ladder launch when the select runs apart (SELECT_PART).
            parts = 4 if prep.entry.scalars["SELECT_PART"] else 3
            assert [bool(f) for f in flags] == [False] + [want] * (parts - 1)
