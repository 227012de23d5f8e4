"""Launcher of the split family: grid (SPLIT, rows)."""

from .. import tuning
from .. import workspace as ws
from ..dispatch import Plan
from ..kernels import split as _kernels
from .common import stage_lanes

#: Pointer arguments this family takes from the workspace, in launch order.
WORKSPACE_ARGS = ("ws_count_ptr", "ws_keys_ptr", "ws_cols_ptr")


def kernel():
    """The family's ``@triton.jit`` kernel (looked up at call time so a reloaded kernel module is picked up)."""
    return _kernels._gvr_split_kernel


def grid(plan: Plan, rows: int) -> tuple:
    return (plan.split, rows)


def family_kwargs(plan: Plan, rows: int, device=None) -> dict:
    """Launch arguments of this family that do not change from call to call (ints, constexprs, num_warps); the
    same on every device."""
    return dict(aim=plan.aim, TILE=plan.block, CAP=plan.cap, SAMPLE=plan.sample, SAMPLE_GROUP=tuning.SAMPLE_GROUP,
                MIN_TILE=tuning.SELECT_MIN_TILE, SPLIT=plan.split,
                LANES=stage_lanes(plan.block, plan.num_warps), TIE_RUNG=tuning.TIE_RUNG, num_warps=plan.num_warps)


def workspace_kwargs(plan: Plan, rows: int, workspace) -> dict:
    """int32 views of a byte ``workspace``, by kernel argument name."""
    counters, keys, cols = ws.views(workspace, plan, rows)
    return dict(ws_count_ptr=counters, ws_keys_ptr=keys, ws_cols_ptr=cols)
