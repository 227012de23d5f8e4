"""Ahead-of-time compilation for the plugin's ``aot_impl``: Triton -> PTX, launch geometry, argument order.

TensorRT launches an ahead-of-time plugin kernel itself, with no Python: one ``cuLaunchKernel`` with the grid,
block and dynamic shared memory the plugin returned, and the arguments in a fixed order: every input pointer,
then the extra scalars the plugin returned, then every output pointer. Everything needed to honour that contract
is computed here, without TensorRT and without a GPU (Triton is given an explicit target), so it is unit-tested
on CPU and the GPU test launches the same PTX through the CUDA driver exactly as TensorRT would.

Two kernels qualify, both one program per row and workspace-free:

* ``reg`` (:func:`gvr_topk.kernels.reg._gvr_reg_io_kernel`): the whole row in registers; rows up to
  ``tuning.REG_MAX_N`` columns. Tile and warps are those ``gvr_topk.plan_for("reg", ...)`` chooses.
* ``exact`` (:func:`gvr_topk.kernels.exact_hint_slot._gvr_exact_hint_slot_kernel`): the row streamed from global
  memory, any length, several times slower.

Hidden parameters. Recent Triton appends pointer parameters to every kernel that its own launcher fills (global
scratch, profile scratch). TensorRT passes only the arguments the plugin declares, so those parameters must not be
in the PTX it loads. When the compiled kernel uses no scratch (its metadata says 0 bytes and no instruction reads
the parameter), :func:`strip_hidden_params` removes them from the ``.entry`` declaration; a kernel that does use
scratch is refused with an error, since TensorRT could not supply it.
"""

import ctypes
import dataclasses
import inspect
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable
from typing import Dict
from typing import List
from typing import Optional
from typing import Sequence

from gvr_topk import dispatch
from gvr_topk import tuning

from . import spec

#: Kernel parameters in launch order: inputs, scalars, outputs (the order TensorRT passes them in).
PARAM_ORDER = ("logits", "kv_lens", "pre_idx", "n_bound", "row_stride", "next_n", "cr_shift", "indices")
#: The scalars among them (the ``SymIntExprs`` the plugin returns), in order.
SCALARS = ("n_bound", "row_stride", "next_n", "cr_shift")
#: Triton signature types of the declared (non-constexpr) parameters.
_PARAM_TYPES = {"logits": "*fp32", "kv_lens": "*i32", "pre_idx": "*i32", "n_bound": "i32", "row_stride": "i32",
                "next_n": "i32", "cr_shift": "i32", "indices": "*i32"}
#: Target GPU architecture of the PTX (compute capability x 10): the H100 / H200.
DEFAULT_ARCH = 90
#: Dynamic shared memory a launch may use without opting in per kernel (``cuFuncSetAttribute``), which an
#: ahead-of-time plugin cannot do.
MAX_DEFAULT_SHARED = 48 * 1024


@dataclass(frozen=True)
class AotConfig:
    """One ahead-of-time kernel specialisation (hashable: the compile cache key).

    Attributes
    ----------
    family : str
        ``"reg"`` or ``"exact"``.
    k, kb : int
        Selections per row and its power-of-two slot tile (>= 16).
    block : int
        ``reg``: the register tile (with ``tail``, >= every row length); ``exact``: scores per loop iteration.
    hint_free : bool
        ``reg`` only: never read the hint (the ``exact`` kernel never reads it anyway).
    num_warps : int
        Warps per program.
    arch : int
        Target compute capability x 10 (90: sm_90).
    max_ptx_version : int or None
        Highest PTX ISA version (x10, e.g. 84 for 8.4) the PTX may declare: that of the CUDA driver that will load
        it (see :func:`driver_ptx_version`). None: whatever this Triton emits by default.
    maxnreg : int
        Register cap per thread (Triton ``maxnreg``), 0 for none: the torch op's plan's for ``reg``.
    tail : int
        ``reg``: lanes of the tail tile after ``block`` (``dispatch.Plan.tail``), 0 for none and for ``exact``.
    """

    family: str
    k: int
    kb: int
    block: int
    hint_free: bool
    num_warps: int
    arch: int = DEFAULT_ARCH
    max_ptx_version: Optional[int] = None
    maxnreg: int = 0
    tail: int = 0


