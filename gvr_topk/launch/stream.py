"""Launcher of the streaming family: per chunk of rows, three kernels (threshold, stage, select; the select launched
twice, accept then ladder, with ``tuning.STREAM_SELECT_APART``).

The launcher cache treats a family as one kernel launched with keyword arguments; :class:`StreamLaunch` presents
the three kernels that way: one ``run`` that takes the union of their arguments and launches each kernel with its
own, chunk by chunk (``tuning.STREAM_CHUNK_ROWS`` rows per chunk bound the workspace whatever the batch).
"""

import torch

from .. import tuning
from .. import workspace as ws
from ..dispatch import Plan
from ..kernels import _common
from ..kernels import stream as _kernels
from . import direct
from .common import param_names
from .common import stage_lanes
from .common import union_signature

#: Pointer arguments this family takes from the workspace, in launch order.
WORKSPACE_ARGS = ("ws_count_ptr", "ws_thr_ptr", "ws_keys_ptr", "ws_cols_ptr", "ws_flag_ptr")
#: Arguments of the composite launch that are not kernel arguments (how the three launches are shaped).
_SHAPE_ARGS = ("num_rows", "chunk_rows", "stage_warps", "threshold_warps", "select_warps", "select_maxnreg",
               "stage_maxnreg")


class StreamLaunch:
    """The three kernels of the family behind one ``run(grid=..., warmup=False, **kwargs)`` (the select kernel
    launched twice per chunk when ``tuning.STREAM_SELECT_APART`` is on).

    ``fn`` carries the union of the kernels' parameters (constexprs annotated as such), which is what the launcher
    cache reads to build compile keys; a key therefore covers the variants of all three kernels at once.
    """

    def __init__(self, threshold, stage, select):
        self.kernels = (threshold, stage, select)
        self.names = tuple(frozenset(param_names(k)) for k in self.kernels)
        # row0 is set per chunk here, never by the caller.
        self.fn = union_signature("stream_launch", self.kernels, add=_SHAPE_ARGS, drop=("row0",))
        self.fn.__module__ = __name__

    def run(self, *, grid=None, warmup=False, **kw) -> direct.Composite:
        """Launch the kernels chunk by chunk (threshold, stage, select, and the select's ladder launch when
        SELECT_PART is set);
        returns every launch made (``direct.Composite``), from which the launcher cache builds direct launches."""
        rows, chunk = kw["num_rows"], kw["chunk_rows"]
        threshold, stage, select = self.kernels
        n_thr, n_stage, n_select = self.names
        warps = (kw["threshold_warps"], kw["stage_warps"], kw["select_warps"])
        a_thr = {k: v for k, v in kw.items() if k in n_thr}
        a_stage = {k: v for k, v in kw.items() if k in n_stage}
        a_select = {k: v for k, v in kw.items() if k in n_select}
        split = kw["split"]
        # A register cap on the select (0: none) trades spills for more resident programs per SM.
        cap = dict(maxnreg=kw["select_maxnreg"]) if kw["select_maxnreg"] else {}
        stage_cap = dict(maxnreg=kw["stage_maxnreg"]) if kw["stage_maxnreg"] else {}
        # Programmatic dependent launch (kernels compiled with PDL wait for the grid before them at their start).
        dep = dict(launch_pdl=True) if kw["PDL"] else {}
        # The accept launch (SELECT_PART 2 or 3) never reads the hint, only the ladder launch does: hinted calls
        # launch its hint-free variant, one compiled kernel fewer per select geometry.
        a_accept = dict(a_select, HINT_FREE=True) if a_select["SELECT_PART"] else a_select
        # (kernel, programs per row or None for a 1-D grid of rows, arguments, launch options) in launch order.
        launches = [(threshold, None, a_thr, dict(num_warps=warps[0])),
                    (stage, split, a_stage, dict(num_warps=warps[1], **stage_cap, **dep)),
                    (select, None, a_accept, dict(num_warps=warps[2], **cap, **dep))]
        if a_select["SELECT_PART"]:
            # The select as two launches (``tuning.STREAM_SELECT_APART``): the accept launch above, then the ladder
            # launch for the rows it marked, a whole uncapped SELECT_WARPS program each (few rows, one per SM).
            ladder = dict(a_select, SELECT_PART=1, REFINE_LANES=stage_lanes(kw["REFINE_TILE"], tuning.SELECT_WARPS))
            launches.append((select, None, ladder, dict(num_warps=tuning.SELECT_WARPS, **dep)))
        made = []
        for row0 in range(0, rows, chunk):
            m = min(chunk, rows - row0)
            for kernel, per_row, args, opts in launches:
                grid_ = (m,) if per_row is None else (per_row, m)
                compiled = kernel[grid_](row0=row0, **opts, **args)
                made.append((kernel, compiled, grid_, {k: v for k, v in args.items() if not k.endswith("_ptr")}
                             | {"row0": row0}))
        return direct.Composite(made)


