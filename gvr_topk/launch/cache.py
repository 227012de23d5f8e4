"""Launcher cache and the record of compiled (warm) launchers.

Two things live here, both pure host code:

* :class:`LaunchEntry`: one prepared launch (plan, kernel, grid, every int and constexpr argument). ``gvr_topk.api``
  builds it once per call signature and afterwards only fills in the tensor pointers, so an eager call costs a
  dictionary lookup instead of validation, dispatch and argument assembly.
* The *warm set*: compile keys of launches that already ran outside CUDA-graph capture. Triton compiles a new
  variant of a kernel whenever its compile key changes; compiling (and loading the module) inside capture breaks
  the capture, so a launch whose key is not warm is refused during capture (:class:`ColdLauncherError`).

A compile key mirrors what makes Triton specialise a ``@triton.jit`` function: the kernel, the launch options
(``num_warps``), the exact value of every ``tl.constexpr``, the dtype of every tensor and whether its address is
16-byte aligned, and for every other int its type class (i32 / i64 / u64) and, unless the kernel does not
specialise it (``do_not_specialize``), whether it equals 1 or is a multiple of 16. Keys may be stricter than
Triton's (a spurious refusal names what to warm up), never looser.
"""

import inspect
from typing import Dict
from typing import Hashable
from typing import Optional
from typing import Set
from typing import Tuple

import torch

from ..dispatch import Plan

#: Entries kept per cache before it is cleared (signatures seen by one process are few: one per layer shape).
MAX_ENTRIES = 512
#: Triton specialises tensor arguments on this alignment (bytes) of their address.
ALIGN = 16


class ColdLauncherError(RuntimeError):
    """A launch during CUDA-graph capture needs a kernel variant that was never compiled (see :func:`warmup`)."""


class BoundedCache(dict):
    """A dict that empties itself when it reaches ``limit`` entries (cheaper per hit than an LRU).

    Clearing only costs re-preparing the launches still in use (a few microseconds each on the next call); the
    record of compiled launchers is kept elsewhere, so no kernel is recompiled.
    """

    def __init__(self, limit: int = MAX_ENTRIES):
        super().__init__()
        if limit < 1:
            raise ValueError(f"BoundedCache: limit must be >= 1, got {limit}")
        self.limit = limit

    def put(self, key: Hashable, value) -> None:
        if key not in self and len(self) >= self.limit:
            self.clear()
        self[key] = value


def int_spec(v: int) -> Tuple[str, bool, bool]:
    """How Triton specialises a non-constexpr int argument: (type class, equals 1, multiple of 16)."""
    if -2**31 <= v < 2**31:
        cls = "i32"
    elif -2**63 <= v < 2**63:
        cls = "i64"
    else:
        cls = "u64"
    return (cls, v == 1, v % 16 == 0)


_PARAMS: Dict[int, Tuple[frozenset, frozenset, frozenset]] = {}


def _params(kernel) -> Tuple[frozenset, frozenset, frozenset]:
    """(all parameter names, constexpr parameter names, names of the ints it does not specialise) of a
    ``@triton.jit`` kernel, compiled or interpreted."""
    got = _PARAMS.get(id(kernel))
    if got is None:
        # Read the Python function's signature: both the compiled and the interpreted kernel keep it as ``fn``.
        fn = getattr(kernel, "fn", kernel)
        params = inspect.signature(fn).parameters
        const = frozenset(name for name, p in params.items() if "constexpr" in str(p.annotation))
        # ``triton.jit(do_not_specialize=...)``: names or positions; a JITFunction keeps the list, the interpreter's
        # function the keyword arguments it was made with.
        dns = getattr(kernel, "do_not_specialize", None) or getattr(kernel, "kwargs", {}).get("do_not_specialize")
        names = list(params)
        plain = frozenset(names[d] if isinstance(d, int) else d for d in (dns or ()))
        got = (frozenset(params), const, plain)
        _PARAMS[id(kernel)] = got
    return got


def constexpr_names(kernel) -> frozenset:
    """Names of the ``tl.constexpr`` parameters of a ``@triton.jit`` kernel (compiled or interpreted)."""
    return _params(kernel)[1]


