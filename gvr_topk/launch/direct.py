"""Direct launch of an already compiled Triton kernel (host code only).

``JITFunction.run`` binds and specialises every argument on every call (the generated binder, the compile-cache
key, the launch metadata) before it reaches the compiled kernel's launcher. For a prepared launch all of that is
fixed, so the launcher cache keeps the compiled kernel and calls its launcher with the fixed arguments stored once
and the per-call pointers passed as integers. Measured on the H200 host (1 x 16387, K=2048, split family, Triton
3.6, ``benchmarks/NOTES.md`` entry 13): 21.4 us of host time per launch through ``JITFunction.run``, 12.6 us
direct.

Built only where it is the same launch as the regular path:

* Triton 3.6 to 3.9, whose launcher takes the grid, stream, function, packed metadata, launch metadata and the two
  launch hooks, then every bound argument in signature order (constexprs included): 3.6 run on the H200, 3.9 read
  in its ``JITFunction.run`` (the same call). Other versions keep the regular path until checked;
* no launch hooks installed when it is built (a profiler that installs hooks sees launches prepared afterwards
  through the regular path; ``gvr_topk.clear_launch_cache()`` re-prepares every launch);
* a kernel whose first parameters are the per-call pointers, followed only by arguments the prepared launch fixes.

Anything else keeps the regular path (``build`` returns None), which is also what the Triton interpreter uses, and
so does ``GVR_TOPK_DIRECT_LAUNCH=0``.

A family made of several dependent kernels (the streaming family's threshold, stage and select per chunk of rows)
hands back a :class:`Composite` of its launches; ``build`` turns it into a :class:`DirectSequence` that makes the
same launches in the same order, each kernel taking its own subset of the call's pointers. Measured on the H200
(``benchmarks/NOTES.md`` entry 15): the streaming family's eager host time per call, 100-190 us through
``JITFunction.run`` (three launches with ~30 arguments each), is 27-53 us direct.
"""

import inspect
import os
from typing import Optional
from typing import Sequence
from typing import Union

import triton

#: Direct launches on (default) or off: ``GVR_TOPK_DIRECT_LAUNCH=0`` in the environment keeps every launch on the
#: regular path (debugging, A/B timing); takes effect for launches prepared afterwards
#: (``gvr_topk.clear_launch_cache()``).
ENABLED = os.environ.get("GVR_TOPK_DIRECT_LAUNCH", "1") != "0"
#: Triton versions (major, minor) whose compiled-kernel launcher is known to take every bound argument (constexprs
#: included) after the hooks, as ``JITFunction.run`` calls it.
MIN_TRITON, MAX_TRITON = (3, 6), (3, 9)


def triton_version() -> tuple:
    """(major, minor) of the installed Triton."""
    parts = []
    for p in triton.__version__.split(".")[:2]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _hook_set(hook) -> bool:
    # Triton 3.6 keeps None when no hook is set; newer versions keep a chain of hooks (``calls``), empty when none.
    if hook is None:
        return False
    calls = getattr(hook, "calls", None)
    return calls is None or len(calls) > 0


def hooks_installed() -> bool:
    """True when a launch enter/exit hook is set (a profiler watching launches), or when it cannot be told."""
    try:
        from triton import knobs

        return _hook_set(knobs.runtime.launch_enter_hook) or _hook_set(knobs.runtime.launch_exit_hook)
    except Exception:  # an API without knobs: keep the regular path
        return True


