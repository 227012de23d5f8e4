"""Launcher of the register-resident family: one program per row."""

from ..dispatch import Plan
from ..kernels.reg import _gvr_reg_kernel
from .common import LaunchArgs


def launch_reg(plan: Plan, args: LaunchArgs, workspace=None) -> None:
    rows = args.logits.shape[0]
    _gvr_reg_kernel[(rows,)](**args.common_kwargs(), BLOCK=plan.block, num_warps=plan.num_warps)
