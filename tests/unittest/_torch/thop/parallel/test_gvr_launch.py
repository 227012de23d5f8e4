"""The streaming family's composite launch: each of its three kernels gets its own grid, warps and launch options.

Recorded on stand-in kernels with the real kernels' parameter names, so it runs without a GPU or the interpreter.
"""

import inspect

import pytest
import torch

from gvr_topk import dispatch
from gvr_topk import tuning
from gvr_topk.kernels import _common
from gvr_topk.kernels import stream as kernels
from gvr_topk.launch import cache
from gvr_topk.launch import stream as stream_launch

pytestmark = pytest.mark.gvr_topk


class _StandIn:
    """Takes ``kernel[grid](**kwargs)`` like a ``@triton.jit`` kernel and records the launch."""

    def __init__(self, real, calls):
        def fn():
            raise NotImplementedError

        fn.__signature__ = inspect.signature(real.fn)
        self.fn = fn
        self.name = real.fn.__name__
        self.calls = calls

    def __getitem__(self, grid):
        return lambda **kwargs: self.calls.append((self.name, grid, kwargs))


def _launch(rows, n, k, pdl=False):
    calls = []
    launch = stream_launch.StreamLaunch(*(_StandIn(kern, calls) for kern in (
        kernels._gvr_threshold_kernel, kernels._gvr_stage_kernel, kernels._gvr_select_kernel)))
    plan = dispatch.plan_for("stream", rows, n, n, k)
    launch.run(**(stream_launch.family_kwargs(plan, rows) | dict(PDL=pdl)))
    return plan, calls


@pytest.mark.parametrize("rows", [64, 300, 512, 1100])
def test_each_kernel_gets_its_own_geometry(rows):
    plan, calls = _launch(rows, 131075, 2048)
    chunk = tuning.STREAM_CHUNK_ROWS
    starts = list(range(0, rows, chunk))
    # The select's ladder launch (``tuning.STREAM_SELECT_APART``) is checked on its own below.
    per = 4 if tuning.STREAM_SELECT_APART else 3
    assert [name for name, _, _ in calls] == (["_gvr_threshold_kernel", "_gvr_stage_kernel", "_gvr_select_kernel",
                                               "_gvr_select_kernel"][:per]) * len(starts)
    for i, row0 in enumerate(starts):
        m = min(chunk, rows - row0)
        (_, g_thr, a_thr), (_, g_stage, a_stage), (_, g_select, a_select) = calls[per * i:per * i + 3]
        assert g_thr == (m,) and g_stage == (plan.split, m) and g_select == (m,)
        assert a_thr["row0"] == a_stage["row0"] == a_select["row0"] == row0
        assert a_thr["num_warps"] == tuning.THRESHOLD_WARPS
        assert a_stage["num_warps"] == tuning.STREAM_WARPS and a_stage["TILE"] == tuning.STREAM_TILE
        # One score per thread across a tile row: the staging tile is [TILE / LANES, LANES].
        assert a_stage["LANES"] == 32 * tuning.STREAM_WARPS
        # The select's fallback passes stream their own tile, not the one-warp staging tile.
        assert a_select["REFINE_TILE"] == tuning.REFINE_TILE and "TILE" not in a_select
        assert a_select["REFINE_LANES"] == min(tuning.REFINE_TILE, 32 * a_select["num_warps"])
        assert "maxnreg" not in a_thr
        assert a_stage.get("maxnreg", 0) == tuning.STREAM_STAGE_MAXNREG
        # Past one wave of select programs (more rows in the chunk than SMs): two capped programs per SM.
        if min(rows, chunk) > tuning.DEFAULT_NUM_SMS:
            assert a_select["num_warps"] == tuning.SELECT_MANY_WARPS
            assert a_select["maxnreg"] == tuning.SELECT_MANY_MAXNREG
        else:
            assert a_select["num_warps"] == tuning.SELECT_WARPS and "maxnreg" not in a_select


def test_only_kernel_arguments_reach_each_kernel():
    _, calls = _launch(512, 65536, 512)
    for name, _, kwargs in calls:
        real = getattr(kernels, name)
        allowed = set(inspect.signature(real.fn).parameters) | {"num_warps", "maxnreg", "launch_pdl"}
        assert set(kwargs) <= allowed, (name, set(kwargs) - allowed)


