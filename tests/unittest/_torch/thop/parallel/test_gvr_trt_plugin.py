"""The TensorRT plugin module ``gvr_topk_plugin`` (``plugin/``), without TensorRT.

CPU: the plugin's rules (attributes, shapes, dtypes, tactics), the ahead-of-time configuration and argument order,
PTX generation for sm_90 (entry name, exactly the declared parameters, assembles with ptxas), packaging, and that
the core package never imports TensorRT or the plugin.

GPU (skipped elsewhere): the PTX the plugin's ``aot_impl`` returns is loaded through the CUDA driver and launched
the way TensorRT launches it (grid, block, shared memory, argument order from the plugin), and the JIT body runs on
an external stream; both are checked for exactness against ``torch.topk``.
"""

import ctypes
import os
import pathlib
import re
import subprocess
import sys
import zlib

import numpy as np
import pytest
import torch

import gvr_topk
import gvr_topk_plugin
from gvr_topk import tuning
from gvr_topk.testing import check_exact
from gvr_topk_plugin import aot
from gvr_topk_plugin import jit
from gvr_topk_plugin import spec

pytestmark = pytest.mark.gvr_topk

REPO = pathlib.Path(__file__).resolve().parents[5]
ON_GPU = torch.cuda.is_available()


def _attrs(k=512, next_n=1, compress_ratio=1, max_seq_len=4096, hint_free=1):
    return spec.validate_attrs(k, next_n, compress_ratio, max_seq_len, hint_free)


# ---------------------------------------------------------------------------------------------------------------
# Import boundaries and packaging
# ---------------------------------------------------------------------------------------------------------------


def _fresh_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=False)


def test_core_never_imports_plugin_or_tensorrt():
    code = ("import sys, gvr_topk; bad = [m for m in sys.modules if m.split('.')[0] in ('tensorrt', "
            "'gvr_topk_plugin')]; print(bad); sys.exit(1 if bad else 0)")
    r = _fresh_python(code)
    assert r.returncode == 0, r.stdout + r.stderr
    core = REPO / "gvr_topk"
    offenders = [str(p.relative_to(REPO)) for p in core.rglob("*.py")
                 if re.search(r"^\s*(import|from)\s+(tensorrt|gvr_topk_plugin)\b", p.read_text(), re.M)]
    assert offenders == [], f"core modules importing TensorRT or the plugin: {offenders}"


def test_plugin_imports_without_tensorrt():
    code = "import sys, gvr_topk_plugin; sys.exit(1 if 'tensorrt' in sys.modules else 0)"
    r = _fresh_python(code)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.skipif(gvr_topk_plugin.trt_available(), reason="TensorRT is installed here")
def test_register_without_tensorrt_says_what_is_missing():
    with pytest.raises(ImportError, match=r"TensorRT.*NVIDIA's package index"):
        gvr_topk_plugin.register()


def test_pyproject_lists_every_tracked_package():
    tomllib = pytest.importorskip("tomllib")
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert cfg["package-dir"]["gvr_topk_plugin"] == "plugin"
    listed = set(cfg["packages"])
    # Tracked files only: what a clean checkout (CI, a wheel build) sees, not others' work in progress.
    r = subprocess.run(["git", "ls-files", "gvr_topk", "plugin"], cwd=REPO, capture_output=True, text=True)
    files = r.stdout.split() if r.returncode == 0 and r.stdout else [
        str(p.relative_to(REPO)) for d in ("gvr_topk", "plugin") for p in (REPO / d).rglob("__init__.py")]
    found = {str(pathlib.PurePath(f).parent).replace("/", ".").replace("plugin", "gvr_topk_plugin", 1)
             if f.startswith("plugin/") else str(pathlib.PurePath(f).parent).replace("/", ".")
             for f in files if f.endswith("/__init__.py")}
    assert found <= listed, f"packages missing from pyproject [tool.setuptools] packages: {sorted(found - listed)}"


