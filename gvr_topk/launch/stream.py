"""Launcher of the streaming family: min(rows, STREAM_MAX_PROGRAMS) programs, grid-stride over rows."""

from .. import tuning
from .. import workspace as ws
from ..dispatch import Plan
from ..kernels.stream import _gvr_stream_kernel
from .common import LaunchArgs


def launch_stream(plan: Plan, args: LaunchArgs, workspace) -> None:
    rows = args.logits.shape[0]
    programs = min(rows, tuning.STREAM_MAX_PROGRAMS)
    _, keys, cols = ws.views(workspace, plan, rows)
    _gvr_stream_kernel[(programs,)](
        **args.common_kwargs(), ws_keys_ptr=keys, ws_cols_ptr=cols, num_rows=rows, aim=plan.aim,
        TILE=plan.block, CAP=plan.cap, SAMPLE=plan.sample, num_warps=plan.num_warps)