class DirectLaunch:
    """One compiled kernel, its grid and its fixed trailing arguments; called with the stream and the pointers.

    Parameters
    ----------
    launcher : callable
        The compiled kernel's launcher (``CompiledKernel.run``).
    function, metadata
        ``CompiledKernel.function`` (the loaded CUDA function) and ``CompiledKernel.packed_metadata``.
    grid : tuple of int
        Launch grid, padded to three dimensions.
    tail : tuple
        Every argument after the pointers, in signature order (ints and constexpr values).
    """

    __slots__ = ("launcher", "function", "metadata", "grid", "tail", "pick")

    def __init__(self, launcher, function, metadata, grid: tuple, tail: tuple):
        self.launcher = launcher
        self.function = function
        self.metadata = metadata
        self.grid = grid
        self.tail = tail
        #: Positions of this kernel's pointers among the call's (None: all of them, in order); see DirectSequence.
        self.pick = None

    def __call__(self, stream: int, *ptrs: int) -> None:
        """Launch on the raw CUDA ``stream`` handle with the pointer arguments ``ptrs`` (int addresses, in
        signature order)."""
        g = self.grid
        if self.pick is not None:
            ptrs = [ptrs[i] for i in self.pick]
        self.launcher(g[0], g[1], g[2], stream, self.function, self.metadata, None, None, None, *ptrs, *self.tail)


class Composite:
    """What a family of several kernels returns from one regular launch: every launch it made, in order, as
    ``(kernel, compiled, grid, scalars)`` (``scalars``: that launch's non-pointer arguments by name)."""

    __slots__ = ("parts",)

    def __init__(self, parts: Sequence[tuple]):
        self.parts = tuple(parts)


class DirectSequence:
    """Direct launches made one after the other on the same stream, called like one :class:`DirectLaunch` with
    all of the call's pointers (each part picks its own)."""

    __slots__ = ("parts",)

    def __init__(self, parts: Sequence[DirectLaunch]):
        self.parts = tuple(parts)

    def __call__(self, stream: int, *ptrs: int) -> None:
        for part in self.parts:
            part(stream, *ptrs)


def build(compiled, kernel, grid: Sequence[int], scalars: dict, pointer_names: Sequence[str]
          ) -> Union[DirectLaunch, DirectSequence, None]:
    """A :class:`DirectLaunch` of ``compiled`` (what ``kernel.run(...)`` returned), a :class:`DirectSequence` when
    that is a :class:`Composite` (its ``kernel``, ``grid`` and ``scalars`` are then its parts' own), or None where
    the regular path must stay (see the module docstring).

    Parameters
    ----------
    compiled : object
        The return value of ``JITFunction.run`` for this launch (a ``CompiledKernel``; None or anything without a
        launcher under the interpreter).
    kernel : triton.runtime.JITFunction
        The kernel, for its parameter order.
    grid : sequence of int
        The launch grid (1 to 3 dimensions).
    scalars : dict
        Every non-pointer argument of the launch by name (launch options such as ``num_warps`` may be present).
    pointer_names : sequence of str
        The per-call pointer parameters, which must be the kernel's first parameters in this order.
    """
    if isinstance(compiled, Composite):
        return _build_sequence(compiled, pointer_names)
    if not ENABLED or compiled is None or not MIN_TRITON <= triton_version() <= MAX_TRITON or hooks_installed():
        return None
    launcher = getattr(compiled, "run", None)
    function = getattr(compiled, "function", None)
    metadata = getattr(compiled, "packed_metadata", None)
    if not callable(launcher) or function is None or metadata is None:
        return None
    names = list(inspect.signature(getattr(kernel, "fn", kernel)).parameters)
    np = len(pointer_names)
    if tuple(names[:np]) != tuple(pointer_names) or any(n not in scalars for n in names[np:]):
        return None
    if not 1 <= len(grid) <= 3:
        return None
    grid3 = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    return DirectLaunch(launcher, function, metadata, grid3, tuple(scalars[n] for n in names[np:]))


def _build_sequence(composite: Composite, pointer_names: Sequence[str]) -> Optional[DirectSequence]:
    """A :class:`DirectSequence` of every launch of ``composite`` (None where any of them must stay regular). Each
    kernel's leading parameters named in ``pointer_names`` are its pointers; the part picks them by position."""
    parts = []
    for kernel, compiled, grid, scalars in composite.parts:
        names = list(inspect.signature(getattr(kernel, "fn", kernel)).parameters)
        own = []
        for name in names:
            if name not in pointer_names:
                break
            own.append(name)
        part = build(compiled, kernel, grid, scalars, own)
        if part is None:
            return None
        part.pick = tuple(pointer_names.index(name) for name in own)
        parts.append(part)
    return DirectSequence(parts) if parts else None