def test_example_exits_cleanly_without_tensorrt():
    if gvr_topk_plugin.trt_available():
        pytest.skip("TensorRT is installed here: the example builds a real engine")
    r = subprocess.run([sys.executable, str(REPO / "examples" / "tensorrt_plugin.py")], capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "TensorRT is not installed" in r.stdout


# ---------------------------------------------------------------------------------------------------------------
# Attributes, shapes, dtypes
# ---------------------------------------------------------------------------------------------------------------


def test_validate_attrs_types_and_derived_values():
    a = spec.validate_attrs(np.int32(300), 2, 4, np.int64(10000), 0)
    assert (a.k, a.next_n, a.compress_ratio, a.max_seq_len, a.hint_free) == (300, 2, 4, 10000, False)
    assert (a.cr_shift, a.n_cap, a.kb) == (2, 2500, 512)
    assert spec.validate_attrs(1, 1, 1, 1, 1).kb == 16


@pytest.mark.parametrize("field,value,cls,expected", [
    ("k", 0, ValueError, r"\[1, 2048\]"),
    ("k", 2049, ValueError, r"\[1, 2048\]"),
    ("k", True, TypeError, "an int"),
    ("k", 8.0, TypeError, "an int"),
    ("next_n", 0, ValueError, ">= 1"),
    ("compress_ratio", 3, ValueError, "power of two"),
    ("compress_ratio", 0, ValueError, ">= 1"),
    ("max_seq_len", 0, ValueError, r"\[1, 2147483647\]"),
    ("max_seq_len", 2**31, ValueError, r"\[1, 2147483647\]"),
    ("hint_free", 2, ValueError, r"\[0, 1\]"),
])
def test_validate_attrs_names_the_attribute(field, value, cls, expected):
    kw = dict(k=16, next_n=1, compress_ratio=1, max_seq_len=100, hint_free=0)
    kw[field] = value
    with pytest.raises(cls, match=rf"gvr::topk_varlen: attribute '{field}': expected .*{expected}.*got"):
        spec.validate_attrs(**kw)


def test_output_shape_static_and_dynamic():
    a = _attrs(k=64, next_n=2, hint_free=0)
    assert spec.output_shape(a, (8, 1000), (4,), (4, 64)) == (8, 64)
    assert spec.output_shape(a, (None, 1000), (None,), (None, 64)) == (None, 64)
    assert spec.output_shape(a, (None, None), (None,), (None, None)) == (None, 64)
    # Hint-free: whatever is wired to pre_idx is never read, so its shape is not checked.
    assert spec.output_shape(_attrs(k=64, next_n=2, hint_free=1), (8, 1000), (4,), (1,)) == (8, 64)


@pytest.mark.parametrize("shapes,name,expected", [
    (((8,), (8,), (8, 64)), "logits", "2-D"),
    (((8, 0), (8,), (8, 64)), "logits", "at least one column"),
    (((8, 100), (8, 1), (8, 64)), "kv_lens", "1-D"),
    (((9, 100), (9,), (9, 64)), "logits", "divisible by next_n"),
    (((8, 100), (8,), (8, 64)), "kv_lens", "length rows / next_n"),
    (((8, 100), (4,), (4,)), "pre_idx", "2-D"),
    (((8, 100), (4,), (8, 64)), "pre_idx", "4 rows"),
    (((8, 100), (4,), (4, 65)), "pre_idx", "width k = 64"),
])
def test_output_shape_names_the_input(shapes, name, expected):
    a = _attrs(k=64, next_n=2, hint_free=0)
    with pytest.raises(ValueError, match=rf"input '{name}': expected .*{expected}.*got"):
        spec.output_shape(a, *shapes)


def test_dtypes():
    spec.check_dtypes("FP32", "INT32", "int32")
    with pytest.raises(TypeError, match=r"input 'logits': expected dtype FP32, got 'FP16'"):
        spec.check_dtypes("FP16", "INT32", "INT32")
    with pytest.raises(TypeError, match=r"input 'kv_lens': expected dtype INT32, got 'INT64'"):
        spec.check_dtypes("FP32", "INT64", "INT32")
    assert spec.autotune_io_types() == "FP32, INT32, INT32, INT32"


# ---------------------------------------------------------------------------------------------------------------
# Tactics and family choice
# ---------------------------------------------------------------------------------------------------------------


def test_tactics_offer_reg_only_where_rows_fit():
    fits = _attrs(max_seq_len=tuning.REG_MAX_N)
    long = _attrs(max_seq_len=tuning.REG_MAX_N + 1)
    all_ = [spec.TACTIC_AUTO, spec.TACTIC_REG, spec.TACTIC_STREAM, spec.TACTIC_SPLIT]
    assert spec.tactics(fits, None) == all_
    assert spec.tactics(long, None) == [spec.TACTIC_AUTO, spec.TACTIC_STREAM, spec.TACTIC_SPLIT]
    # A narrow score matrix bounds rows even when max_seq_len does not.
    assert spec.tactics(long, 8192) == all_
    # compress_ratio shrinks the rows: 4 * REG_MAX_N tokens are REG_MAX_N columns.
    assert spec.TACTIC_REG in spec.tactics(_attrs(compress_ratio=4, max_seq_len=4 * tuning.REG_MAX_N), None)
    assert 0 not in all_  # TensorRT reserves tactic 0


@pytest.mark.parametrize("rows", [1, gvr_topk.dispatch.split_rows_max(), gvr_topk.dispatch.split_rows_max() + 1])
def test_split_tactic_past_the_split_rows_takes_the_dispatcher(rows, monkeypatch):
    # The split family serves at most split_rows_max() rows per launch; TensorRT may time its tactic on more.
    seen = []
    monkeypatch.setattr(gvr_topk, "run_varlen", lambda *args, **kwargs: seen.append(kwargs["family"]))
    logits = torch.zeros(rows, 4096)
    jit.run(_attrs(), logits, torch.full((rows,), 4096, dtype=torch.int32), torch.zeros(rows, 512, dtype=torch.int32),
            torch.empty(rows, 512, dtype=torch.int32), tactic=spec.TACTIC_SPLIT)
    assert seen == ["split" if rows <= gvr_topk.dispatch.split_rows_max() else None]


def test_jit_family_per_tactic():
    assert spec.jit_family(None) is None and spec.jit_family(0) is None
    assert [spec.jit_family(t) for t in (1, 2, 3, 4)] == [None, "reg", "stream", "split"]
    assert set(spec.JIT_FAMILY.values()) - {None} == set(gvr_topk.FAMILIES)
    with pytest.raises(ValueError, match=r"tactic: expected one of \[1, 2, 3, 4\] \(or 0\), got 7"):
        spec.jit_family(7)


def test_aot_family_per_tactic():
    fits, long = _attrs(max_seq_len=4096), _attrs(max_seq_len=100000)
    assert [spec.aot_family(fits, None, t) for t in (0, 1, 2, 3, 4)] == ["reg", "reg", "reg", "exact", "exact"]
    assert [spec.aot_family(long, None, t) for t in (0, 1, 3, 4)] == ["exact"] * 4
    assert spec.aot_family(long, 4096, 1) == "reg"
    with pytest.raises(ValueError, match="tactic"):
        spec.aot_family(fits, None, 9)


# ---------------------------------------------------------------------------------------------------------------
# Ahead-of-time configuration, arguments and launch geometry
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k,cr,max_seq_len,npad", [(512, 1, 4096, None), (2048, 4, 32768, None), (64, 1, 10**6, 3000),
                                                   (2048, 1, 100, 64), (16, 1, 1, None)])