@dataclass(frozen=True)
class AotKernel:
    """A compiled kernel and what TensorRT needs to launch it.

    Attributes
    ----------
    config : AotConfig
        What was compiled.
    name : str
        Entry name in the PTX (the ``kernel_name`` returned to TensorRT).
    ptx : str
        PTX text with exactly ``len(PARAM_ORDER)`` parameters, in ``PARAM_ORDER``.
    num_warps : int
        Warps per program, so ``block_x = 32 * num_warps``.
    shared_mem : int
        Dynamic shared memory per program, in bytes.
    hidden_params_removed : int
        Trailing Triton-only parameters removed from the PTX (0 with Triton versions that add none).
    """

    config: AotConfig
    name: str
    ptx: str
    num_warps: int
    shared_mem: int
    hidden_params_removed: int

    @property
    def threads(self) -> int:
        """Threads per block (``block_x``)."""
        return 32 * self.num_warps


def aot_config(attrs: spec.PluginAttrs, npad: Optional[int], tactic: Optional[int] = None,
               arch: int = DEFAULT_ARCH, max_ptx_version: Optional[int] = None) -> AotConfig:
    """The kernel an ahead-of-time build compiles for given attributes, row width and tactic.

    Parameters
    ----------
    attrs : spec.PluginAttrs
        Validated plugin attributes.
    npad : int or None
        ``logits.shape[1]`` when fixed at build time; None when it is only known at run time (the kernel is then
        sized for ``max_seq_len // compress_ratio`` columns).
    tactic : int, optional
        The tactic TensorRT is building (see :func:`spec.aot_family`).
    arch : int
        Target compute capability x 10.
    max_ptx_version : int, optional
        Cap on the PTX ISA version (see :class:`AotConfig`).

    Returns
    -------
    AotConfig
    """
    family = spec.aot_family(attrs, npad, tactic)
    if family == "reg":
        n = spec.n_bound_max(attrs, npad)
        # The tile, warps and register cap the torch op's launcher chooses for these rows past one wave: the engine
        # runs this one kernel for any batch, and the warps of a one-row launch (dispatch._reg_plan) cost more at
        # 512 rows than they save at one (NOTES entry 33: 512 x 2100 K=512 +10 us, 1 x 2100 -1.6 us).
        plan = dispatch.plan_for("reg", tuning.DEFAULT_NUM_SMS + 1, n, max(npad if npad is not None else n, 1),
                                 attrs.k)
        # The hint input is still taken (the engine's graph has it); the kernel reads it only with REG_USE_HINT.
        hint_free = attrs.hint_free or not tuning.REG_USE_HINT
        return AotConfig("reg", attrs.k, attrs.kb, plan.block, hint_free, plan.num_warps, arch, max_ptx_version,
                         plan.maxnreg, plan.tail)
    return AotConfig("exact", attrs.k, attrs.kb, tuning.REFINE_TILE, attrs.hint_free, tuning.EXACT_ROW_WARPS, arch,
                     max_ptx_version)


def driver_ptx_version() -> Optional[int]:
    """Highest PTX ISA version (x10) the installed CUDA driver can load, or None where there is no driver.

    PTX newer than the driver fails to load (``CUDA_ERROR_UNSUPPORTED_PTX_VERSION``), and Triton by default
    declares the version of the ptxas it bundles, which can be newer than the driver: pass this as
    ``max_ptx_version``.
    """
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int(0)
    if lib.cuDriverGetVersion(ctypes.byref(version)) != 0 or version.value <= 0:
        return None
    try:
        from triton.backends.nvidia.compiler import ptx_get_version
    except ImportError:  # a Triton without the mapping: leave the version to Triton
        return None
    return ptx_get_version(f"{version.value // 1000}.{version.value % 1000 // 10}")


def ptx_isa_version(ptx: str) -> int:
    """The ``.version`` a PTX text declares, x10 (``.version 8.4`` -> 84)."""
    m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
    if m is None:
        raise RuntimeError(f"{spec.PLUGIN_ID}: PTX: expected a .version directive, found none")
    return 10 * int(m.group(1)) + int(m.group(2))