_LAUNCH = None


def kernel() -> StreamLaunch:
    """The family's launch object (built once; kernels looked up at first use so a reloaded module is picked up)."""
    global _LAUNCH
    if _LAUNCH is None or _LAUNCH.kernels[1] is not _kernels._gvr_stage_kernel:
        _LAUNCH = StreamLaunch(_kernels._gvr_threshold_kernel, _kernels._gvr_stage_kernel,
                               _kernels._gvr_select_kernel)
    return _LAUNCH


def grid(plan: Plan, rows: int) -> tuple:
    return (rows,)  # informational: StreamLaunch shapes its own three grids


def pdl_supported(device) -> bool:
    """Whether the stage and select kernels are launched as programmatic dependents on ``device``
    (``tuning.STREAM_PDL`` on, a Triton with grid dependency control, a CUDA device of compute capability 9.0 or
    later, compiled kernels rather than Triton's interpreter)."""
    if not (tuning.STREAM_PDL and _common.HAS_GDC) or device is None or torch.device(device).type != "cuda":
        return False
    from ..api import kernels_interpreted

    if kernels_interpreted():
        return False
    # Once per prepared launch (its entry), never per call.
    return torch.cuda.get_device_capability(torch.device(device))[0] >= 9


def family_kwargs(plan: Plan, rows: int, device=None) -> dict:
    """Launch arguments of this family that do not change from call to call (ints, constexprs, warps) on ``device``
    (a ``torch.device``; None: no programmatic dependent launch)."""
    # SELECT_PART 1 is the ladder launch's own mode: as the setting it would select no row at all.
    if tuning.STREAM_SELECT_APART not in (0, 2, 3):
        raise ValueError(f"tuning.STREAM_SELECT_APART: expected 0, 2 or 3, got {tuning.STREAM_SELECT_APART!r}")
    if tuning.STREAM_STAGE_SPARSE not in (0, 1, 2, 3):
        raise ValueError(f"tuning.STREAM_STAGE_SPARSE: expected 0, 1, 2 or 3, got {tuning.STREAM_STAGE_SPARSE!r}")
    if tuning.STREAM_ROW_WAIT not in (0, 1):
        raise ValueError(f"tuning.STREAM_ROW_WAIT: expected 0 or 1, got {tuning.STREAM_ROW_WAIT!r}")
    if tuning.STREAM_ACCEPT_LARGE_BIN not in (0, 1):
        raise ValueError(f"tuning.STREAM_ACCEPT_LARGE_BIN: expected 0 or 1, got {tuning.STREAM_ACCEPT_LARGE_BIN!r}")
    # Survivors-only staging where a tile admits few scores: rows long enough for the long tile (NOTES entry 22).
    sparse = tuning.STREAM_STAGE_SPARSE if plan.block >= tuning.STREAM_TILE else 0
    return dict(aim=plan.aim, TILE=plan.block, CAP=plan.cap, SAMPLE=plan.sample, SAMPLE_GROUP=tuning.SAMPLE_GROUP,
                SAMPLE_MAXIMA=plan.maxima, MIN_TILE=tuning.SELECT_MIN_TILE, split=plan.split,
                PDL=pdl_supported(device), num_rows=rows, chunk_rows=tuning.STREAM_CHUNK_ROWS,
                stage_warps=plan.num_warps, threshold_warps=tuning.THRESHOLD_WARPS, select_warps=plan.select_warps,
                select_maxnreg=plan.select_maxnreg, stage_maxnreg=tuning.STREAM_STAGE_MAXNREG,
                REFINE_TILE=tuning.REFINE_TILE,
                LANES=stage_lanes(plan.block, plan.num_warps),
                REFINE_LANES=stage_lanes(tuning.REFINE_TILE, plan.select_warps), TIE_RUNG=tuning.TIE_RUNG,
                SELECT_CHUNK=tuning.SELECT_CHUNK, STAGE_SPARSE=sparse,
                SELECT_PART=tuning.STREAM_SELECT_APART, ROW_WAIT=int(tuning.STREAM_ROW_WAIT),
                ACCEPT_LARGE_BIN=int(tuning.STREAM_ACCEPT_LARGE_BIN))


def workspace_kwargs(plan: Plan, rows: int, workspace) -> dict:
    """int32 views of a byte ``workspace``, by kernel argument name."""
    counts, thresholds, flags, keys, cols = ws.stream_views(workspace, plan, rows)
    return dict(ws_count_ptr=counts, ws_thr_ptr=thresholds, ws_keys_ptr=keys, ws_cols_ptr=cols, ws_flag_ptr=flags)