def test_aot_config_reg_matches_the_torch_op_plan(k, cr, max_seq_len, npad):
    a = _attrs(k=k, compress_ratio=cr, max_seq_len=max_seq_len)
    c = aot.aot_config(a, npad, spec.TACTIC_AUTO)
    n = spec.n_bound_max(a, npad)
    # The engine runs one kernel for any batch: the plan of a launch past one wave (the warps of the main tile).
    plan = gvr_topk.plan_for("reg", tuning.DEFAULT_NUM_SMS + 1, n, max(npad or n, 1), k)
    assert (c.family, c.block, c.tail, c.num_warps, c.k, c.kb, c.arch) == ("reg", plan.block, plan.tail,
                                                                            plan.num_warps, k, a.kb, 90)
    assert n <= c.block + c.tail <= tuning.REG_MAX_N
    one = gvr_topk.plan_for("reg", 1, n, max(npad or n, 1), k)
    assert (one.block, one.tail) == (c.block, c.tail)
    if n == 3000:  # 2048 + 1024 lanes: one row would take the warps of 3072 lanes
        assert one.num_warps > c.num_warps


def test_aot_config_exact_for_long_rows():
    c = aot.aot_config(_attrs(k=2048, max_seq_len=1 << 20), None, spec.TACTIC_AUTO)
    assert (c.family, c.block, c.num_warps, c.kb) == ("exact", tuning.REFINE_TILE, tuning.EXACT_ROW_WARPS, 2048)