def kernel_for(family: str):
    """The ``@triton.jit`` entry point of an ahead-of-time family (imported here: it pulls in Triton)."""
    if family == "reg":
        from gvr_topk.kernels.reg import _gvr_reg_io_kernel
        return _gvr_reg_io_kernel
    if family == "exact":
        from gvr_topk.kernels.exact_hint_slot import _gvr_exact_hint_slot_kernel
        return _gvr_exact_hint_slot_kernel
    raise ValueError(f"{spec.PLUGIN_ID}: AOT family: expected one of {spec.AOT_FAMILIES}, got {family!r}")


def _arg_names(fn) -> List[str]:
    return list(getattr(fn, "arg_names", None) or inspect.signature(getattr(fn, "fn", fn)).parameters)


def triton_signature(config: AotConfig) -> tuple:
    """``(signature, constexprs)`` for ``triton.compiler.ASTSource``: declared parameters first, in launch order.

    Raises
    ------
    RuntimeError
        If the kernel's parameters are not ``PARAM_ORDER`` followed by constexprs (the launch would be wrong).
    """
    names = _arg_names(kernel_for(config.family))
    declared = [n[:-len("_ptr")] if n.endswith("_ptr") else n for n in names[:len(PARAM_ORDER)]]
    if tuple(declared) != PARAM_ORDER:
        raise RuntimeError(f"{spec.PLUGIN_ID}: kernel '{config.family}' parameters: expected {PARAM_ORDER} first, "
                           f"got {tuple(names)}")
    if config.family == "reg":
        constexprs = {"K": config.k, "KB": config.kb, "BLOCK": config.block, "TAIL": config.tail,
                      "HINT_FREE": config.hint_free}
    else:
        constexprs = {"K": config.k, "KB": config.kb, "TILE": config.block}
    if set(names[len(PARAM_ORDER):]) != set(constexprs):
        raise RuntimeError(f"{spec.PLUGIN_ID}: kernel '{config.family}' constexprs: expected {sorted(constexprs)}, "
                           f"got {names[len(PARAM_ORDER):]}")
    signature = {name: _PARAM_TYPES[p] for name, p in zip(names, PARAM_ORDER)}
    signature.update({name: "constexpr" for name in constexprs})
    return signature, constexprs


_ENTRY = r"\.entry\s+{name}\s*\((?P<params>[^)]*)\)"


def entry_params(ptx: str, name: str) -> List[str]:
    """The ``.param`` declarations of entry ``name`` in ``ptx``, in order (whitespace-trimmed)."""
    m = re.search(_ENTRY.format(name=re.escape(name)), ptx)
    if m is None:
        raise RuntimeError(f"{spec.PLUGIN_ID}: PTX: expected an entry named '{name}', found none")
    return [p.strip() for p in m.group("params").split(",") if p.strip()]


def strip_hidden_params(ptx: str, name: str, n_declared: int) -> tuple:
    """Remove trailing entry parameters beyond the ``n_declared`` the caller will pass, if nothing reads them.

    Parameters
    ----------
    ptx : str
        PTX text from Triton.
    name : str
        Entry name.
    n_declared : int
        Parameters the launcher passes (TensorRT: inputs + scalars + outputs).

    Returns
    -------
    (str, int)
        The PTX whose entry declares exactly ``n_declared`` parameters, and how many were removed.

    Raises
    ------
    RuntimeError
        The entry declares fewer parameters than ``n_declared``, or an instruction reads one to be removed.
    """
    m = re.search(_ENTRY.format(name=re.escape(name)), ptx)
    if m is None:
        raise RuntimeError(f"{spec.PLUGIN_ID}: PTX: expected an entry named '{name}', found none")
    params = [p for p in m.group("params").split(",") if p.strip()]
    if len(params) < n_declared:
        raise RuntimeError(f"{spec.PLUGIN_ID}: PTX entry '{name}': expected at least {n_declared} parameters, got "
                           f"{len(params)}")
    body = ptx[m.end():]
    for p in params[n_declared:]:
        pname = p.split()[-1]
        # Parameters are read only through `ld.param` operands `[name]` or `[name+offset]`.
        if re.search(re.escape(pname) + r"\s*[\]+]", body):
            raise RuntimeError(f"{spec.PLUGIN_ID}: PTX entry '{name}': hidden parameter '{pname}' is read by the "
                               "kernel (it needs Triton scratch memory, which TensorRT cannot pass)")
    removed = len(params) - n_declared
    if removed == 0:
        return ptx, 0
    kept = ",".join(params[:n_declared]).rstrip()
    start, end = m.span("params")
    return ptx[:start] + kept + "\n" + ptx[end:], removed


