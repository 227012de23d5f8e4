"""Launcher of the split family: grid (SPLIT, rows), plain or cooperative (``kernels/split.py``).

Three ways to run a launch, chosen once per prepared launch by :func:`coop_mode` (``COOP`` below):

* 0, plain: ``_gvr_split_kernel``; the last program of a row selects alone.
* 1, cooperative: ``_gvr_split_coop_kernel`` in one cooperative launch (spin barriers between its parts).
* 2, phased: the cooperative kernel's three parts as separate launches, for Triton's interpreter, where a spin
  barrier never returns (programs run one after another); on a GPU only when asked for (``tuning.SPLIT_COOP``).
"""

import torch

from .. import tuning
from .. import workspace as ws
from ..dispatch import Plan
from ..kernels import split as _kernels
from . import direct
from .common import param_names
from .common import stage_lanes
from .common import union_signature

#: Pointer arguments this family takes from the workspace, in launch order.
WORKSPACE_ARGS = ("ws_count_ptr", "ws_keys_ptr", "ws_cols_ptr", "ws_coop_ptr")
#: The modes of ``COOP``.
PLAIN, FUSED, PHASED = 0, 1, 2


class SplitLaunch:
    """The plain and the cooperative kernel behind one ``run(grid=..., warmup=False, **kwargs)``; ``fn`` carries
    the union of their parameters (plus ``COOP``), which the launcher cache reads to build compile keys."""

    def __init__(self, plain, coop):
        self.kernels = (plain, coop)
        self.names = tuple(frozenset(param_names(k)) for k in self.kernels)
        # PHASE is set per launch here, never by the caller.
        self.fn = union_signature("split_launch", self.kernels, add=("COOP",), drop=("PHASE",))
        self.fn.__module__ = __name__

    def run(self, *, grid=None, warmup=False, **kw) -> direct.Composite:
        """Launch the row grid in the mode ``kw["COOP"]``; returns every launch made (``direct.Composite``)."""
        mode = kw["COOP"]
        plain, coop = self.kernels
        kernel = plain if mode == PLAIN else coop
        names = self.names[0] if mode == PLAIN else self.names[1]
        args = {k: v for k, v in kw.items() if k in names}
        opts = dict(num_warps=kw["num_warps"])
        if mode == FUSED:
            opts["launch_cooperative_grid"] = True
        # PHASE 2 holds the slice histograms (without WINDOW) and the shared tie and first rungs' restaging.
        phases = (None,) if mode == PLAIN else (0,) if mode == FUSED else (1, 2, 3)
        made = []
        for phase in phases:
            extra = {} if phase is None else {"PHASE": phase}
            compiled = kernel[grid](**opts, **args, **extra)
            made.append((kernel, compiled, grid, {k: v for k, v in args.items() if not k.endswith("_ptr")} | extra))
        return direct.Composite(made)


_LAUNCH = None


def kernel() -> SplitLaunch:
    """The family's launch object (built once; kernels looked up at first use so a reloaded module is picked up)."""
    global _LAUNCH
    if _LAUNCH is None or _LAUNCH.kernels[1] is not _kernels._gvr_split_coop_kernel:
        _LAUNCH = SplitLaunch(_kernels._gvr_split_kernel, _kernels._gvr_split_coop_kernel)
    return _LAUNCH


def grid(plan: Plan, rows: int) -> tuple:
    return (plan.split, rows)