def test_scalar_args_and_order():
    a = _attrs(k=64, next_n=2, compress_ratio=4, max_seq_len=8000)
    assert aot.scalar_args(a, 5000) == [2000, 5000, 2, 2]
    assert aot.scalar_args(a, 1000) == [1000, 1000, 2, 2]
    calls = []

    def sym_min(x, y):
        calls.append((x, y))
        return ("min", x, y)

    class Sym:  # stands for a TensorRT shape expression
        pass

    npad = Sym()
    assert aot.scalar_args(a, npad, sym_min=sym_min) == [("min", 2000, npad), npad, 2, 2]
    assert calls == [(2000, npad)]
    with pytest.raises(TypeError, match="sym_min"):
        aot.scalar_args(a, npad)
    args = aot.ordered_args({"kv_lens": "K", "logits": "L", "pre_idx": "P"}, [1, 2, 3, 4], {"indices": "I"})
    assert args == ["L", "K", "P", 1, 2, 3, 4, "I"]
    assert aot.PARAM_ORDER == spec.INPUTS + aot.SCALARS + spec.OUTPUTS
    with pytest.raises(ValueError, match="scalars: expected 4"):
        aot.ordered_args({"kv_lens": 0, "logits": 0, "pre_idx": 0}, [1], {"indices": 0})
    with pytest.raises(ValueError, match="inputs: expected"):
        aot.ordered_args({"logits": 0}, [1, 2, 3, 4], {"indices": 0})


@pytest.mark.parametrize("family", spec.AOT_FAMILIES)
def test_kernel_parameters_follow_the_plugin_order(family):
    cfg = aot.AotConfig(family, 64, 64, 1024, True, 4)
    signature, constexprs = aot.triton_signature(cfg)
    names = list(signature)
    assert [signature[n] for n in names[:8]] == ["*fp32", "*i32", "*i32", "i32", "i32", "i32", "i32", "*i32"]
    assert all(signature[n] == "constexpr" for n in names[8:]) and set(names[8:]) == set(constexprs)


_FAKE_PTX = """.visible .entry kern(
\t.param .u64 .ptr .global .align 1 kern_param_0,
\t.param .u32 kern_param_1,
\t.param .u64 .ptr .global .align 1 kern_param_2,
\t.param .u64 .ptr .global .align 1 kern_param_3
)
{
\tld.param.b64 \t%rd1, [kern_param_0];
\tld.param.b32 \t%r1, [kern_param_1];
\tld.param.b64 \t%rd2, [kern_param_2];
\tBODY
}
"""


