"""Launcher of the streaming family: min(rows, STREAM_MAX_PROGRAMS) programs, grid-stride over rows."""

from .. import tuning
from .. import workspace as ws
from ..dispatch import Plan
from ..kernels import stream as _kernels
from .common import LaunchArgs

#: Pointer arguments this family takes from the workspace, in launch order.
WORKSPACE_ARGS = ("ws_keys_ptr", "ws_cols_ptr")


def kernel():
    """The family's ``@triton.jit`` kernel (looked up at call time so a reloaded kernel module is picked up)."""
    return _kernels._gvr_stream_kernel


def grid(plan: Plan, rows: int) -> tuple:
    return (min(rows, tuning.STREAM_MAX_PROGRAMS),)


def family_kwargs(plan: Plan, rows: int) -> dict:
    """Launch arguments of this family that do not change from call to call (ints, constexprs, num_warps)."""
    return dict(num_rows=rows, aim=plan.aim, TILE=plan.block, CAP=plan.cap, SAMPLE=plan.sample,
                num_warps=plan.num_warps)


def workspace_kwargs(plan: Plan, rows: int, workspace) -> dict:
    """int32 views of a byte ``workspace``, by kernel argument name."""
    _, keys, cols = ws.views(workspace, plan, rows)
    return dict(ws_keys_ptr=keys, ws_cols_ptr=cols)


def launch_stream(plan: Plan, args: LaunchArgs, workspace) -> None:
    rows = args.logits.shape[0]
    kernel()[grid(plan, rows)](**args.common_kwargs(), **workspace_kwargs(plan, rows, workspace),
                               **family_kwargs(plan, rows))