def coop_mode(plan: Plan, rows: int, device=None) -> int:
    """How a launch of ``rows`` rows runs (PLAIN, FUSED or PHASED) on ``device`` (a ``torch.device`` or None).

    PLAIN unless the plan asks for the cooperative form (``plan.coop``, from ``dispatch``; off with
    ``tuning.SPLIT_COOP`` "off"). That form needs every program resident at once: at most ``workspace.coop_rows()``
    rows and at most one program per SM of the device (its programs fill an SM each), else PLAIN. Under Triton's
    interpreter (or with no CUDA device given) it is PHASED; on a GPU FUSED, or PHASED where ``SPLIT_COOP`` asks for
    it."""
    if not plan.coop or tuning.SPLIT_COOP == "off" or rows > ws.coop_rows():
        return PLAIN
    from ..api import kernels_interpreted

    if device is None or torch.device(device).type != "cuda" or kernels_interpreted():
        return PHASED
    if plan.split * rows > torch.cuda.get_device_properties(torch.device(device)).multi_processor_count:
        return PLAIN
    return PHASED if tuning.SPLIT_COOP == "phased" else FUSED


def slice_lanes(plan: Plan) -> int:
    """Lanes of a cooperative program's slice of the staged candidates: a power of two holding ceil(CAP / SPLIT),
    at least one per thread (a smaller tile would replicate lanes across threads)."""
    need = max(-(-plan.cap // plan.split), 32 * plan.num_warps)
    return 1 << (need - 1).bit_length()


def family_kwargs(plan: Plan, rows: int, device=None) -> dict:
    """Launch arguments of this family that do not change from call to call (ints, constexprs, num_warps) on
    ``device`` (a ``torch.device``; None: as under the interpreter)."""
    if tuning.SPLIT_BALANCE not in (0, 1):
        raise ValueError(f"tuning.SPLIT_BALANCE: expected 0 or 1, got {tuning.SPLIT_BALANCE!r}")
    for name in ("SPLIT_COOP_WINDOW", "SPLIT_COOP_LOW_RUNG", "SPLIT_COOP_OUTLINE"):
        if getattr(tuning, name) not in (0, 1):
            raise ValueError(f"tuning.{name}: expected 0 or 1, got {getattr(tuning, name)!r}")
    rank_max = tuning.SPLIT_COOP_RANK_MAX
    if type(rank_max) is not int or rank_max < 0 or rank_max & (rank_max - 1) or rank_max > tuning.CROSS_CAP:
        raise ValueError(f"tuning.SPLIT_COOP_RANK_MAX: expected 0 or a power of two <= CROSS_CAP "
                         f"({tuning.CROSS_CAP}), got {rank_max!r}")
    return dict(aim=plan.aim, TILE=plan.block, CAP=plan.cap, SAMPLE=plan.sample, SAMPLE_GROUP=tuning.SAMPLE_GROUP,
                SAMPLE_MAXIMA=plan.maxima, MIN_TILE=tuning.SELECT_MIN_TILE, SPLIT=plan.split,
                LANES=stage_lanes(plan.block, plan.num_warps), TIE_RUNG=tuning.TIE_RUNG,
                REFINE_TILE=tuning.SPLIT_TILE, num_warps=plan.num_warps,
                SLICE=slice_lanes(plan), COOP_WORDS=ws.coop_words(), WINDOW=int(tuning.SPLIT_COOP_WINDOW),
                RANK_MAX=rank_max, COOP=coop_mode(plan, rows, device), BALANCE=int(tuning.SPLIT_BALANCE),
                ROWS_BLOCK=rows_block(rows), LOW_RUNG=int(tuning.SPLIT_COOP_LOW_RUNG),
                OUTLINE=int(tuning.SPLIT_COOP_OUTLINE))


def rows_block(rows: int) -> int:
    """Lanes on which a program reads every row's length to share out the staging (``tuning.SPLIT_BALANCE``; the
    kernels use it on varlen launches only): the power of two that holds ``rows``, 1 when the option is off (one
    compiled variant for every row count then)."""
    return 1 << (rows - 1).bit_length() if tuning.SPLIT_BALANCE else 1


def workspace_kwargs(plan: Plan, rows: int, workspace) -> dict:
    """int32 views of a byte ``workspace``, by kernel argument name."""
    counters, keys, cols = ws.views(workspace, plan, rows)
    return dict(ws_count_ptr=counters, ws_keys_ptr=keys, ws_cols_ptr=cols, ws_coop_ptr=ws.coop_view(workspace))