def _compile_in_process(config: AotConfig) -> AotKernel:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    signature, constexprs = triton_signature(config)
    # Triton 3.2 named the constexpr mapping `constants`; 3.3 and later `constexprs`.
    kw = "constexprs" if "constexprs" in inspect.signature(ASTSource.__init__).parameters else "constants"
    src = ASTSource(fn=kernel_for(config.family), signature=signature, **{kw: constexprs})
    target = GPUTarget("cuda", config.arch, 32)
    options = {"num_warps": config.num_warps}
    if config.maxnreg:
        options["maxnreg"] = config.maxnreg
    compiled = triton.compile(src, target=target, options=options)
    if config.max_ptx_version is not None and ptx_isa_version(compiled.asm["ptx"]) > config.max_ptx_version:
        # Lower the declared ISA only when needed: Triton cannot go above its own default, and older ISAs may
        # lack instructions newer Triton prefers.
        compiled = triton.compile(src, target=target, options={**options, "ptx_version": config.max_ptx_version})
    md = compiled.metadata
    for field in ("global_scratch_size", "profile_scratch_size"):
        if getattr(md, field, 0):
            raise RuntimeError(f"{spec.PLUGIN_ID}: kernel '{config.family}' needs {getattr(md, field)} bytes of "
                               f"Triton {field.replace('_size', '')} memory, which TensorRT cannot pass")
    if md.shared > MAX_DEFAULT_SHARED:
        raise RuntimeError(f"{spec.PLUGIN_ID}: kernel '{config.family}': expected <= {MAX_DEFAULT_SHARED} bytes of "
                           f"dynamic shared memory, got {md.shared}")
    if md.num_warps != config.num_warps:
        raise RuntimeError(f"{spec.PLUGIN_ID}: Triton compiled {md.num_warps} warps, expected {config.num_warps}")
    ptx, removed = strip_hidden_params(compiled.asm["ptx"], md.name, len(PARAM_ORDER))
    return AotKernel(config=config, name=md.name, ptx=ptx, num_warps=md.num_warps, shared_mem=md.shared,
                     hidden_params_removed=removed)


def kernels_interpreted() -> bool:
    """True when ``@triton.jit`` functions are interpreter objects (``TRITON_INTERPRET=1``): they cannot be
    compiled in this process."""
    from triton.runtime.jit import JITFunction

    return not isinstance(kernel_for("reg"), JITFunction)


def _compile_in_subprocess(configs: Sequence[AotConfig]) -> List[AotKernel]:
    # The interpreter replaces every @triton.jit function of the process, helpers included, so compile in a
    # fresh interpreter-free Python. Same Triton, same sources: the PTX is what the engine build would produce.
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    payload = json.dumps([dataclasses.asdict(c) for c in configs])
    proc = subprocess.run([sys.executable, "-m", "gvr_topk_plugin.aot"], input=payload, capture_output=True,
                          text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{spec.PLUGIN_ID}: AOT compile subprocess failed (rc {proc.returncode}):\n"
                           f"{proc.stderr[-4000:]}")
    out = []
    for d in json.loads(proc.stdout):
        d["config"] = AotConfig(**d["config"])
        out.append(AotKernel(**d))
    return out


_CACHE: Dict[AotConfig, AotKernel] = {}


def compile_many(configs: Sequence[AotConfig]) -> List[AotKernel]:
    """Compile several configurations (cached per process; one subprocess for all of them when interpreted).

    Parameters
    ----------
    configs : sequence of AotConfig

    Returns
    -------
    list of AotKernel
        In the order of ``configs``.
    """
    todo = [c for c in dict.fromkeys(configs) if c not in _CACHE]
    if todo:
        done = _compile_in_subprocess(todo) if kernels_interpreted() else [_compile_in_process(c) for c in todo]
        _CACHE.update(zip(todo, done))
    return [_CACHE[c] for c in configs]