def kernel_name(kernel) -> str:
    fn = getattr(kernel, "fn", kernel)
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__name__', repr(fn))}"


def static_key(kernel, device: str, scalars: Dict[str, object], pointer_dtypes: Dict[str, torch.dtype]) -> tuple:
    """The part of a compile key fixed for one prepared launch (everything but pointer alignment).

    Parameters
    ----------
    kernel : triton.runtime.JITFunction or InterpretedFunction
        The kernel launched.
    device : str
        Device the launch runs on (Triton compiles per device), e.g. ``"cuda:0"``.
    scalars : dict
        Every non-tensor keyword argument of the launch: constexprs, ints and launch options (``num_warps``).
    pointer_dtypes : dict
        dtype of each tensor argument, by name.

    Returns
    -------
    tuple
        Hashable; equal for two launches exactly when Triton would reuse one compiled variant for both (given
        equal alignment, see :func:`alignment`).
    """
    params, const, plain = _params(kernel)
    items = []
    for name in sorted(scalars):
        v = scalars[name]
        if name not in params or name in const or isinstance(v, bool) or not isinstance(v, int):
            items.append((name, "=", v))  # constexprs, bools and launch options (num_warps): the exact value
        elif name in plain:
            items.append((name, "i", int_spec(v)[0]))  # not specialised: its type class alone
        else:
            items.append((name, "i") + int_spec(v))
    return (kernel_name(kernel), device, tuple(items), tuple(sorted((n, str(d)) for n, d in pointer_dtypes.items())))


def alignment(ptrs) -> Tuple[bool, ...]:
    """Alignment flags of integer addresses, as Triton specialises them (True: a multiple of 16 bytes)."""
    return tuple(p % ALIGN == 0 for p in ptrs)


#: Compile keys (static key, alignment) that launched at least once outside capture in this process.
_WARM: Set[tuple] = set()


def is_warm(key: tuple) -> bool:
    return key in _WARM


def mark_warm(key: tuple) -> None:
    _WARM.add(key)


def warm_count() -> int:
    """Number of distinct compiled launchers recorded as warm in this process."""
    return len(_WARM)


def forget_warm() -> None:
    """Forget every warm key (tests; after this, capture refuses every launch until it runs once again)."""
    _WARM.clear()


def capturing(device: Optional[torch.device]) -> bool:
    """True while the current stream of the current CUDA device is being captured into a CUDA graph."""
    if device is None or device.type != "cuda":
        return False
    return torch.cuda.is_current_stream_capturing()


