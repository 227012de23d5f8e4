"""Launcher of the split family: grid (SPLIT, rows)."""

from .. import workspace as ws
from ..dispatch import Plan
from ..kernels.split import _gvr_split_kernel
from .common import LaunchArgs


def launch_split(plan: Plan, args: LaunchArgs, workspace) -> None:
    rows = args.logits.shape[0]
    counters, keys, cols = ws.views(workspace, plan, rows)
    _gvr_split_kernel[(plan.split, rows)](
        **args.common_kwargs(), ws_count_ptr=counters, ws_keys_ptr=keys, ws_cols_ptr=cols, aim=plan.aim,
        TILE=plan.block, CAP=plan.cap, SAMPLE=plan.sample, SPLIT=plan.split, num_warps=plan.num_warps)