def test_programs_per_row_compile_no_new_variant():
    # The batch sets the programs per row (``plan.split``). It is a runtime argument of the stage and select kernels
    # that Triton does not specialise (not even on divisibility by 16), so batches that differ only in it share one
    # compiled variant of each; as a constexpr it compiled one per batch size (16 stage and 64 select variants in a
    # DeepSeek-V3.2 warm-up over 67 CUDA-graph batch sizes, NOTES entry 36).
    groups = {(64, 80, 100, 128): 16, (200, 300, 512): 8}  # select warps: one program per SM up to 132 rows
    splits, stage_keys = set(), set()
    for rows_group, select_warps in groups.items():
        select_keys = set()
        for rows in rows_group:
            plan, calls = _launch(rows, 131075, 2048)
            assert plan.select_warps == select_warps
            splits.add(plan.split)
            by_name = {name: kwargs for name, _, kwargs in calls[:3]}
            stage, select = by_name["_gvr_stage_kernel"], by_name["_gvr_select_kernel"]
            assert stage["split"] == select["split"] == plan.split
            stage_keys.add(cache.static_key(kernels._gvr_stage_kernel, "cuda:0", stage, {}))
            select_keys.add(cache.static_key(kernels._gvr_select_kernel, "cuda:0", select, {}))
        assert len(select_keys) == 1, rows_group
    assert len(splits) == 7 and {16, 32} <= splits and len(stage_keys) == 1
    for kern in (kernels._gvr_stage_kernel, kernels._gvr_select_kernel):
        assert not {"split", "SPLIT"} & cache.constexpr_names(kern)
    # Where a kernel does specialise an int, the key still tells a multiple of 16 from other values.
    select = dict(by_name["_gvr_select_kernel"])
    assert (cache.static_key(kernels._gvr_select_kernel, "cuda:0", dict(select, aim=3072), {})
            != cache.static_key(kernels._gvr_select_kernel, "cuda:0", dict(select, aim=3071), {}))


def test_accept_launch_compiles_one_variant_for_both_hint_modes():
    # Only the ladder launch reads the hint; the accept launch of a hinted call is the hint-free variant.
    for hint_free in (True, False):
        calls = []
        launch = stream_launch.StreamLaunch(*(_StandIn(kern, calls) for kern in (
            kernels._gvr_threshold_kernel, kernels._gvr_stage_kernel, kernels._gvr_select_kernel)))
        plan = dispatch.plan_for("stream", 64, 131075, 131075, 2048)
        launch.run(**(stream_launch.family_kwargs(plan, 64) | dict(HINT_FREE=hint_free)))
        selects = [kwargs for name, _, kwargs in calls if name == "_gvr_select_kernel"]
        if tuning.STREAM_SELECT_APART:
            assert [a["SELECT_PART"] for a in selects] == [tuning.STREAM_SELECT_APART, 1]
            assert [a["HINT_FREE"] for a in selects] == [True, hint_free]
        else:
            assert [a["HINT_FREE"] for a in selects] == [hint_free]


@pytest.mark.parametrize("apart", [2, 3])
def test_select_apart_adds_a_ladder_launch(apart, monkeypatch):
    """``tuning.STREAM_SELECT_APART``: per chunk the select kernel is launched twice, first as the accept launch
    (SELECT_PART = the setting, the plan's warps and register cap), then as the ladder launch (SELECT_PART 1,
    SELECT_WARPS uncapped, the refine lanes to match), on the same rows; off, one launch with SELECT_PART 0."""
    plan = dispatch.plan_for("stream", 600, 131075, 131075, 2048)
    monkeypatch.setattr(tuning, "STREAM_SELECT_APART", 0)
    assert stream_launch.family_kwargs(plan, 600)["SELECT_PART"] == 0
    _, calls = _launch(600, 131075, 2048)
    assert [name for name, _, _ in calls].count("_gvr_select_kernel") == 2  # one per chunk
    monkeypatch.setattr(tuning, "STREAM_SELECT_APART", apart)
    _, calls = _launch(600, 131075, 2048, pdl=True)
    assert [name for name, _, _ in calls] == ["_gvr_threshold_kernel", "_gvr_stage_kernel", "_gvr_select_kernel",
                                              "_gvr_select_kernel"] * 2
    for i in (0, 4):
        (_, g_acc, a_acc), (_, g_lad, a_lad) = calls[i + 2:i + 4]
        assert (a_acc["SELECT_PART"], a_lad["SELECT_PART"]) == (apart, 1)
        assert g_acc == g_lad and a_acc["row0"] == a_lad["row0"]
        assert a_acc["num_warps"] == tuning.SELECT_MANY_WARPS and a_acc["maxnreg"] == tuning.SELECT_MANY_MAXNREG
        assert a_lad["num_warps"] == tuning.SELECT_WARPS and "maxnreg" not in a_lad
        assert a_lad["REFINE_LANES"] == min(tuning.REFINE_TILE, 32 * tuning.SELECT_WARPS)
        assert a_lad["launch_pdl"] is True
        # HINT_FREE: the accept launch is always the hint-free variant (test_accept_launch_compiles_one_variant_...).
        differ = {"SELECT_PART", "num_warps", "maxnreg", "REFINE_LANES", "HINT_FREE"}
        assert {k: v for k, v in a_acc.items() if k not in differ} == \
            {k: v for k, v in a_lad.items() if k not in differ}


@pytest.mark.parametrize("name,value", [("STREAM_SELECT_APART", 1), ("STREAM_SELECT_APART", 4),
                                        ("STREAM_STAGE_SPARSE", 4), ("STREAM_ROW_WAIT", 2),
                                        ("STREAM_ACCEPT_LARGE_BIN", 2)])