def test_strip_hidden_params():
    out, removed = aot.strip_hidden_params(_FAKE_PTX.replace("BODY", "ret;"), "kern", 3)
    assert removed == 1 and aot.entry_params(out, "kern")[-1].endswith("kern_param_2")
    assert len(aot.entry_params(out, "kern")) == 3 and "kern_param_3" not in out
    same, removed = aot.strip_hidden_params(_FAKE_PTX, "kern", 4)
    assert (same, removed) == (_FAKE_PTX, 0)
    with pytest.raises(RuntimeError, match="'kern_param_3' is read"):
        aot.strip_hidden_params(_FAKE_PTX.replace("BODY", "ld.param.b64 %rd3, [kern_param_3+0];"), "kern", 3)
    with pytest.raises(RuntimeError, match="at least 5 parameters, got 4"):
        aot.strip_hidden_params(_FAKE_PTX, "kern", 5)
    with pytest.raises(RuntimeError, match="entry named 'other'"):
        aot.strip_hidden_params(_FAKE_PTX, "other", 3)


# ---------------------------------------------------------------------------------------------------------------
# PTX for sm_90 (no GPU needed; compiled once per session)
# ---------------------------------------------------------------------------------------------------------------

_CPU_AOT_CASES = {
    "reg_hint_free": (_attrs(k=512, max_seq_len=4096, hint_free=1), None, None),
    "reg_hinted": (_attrs(k=2048, next_n=2, compress_ratio=4, max_seq_len=65536, hint_free=0), None, None),
    "exact": (_attrs(k=2048, max_seq_len=1 << 20, hint_free=1), None, None),
    # PTX ISA 8.4 (CUDA 12.4 drivers), the oldest a deployment driver is likely to have.
    "reg_ptx84": (_attrs(k=512, max_seq_len=4096, hint_free=0), 4096, 84),
}


@pytest.fixture(scope="module")
def cpu_kernels():
    cfgs = {name: aot.aot_config(a, npad, spec.TACTIC_AUTO, max_ptx_version=ptx)
            for name, (a, npad, ptx) in _CPU_AOT_CASES.items()}
    kernels = aot.compile_many(list(cfgs.values()))
    return dict(zip(cfgs, kernels))


_ENTRY_NAMES = {"reg": "_gvr_reg_io_kernel", "exact": "_gvr_exact_hint_slot_kernel"}


@pytest.mark.parametrize("case", sorted(_CPU_AOT_CASES))
def test_aot_ptx_for_sm90(cpu_kernels, case):
    kern = cpu_kernels[case]
    assert kern.name == _ENTRY_NAMES[kern.config.family]
    assert re.search(r"^\.target\s+sm_90a?\b", kern.ptx, re.M), kern.ptx[:300]
    assert f".entry {kern.name}(" in kern.ptx
    params = aot.entry_params(kern.ptx, kern.name)
    # Exactly what TensorRT passes: 3 input pointers, 4 int32 scalars, 1 output pointer.
    kinds = [".u64" if ".u64" in p else ".u32" if ".u32" in p else p for p in params]
    assert kinds == [".u64"] * 3 + [".u32"] * 4 + [".u64"]
    assert kern.num_warps == kern.config.num_warps and kern.threads == 32 * kern.num_warps
    assert 0 <= kern.shared_mem <= aot.MAX_DEFAULT_SHARED
    lp = aot.launch_params(kern, 24)
    assert (lp.grid, lp.block, lp.shared_mem) == ((24, 1, 1), (kern.threads, 1, 1), kern.shared_mem)
    assert aot.compile_aot(kern.config) is kern  # cached
    if kern.config.max_ptx_version is not None:
        assert aot.ptx_isa_version(kern.ptx) <= kern.config.max_ptx_version


def _ptxas():
    try:
        from triton.backends.nvidia.compiler import get_ptxas
    except ImportError:
        return None
    try:
        tool = get_ptxas(90)
    except TypeError:  # older Triton: no arch argument
        tool = get_ptxas()
    path = getattr(tool, "path", tool)
    return path if path and os.path.exists(path) else None


