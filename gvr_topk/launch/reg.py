"""Launcher of the register-resident family: one program per row (no workspace)."""

from .. import tuning
from ..dispatch import Plan
from ..kernels import reg as _kernels

#: Pointer arguments this family takes from the workspace (none: the row lives in registers).
WORKSPACE_ARGS = ()


def kernel():
    """The family's ``@triton.jit`` kernel (looked up at call time so a reloaded kernel module is picked up)."""
    return _kernels._gvr_reg_kernel


def grid(plan: Plan, rows: int) -> tuple:
    return (rows,)


def family_kwargs(plan: Plan, rows: int, device=None) -> dict:
    """Launch arguments of this family that do not change from call to call (ints, constexprs, num_warps); the
    same on every device."""
    cap = dict(maxnreg=plan.maxnreg) if plan.maxnreg else {}
    # Without tuning.REG_USE_HINT a hinted call runs the hint-free kernel too (this overrides the common HINT_FREE).
    hint = {} if tuning.REG_USE_HINT else dict(HINT_FREE=True)
    return dict(BLOCK=plan.block, TAIL=plan.tail, num_warps=plan.num_warps, **cap, **hint)


def workspace_kwargs(plan: Plan, rows: int, workspace) -> dict:
    return {}