def test_stream_kernel_settings_outside_their_modes_are_refused(name, value, monkeypatch):
    """A streaming setting outside its modes is named in the error (SELECT_PART 1 is the ladder launch's own mode:
    as the setting, no row would be selected)."""
    monkeypatch.setattr(tuning, name, value)
    plan = dispatch.plan_for("stream", 512, 131075, 131075, 2048)
    with pytest.raises(ValueError, match=f"tuning.{name}: expected .* got {value}"):
        stream_launch.family_kwargs(plan, 512)


@pytest.mark.parametrize("n,sparse", [(131075, True), (65536, True), (32768, False), (16387, False)])
def test_survivors_only_staging_on_long_rows(n, sparse, monkeypatch):
    """``tuning.STREAM_STAGE_SPARSE`` reaches the stage kernel only for rows staged on the long tile; shorter rows,
    whose tiles admit a larger share of their scores, keep the dense staging."""
    monkeypatch.setattr(tuning, "STREAM_STAGE_SPARSE", 2)
    plan = dispatch.plan_for("stream", 512, n, n, 2048)
    assert (plan.block == tuning.STREAM_TILE) is sparse
    assert stream_launch.family_kwargs(plan, 512)["STAGE_SPARSE"] == (2 if sparse else 0)


@pytest.mark.parametrize("pdl", [False, True])
def test_programmatic_dependent_launch(pdl):
    """With PDL, the stage and select kernels (which wait for the grid before them at their start) are launched as
    programmatic dependents; the threshold kernel, the first of a chunk, is ordered after whatever came before it
    (the previous chunk's select included) as any launch is. Every kernel sees the same PDL constexpr."""
    _, calls = _launch(tuning.STREAM_CHUNK_ROWS + 88, 131075, 2048, pdl=pdl)
    assert len(calls) == 2 * (4 if tuning.STREAM_SELECT_APART else 3)  # two chunks
    for name, _, kwargs in calls:
        assert kwargs["PDL"] is pdl
        if name == "_gvr_threshold_kernel" or not pdl:
            assert "launch_pdl" not in kwargs
        else:
            assert kwargs["launch_pdl"] is True


def test_pdl_only_where_kernels_are_compiled_for_hopper(monkeypatch):
    """No programmatic dependent launch without a device, on the CPU, under the interpreter, with a Triton that lacks
    grid dependency control, or when tuning turns it off; the launch arguments name it either way (a constexpr of
    all three kernels)."""
    plan = dispatch.plan_for("stream", 64, 131075, 131075, 2048)
    assert stream_launch.family_kwargs(plan, 64)["PDL"] is False
    assert stream_launch.family_kwargs(plan, 64, torch.device("cpu"))["PDL"] is False
    monkeypatch.setattr(tuning, "STREAM_PDL", False)
    assert stream_launch.pdl_supported(torch.device("cuda", 0)) is False
    monkeypatch.setattr(tuning, "STREAM_PDL", True)
    monkeypatch.setattr(_common, "HAS_GDC", False)  # a Triton without grid dependency control
    assert stream_launch.pdl_supported(torch.device("cuda", 0)) is False
    monkeypatch.setattr(_common, "HAS_GDC", True)
    import gvr_topk.api

    monkeypatch.setattr(gvr_topk.api, "kernels_interpreted", lambda: True)
    assert stream_launch.pdl_supported(torch.device("cuda", 0)) is False


_NO_GDC = """
import sys, types
import triton, triton.language
sys.modules["triton.language.extra.cuda"] = types.ModuleType("triton.language.extra.cuda")  # no gdc_* functions
import torch, gvr_topk, gvr_topk.testing
from gvr_topk.kernels import _common
from gvr_topk.launch import stream
assert not _common.HAS_GDC and not stream.pdl_supported(torch.device("cuda", 0))
dev = "cuda" if torch.cuda.is_available() else "cpu"
assert dev == "cuda" or gvr_topk.kernels_interpreted()  # the kernels run, not the CPU reference
x = torch.randn(3, 20000, device=dev)
idx = torch.empty(3, 512, dtype=torch.int32, device=dev)
kv = torch.full((3,), 20000, dtype=torch.int32, device=dev)
gvr_topk.run_varlen(x, None, kv, idx, family="stream", max_seq_len=20000)
assert gvr_topk.testing.check_exact(x, idx, kv_lens=kv) == []
print("NO-GDC OK")
"""


def test_streaming_family_runs_on_a_triton_without_grid_dependency_control():
    """A Triton without ``gdc_wait`` / ``gdc_launch_dependents`` (older than 3.3, which ``triton>=3.2`` allows):
    the package imports, PDL stays off, and the streaming family is exact (no-op stand-ins keep its kernels
    parseable)."""
    import os
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _NO_GDC], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ))
    assert "NO-GDC OK" in out.stdout, out.stdout + out.stderr