@pytest.mark.parametrize("case", sorted(_CPU_AOT_CASES))
def test_aot_ptx_assembles_for_sm90(cpu_kernels, case, tmp_path):
    ptxas = _ptxas()
    if ptxas is None:
        pytest.skip("Triton's ptxas is not available")
    kern = cpu_kernels[case]
    src = tmp_path / "k.ptx"
    src.write_text(kern.ptx)
    target = re.search(r"^\.target\s+(sm_\w+)", kern.ptx, re.M).group(1)
    r = subprocess.run([ptxas, f"-arch={target}", str(src), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------------------------------------------------------
# The JIT body on CPU (the torch op's own path; Triton's interpreter or the reference)
# ---------------------------------------------------------------------------------------------------------------


def test_jit_run_on_cpu():
    a = _attrs(k=16, next_n=2, compress_ratio=2, max_seq_len=512, hint_free=0)
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 200, generator=g)
    kv_lens = torch.tensor([512, 37], dtype=torch.int32)
    pre_idx = torch.randint(-1, 200, (2, 16), generator=g, dtype=torch.int32)
    out = torch.empty(4, 16, dtype=torch.int32)
    jit.run(a, logits, kv_lens, pre_idx, out, stream=None, tactic=spec.TACTIC_AUTO)
    assert check_exact(logits, out, kv_lens=kv_lens, next_n=2, compress_ratio=2) == []
    with pytest.raises(ValueError, match="'pre_idx'"):
        jit.run(a, logits, kv_lens, pre_idx[:1], out)


# ---------------------------------------------------------------------------------------------------------------
# GPU: the AOT PTX through the CUDA driver, launched as TensorRT launches it
# ---------------------------------------------------------------------------------------------------------------


class _CudaPythonLauncher:
    """cuModuleLoadData + cuLaunchKernel with a void*[] of argument addresses, as TensorRT's runtime does."""

    def __init__(self):
        try:
            from cuda.bindings import driver
        except ImportError:
            from cuda import cuda as driver
        self.cu = driver
        self._ok(driver.cuInit(0))
        torch.cuda.init()
        torch.empty(1, device="cuda")  # make torch's primary context current on this thread
        ctx = self._ok(driver.cuCtxGetCurrent())
        if int(ctx) == 0:
            dev = self._ok(driver.cuDeviceGet(torch.cuda.current_device()))
            self._ok(driver.cuCtxSetCurrent(self._ok(driver.cuDevicePrimaryCtxRetain(dev))))
        self._keep = []

    def _ok(self, res):
        err, *rest = res if isinstance(res, tuple) else (res,)
        if int(err) != 0:
            raise RuntimeError(f"CUDA driver error {err}")
        return rest[0] if len(rest) == 1 else (rest or None)

    def load(self, ptx: str, name: str):
        image = ctypes.create_string_buffer(ptx.encode())
        self._keep.append(image)
        mod = self._ok(self.cu.cuModuleLoadData(ctypes.addressof(image)))
        return self._ok(self.cu.cuModuleGetFunction(mod, name.encode()))

    def launch(self, fn, grid, block, shared_mem, stream: int, args):
        # Argument storage: u64 for pointers, int32 for scalars, matching the PTX's .param widths.
        slots = [ctypes.c_uint64(v) if kind == "ptr" else ctypes.c_int32(v) for kind, v in args]
        table = (ctypes.c_void_p * len(slots))(*[ctypes.addressof(s) for s in slots])
        self._ok(self.cu.cuLaunchKernel(fn, *grid, *block, shared_mem, self.cu.CUstream(stream),
                                        ctypes.addressof(table), 0))


class _CupyLauncher:
    """The same launch through CuPy's driver wrappers (fallback when cuda-python is missing)."""

    def __init__(self):
        import cupy
        self.cupy = cupy

    def load(self, ptx: str, name: str):
        mod = self.cupy.cuda.function.Module()
        mod.load(ptx.encode())
        self._mod = mod
        return mod.get_function(name)

    def launch(self, fn, grid, block, shared_mem, stream: int, args):
        vals = [np.uint64(v) if kind == "ptr" else np.int32(v) for kind, v in args]
        fn(grid, block, tuple(vals), shared_mem=shared_mem, stream=self.cupy.cuda.ExternalStream(stream))


@pytest.fixture(scope="module")
def launcher():
    if not ON_GPU:
        pytest.skip("needs a CUDA GPU")
    errors = []
    for cls in (_CudaPythonLauncher, _CupyLauncher):
        try:
            return cls()
        except ImportError as e:
            errors.append(f"{cls.__name__}: {e}")
    pytest.skip("neither cuda-python nor CuPy is importable: " + "; ".join(errors))


def _launch_aot(launcher, attrs, logits, kv_lens, pre_idx, tactic=spec.TACTIC_AUTO, npad_static=True):
    """What a TensorRT engine with this plugin does at run time, given the plugin's aot_impl outputs."""
    rows, npad = logits.shape
    # As the plugin's aot_impl does: the PTX declares no newer ISA than this machine's driver loads.
    kern = aot.compile_aot(aot.aot_config(attrs, npad if npad_static else None, tactic,
                                          max_ptx_version=aot.driver_ptx_version()))
    indices = torch.full((rows, attrs.k), -7, dtype=torch.int32, device="cuda")
    geometry = aot.launch_params(kern, rows)
    scalars = aot.scalar_args(attrs, npad)  # the SymInt32 values TensorRT evaluates at run time
    args = aot.ordered_args({"logits": ("ptr", logits.data_ptr()), "kv_lens": ("ptr", kv_lens.data_ptr()),
                             "pre_idx": ("ptr", pre_idx.data_ptr())},
                            [("i32", int(s)) for s in scalars], {"indices": ("ptr", indices.data_ptr())})
    assert len(aot.entry_params(kern.ptx, kern.name)) == len(args)
    fn = launcher.load(kern.ptx, kern.name)
    launcher.launch(fn, geometry.grid, geometry.block, geometry.shared_mem, torch.cuda.current_stream().cuda_stream,
                    args)
    torch.cuda.synchronize()
    return kern, indices


def _inputs(rows, npad, attrs, kind, seed):
    g = torch.Generator().manual_seed(seed)
    batch = rows // attrs.next_n
    if kind == "ties":
        logits = torch.randint(-40, 40, (rows, npad), generator=g).float()
    else:
        logits = torch.randn(rows, npad, generator=g)
    # kv_lens never exceed max_seq_len (the attribute's contract); include empty, short and full rows.
    kv = torch.randint(0, attrs.max_seq_len + 1, (batch,), generator=g)
    kv[0] = attrs.max_seq_len
    if batch > 1:
        kv[1] = 0
    if batch > 2:
        kv[2] = min(attrs.compress_ratio * attrs.k // 2, attrs.max_seq_len)  # a short row
    kv_lens = kv.to(torch.int32)
    # Hints: the true top-k of each request's first row for some requests, garbage (-1, out of range, duplicates)
    # for others. A hint changes speed only, never the result.
    ref_idx, _ = gvr_topk.reference.topk_varlen(logits, kv_lens, attrs.k, next_n=attrs.next_n,
                                                compress_ratio=attrs.compress_ratio)
    pre_idx = ref_idx[::attrs.next_n].clone().to(torch.int32)
    junk = torch.randint(-2, npad + 100, (batch, attrs.k), generator=g, dtype=torch.int32)
    pre_idx[1::2] = junk[1::2]
    return logits.cuda(), kv_lens.cuda(), pre_idx.cuda()


_GPU_CASES = [
    # name, rows, npad, attrs, expected family
    ("reg_hint_free", 16, 4096, dict(k=512, max_seq_len=4096, hint_free=1), "reg"),
    ("reg_hinted", 16, 4096, dict(k=512, max_seq_len=4096, hint_free=0), "reg"),
    ("reg_varlen_mtp_cr4", 12, 2048, dict(k=256, next_n=2, compress_ratio=4, max_seq_len=8192, hint_free=0), "reg"),
    ("reg_varlen_mtp_cr4_hint_free", 12, 2048, dict(k=256, next_n=2, compress_ratio=4, max_seq_len=8192), "reg"),
    ("reg_k2048_16k", 6, 16384, dict(k=2048, max_seq_len=16384, hint_free=0), "reg"),
    ("short_rows", 8, 1024, dict(k=2048, max_seq_len=1024), "reg"),
    ("clamp_by_max_seq_len", 8, 3000, dict(k=128, max_seq_len=2000, hint_free=0), "reg"),
    ("exact_long_rows", 4, 40000, dict(k=2048, max_seq_len=40000, hint_free=1), "exact"),
    ("exact_long_rows_hinted", 4, 40000, dict(k=1024, next_n=2, compress_ratio=2, max_seq_len=80000, hint_free=0),
     "exact"),
]


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["randn", "ties"])
@pytest.mark.parametrize("name,rows,npad,kw,family", _GPU_CASES, ids=[c[0] for c in _GPU_CASES])
def test_aot_ptx_driver_launch_is_exact(launcher, name, rows, npad, kw, family, kind):
    attrs = _attrs(**kw)
    logits, kv_lens, pre_idx = _inputs(rows, npad, attrs, kind, seed=zlib.crc32(f"{name}/{kind}".encode()))
    kern, indices = _launch_aot(launcher, attrs, logits, kv_lens, pre_idx)
    assert kern.config.family == family
    problems = check_exact(logits, indices, kv_lens=kv_lens, next_n=attrs.next_n,
                           compress_ratio=attrs.compress_ratio)
    assert problems == [], problems


@pytest.mark.gpu
def test_aot_ptx_built_for_dynamic_npad(launcher):
    # npad unknown at build time: the kernel is sized by max_seq_len // compress_ratio, and n_bound = min(n_cap,
    # npad) is evaluated at run time; here the run-time npad is narrower than n_cap.
    attrs = _attrs(k=256, next_n=1, compress_ratio=1, max_seq_len=8192, hint_free=0)
    logits, kv_lens, pre_idx = _inputs(8, 3000, attrs, "randn", seed=3)
    kv_lens.clamp_(max=3000)
    kern, indices = _launch_aot(launcher, attrs, logits, kv_lens, pre_idx, npad_static=False)
    assert kern.config.block == 8192
    assert check_exact(logits, indices, kv_lens=kv_lens) == []


@pytest.mark.gpu
@pytest.mark.parametrize("tactic", [spec.TACTIC_STREAM, spec.TACTIC_SPLIT])
def test_aot_streaming_tactics_use_the_exact_kernel(launcher, tactic):
    attrs = _attrs(k=128, next_n=2, compress_ratio=4, max_seq_len=16000, hint_free=0)
    logits, kv_lens, pre_idx = _inputs(10, 4000, attrs, "ties", seed=tactic)
    kern, indices = _launch_aot(launcher, attrs, logits, kv_lens, pre_idx, tactic=tactic)
    assert kern.config.family == "exact"
    assert check_exact(logits, indices, kv_lens=kv_lens, next_n=2, compress_ratio=4) == []


@pytest.mark.gpu
@pytest.mark.parametrize("tactic", [spec.TACTIC_AUTO, spec.TACTIC_REG, spec.TACTIC_STREAM, spec.TACTIC_SPLIT])
def test_jit_body_on_an_external_stream_matches_aot(launcher, tactic):
    attrs = _attrs(k=256, next_n=2, compress_ratio=4, max_seq_len=8192, hint_free=0)
    logits, kv_lens, pre_idx = _inputs(12, 2048, attrs, "ties", seed=11)
    _, aot_indices = _launch_aot(launcher, attrs, logits, kv_lens, pre_idx)
    side = torch.cuda.Stream()
    out = torch.full((12, attrs.k), -7, dtype=torch.int32, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    jit.run(attrs, logits, kv_lens, pre_idx, out, stream=side.cuda_stream, tactic=tactic)
    side.synchronize()
    assert check_exact(logits, out, kv_lens=kv_lens, next_n=2, compress_ratio=4) == []
    # The tie rule makes the chosen set a function of the input: JIT and AOT agree row by row.
    for r in range(12):
        assert set(out[r].tolist()) == set(aot_indices[r].tolist()), r