class LaunchEntry:
    """One prepared launch: everything except the tensors of a call.

    Attributes
    ----------
    plan : Plan
        The dispatch decision.
    kernel, grid
        The ``@triton.jit`` kernel and its launch grid (launched as ``kernel.run(**kwargs, grid=grid,
        warmup=False)``, what ``kernel[grid](**kwargs)`` calls, one call layer shorter).
    scalars : dict
        Every int / constexpr / option keyword argument (fixed per entry).
    ws_args : tuple of str
        Names of the workspace pointer arguments, in launch order (empty for ``reg``).
    ws_offsets : tuple of int
        Byte offset of each workspace view from the workspace start (alignment of the views follows from it).
    key : tuple
        Static part of the compile key (:func:`static_key`).
    warm : set
        Alignment patterns of this entry known to be warm (a local copy of the global record, so a hit costs one
        set lookup of a short tuple).
    hot, hot_align
        ``hot`` is True once the usual pattern ``hot_align`` (every pointer aligned, the library workspace) is
        warm: then a call with that pattern skips every check but one flag.
    ws_views : BoundedCache
        Workspace views of the library workspace and their addresses, per stream: ``(views, pointers)``.
    direct, direct_tried
        The :class:`~gvr_topk.launch.direct.DirectLaunch` of the hot pattern's compiled kernel (a
        :class:`~gvr_topk.launch.direct.DirectSequence` for the streaming family's kernels; None until the hot
        pattern has launched once through ``JITFunction.run``, or where a direct launch is not possible), and
        whether building it was tried.
    info : dict
        What the launch is, for messages (rows, K, npad, n_env, dtype, mode, ...).
    """

    __slots__ = ("plan", "kernel", "grid", "scalars", "ws_args", "ws_offsets", "key", "warm", "ws_views", "info",
                 "module", "ws_nbytes", "default_ws_align", "hot", "hot_align", "direct", "direct_tried")

    def __init__(self, plan: Plan, module, rows: int, scalars: dict, pointer_dtypes: dict, device: torch.device,
                 ws_nbytes: int, info: dict):
        self.plan = plan
        self.module = module
        kernel = module.kernel()
        self.kernel = kernel
        self.grid = module.grid(plan, rows)
        self.scalars = scalars
        self.ws_args = tuple(module.WORKSPACE_ARGS)
        self.ws_nbytes = ws_nbytes
        if self.ws_args:
            # Where each view starts inside a workspace, measured on a meta tensor (no memory, no device work).
            views = module.workspace_kwargs(plan, rows, torch.empty(max(ws_nbytes, 1), dtype=torch.uint8,
                                                                    device="meta"))
            self.ws_offsets = tuple(views[n].storage_offset() * views[n].element_size() for n in self.ws_args)
            dtypes = dict(pointer_dtypes, **{n: views[n].dtype for n in self.ws_args})
        else:
            self.ws_offsets = ()
            dtypes = pointer_dtypes
        # The library workspace comes from the caching allocator, whose blocks are at least 512-byte aligned.
        self.default_ws_align = alignment(self.ws_offsets)
        self.key = static_key(kernel, str(device), scalars, dtypes)
        self.warm: Set[tuple] = set()
        self.hot_align = ((True,) * 5, self.default_ws_align)
        self.hot = False
        self.ws_views = BoundedCache(16)
        self.direct = None
        self.direct_tried = False
        self.info = info

    def full_key(self, align: tuple) -> tuple:
        return (self.key, align)

    def describe(self) -> str:
        i = self.info
        return (f"rows={i['rows']}, K={i['k']}, npad={i['npad']}, row_stride={i['row_stride']}, "
                f"n_env={i['n_env']} (family '{self.plan.family}'), dtype={i['dtype']}, "
                f"{'hint-free' if i['hint_free'] else 'hinted'}, {'with' if i['has_values'] else 'without'} values, "
                f"next_n={i['next_n']}, compress_ratio={i['compress_ratio']}, device={i['device']}")

    def warmup_call(self) -> str:
        i = self.info
        if not i["varlen"] or i["max_seq_len"] is None:
            return "run the op once outside capture with the same arguments"
        parts = [f"num_rows=[{i['rows']}]", f"k={i['k']}", f"npad={i['npad']}", f"max_seq_len={i['max_seq_len']}"]
        if i["row_stride"] != i["npad"]:
            parts.append(f"row_stride={i['row_stride']}")
        if i["next_n"] != 1:
            parts.append(f"next_n={i['next_n']}")
        if i["compress_ratio"] != 1:
            parts.append(f"compress_ratio={i['compress_ratio']}")
        parts += [f"hinted=[{not i['hint_free']}]", f"with_values=[{i['has_values']}]", f"dtype={i['dtype']}",
                  f"device='{i['device']}'"]
        return f"call gvr_topk.warmup({', '.join(parts)})"

    def cold_error(self, align: tuple) -> ColdLauncherError:
        names = [n for n, ok in zip(self.pointer_names(), align[0] + align[1]) if not ok]
        extra = ""
        if names:
            extra = (f" (note: {', '.join(names)} not {ALIGN}-byte aligned; warm up with equally aligned tensors, "
                     f"e.g. by running the op once outside capture on the same buffers)")
        return ColdLauncherError(
            f"gvr_topk: no compiled launcher for {self.describe()} during CUDA-graph capture (compiling inside "
            f"capture would break it){extra}; {self.warmup_call()} before capture")

    def pointer_names(self) -> tuple:
        from .common import POINTER_ARGS

        return POINTER_ARGS + self.ws_args