def compile_aot(config: AotConfig) -> AotKernel:
    """Compile one configuration to PTX for ``config.arch`` (no GPU needed; cached per process).

    Returns
    -------
    AotKernel
        Name, PTX whose entry declares exactly ``PARAM_ORDER``, warps and shared memory.

    Raises
    ------
    RuntimeError
        The compiled kernel would need something an ahead-of-time launch cannot give (scratch memory, more than
        48 KiB of dynamic shared memory), or its parameters are not in ``PARAM_ORDER``.
    """
    return compile_many([config])[0]


def scalar_args(attrs: spec.PluginAttrs, npad, sym_min: Optional[Callable] = None) -> list:
    """The extra scalar arguments, in ``SCALARS`` order: ``[n_bound, row_stride, next_n, cr_shift]``.

    Parameters
    ----------
    attrs : spec.PluginAttrs
        Validated attributes.
    npad : int or symbolic expression
        ``logits.shape[1]``; TensorRT tensors are dense, so it is also the row stride.
    sym_min : callable, optional
        ``min`` for a symbolic ``npad`` (``tensorrt.plugin.min``); unused when ``npad`` is an int.

    Returns
    -------
    list
        ints, or symbolic expressions where they depend on a symbolic ``npad``.
    """
    if isinstance(npad, int):
        n_bound = min(attrs.n_cap, npad)
    else:
        if sym_min is None:
            raise TypeError(f"{spec.PLUGIN_ID}: scalar_args: a symbolic npad needs sym_min")
        n_bound = sym_min(attrs.n_cap, npad)
    return [n_bound, npad, attrs.next_n, attrs.cr_shift]


@dataclass(frozen=True)
class LaunchParams:
    """Grid, block and dynamic shared memory of one ahead-of-time launch (``KernelLaunchParams`` fields)."""

    grid: tuple
    block: tuple
    shared_mem: int


def launch_params(kernel: AotKernel, rows) -> LaunchParams:
    """One program per row: grid ``(rows, 1, 1)``, block ``(32 * num_warps, 1, 1)``.

    ``rows`` may be an int or a symbolic expression (``logits``' first dimension).
    """
    return LaunchParams(grid=(rows, 1, 1), block=(kernel.threads, 1, 1), shared_mem=kernel.shared_mem)


def ordered_args(inputs: Dict[str, object], scalars: Sequence, outputs: Dict[str, object]) -> list:
    """Kernel arguments in ``PARAM_ORDER`` from named inputs, the scalar list and named outputs.

    Raises
    ------
    ValueError
        Naming a missing or unexpected input/output, or a wrong number of scalars.
    """
    if set(inputs) != set(spec.INPUTS):
        raise ValueError(f"{spec.PLUGIN_ID}: ordered_args: inputs: expected {spec.INPUTS}, got {tuple(inputs)}")
    if set(outputs) != set(spec.OUTPUTS):
        raise ValueError(f"{spec.PLUGIN_ID}: ordered_args: outputs: expected {spec.OUTPUTS}, got {tuple(outputs)}")
    if len(scalars) != len(SCALARS):
        raise ValueError(f"{spec.PLUGIN_ID}: ordered_args: scalars: expected {len(SCALARS)} {SCALARS}, "
                         f"got {len(scalars)}")
    return [inputs[n] for n in spec.INPUTS] + list(scalars) + [outputs[n] for n in spec.OUTPUTS]


def _main() -> int:
    """``python -m gvr_topk_plugin.aot``: JSON list of AotConfig dicts on stdin -> JSON list of AotKernel dicts."""
    configs = [AotConfig(**d) for d in json.loads(sys.stdin.read())]
    if kernels_interpreted():
        print("gvr_topk_plugin.aot: TRITON_INTERPRET is set; unset it to compile", file=sys.stderr)
        return 2
    kernels = [_compile_in_process(c) for c in configs]
    json.dump([dataclasses.asdict(k) for k in kernels], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
