"""gvr-topk: exact top-k selection for sparse-attention decode (guess-verify-refine, Triton).

Importing the package registers ``torch.ops.gvr.*``. Public surface:

* :func:`run_varlen`, :func:`run`, :func:`topk`: the op (varlen, batch-uniform, functional).
* :func:`route`, :class:`Plan`, :data:`FAMILIES`: the pure dispatcher.
* :func:`workspace_bytes`: size of a caller-owned workspace.
* :func:`warmup`, :func:`warmup_for_config`: compile every launcher before CUDA-graph capture (a capture that meets
  an uncompiled one raises :class:`ColdLauncherError`); :func:`clear_launch_cache`.
* :mod:`gvr_topk.reference`: the pure-torch oracle with the same contract.
"""

from . import ops  # noqa: F401  (registers torch.ops.gvr)
from . import reference
from .api import clear_launch_cache
from .api import kernels_interpreted
from .api import run
from .api import run_varlen
from .api import topk
from .api import warmup
from .api import warmup_for_config
from .dispatch import FAMILIES
from .dispatch import Plan
from .dispatch import plan_for
from .dispatch import route
from .launch.cache import ColdLauncherError
from .workspace import workspace_bytes

__version__ = "0.1.0"

__all__ = [
    "ColdLauncherError",
    "FAMILIES",
    "Plan",
    "clear_launch_cache",
    "kernels_interpreted",
    "plan_for",
    "reference",
    "route",
    "run",
    "run_varlen",
    "topk",
    "warmup",
    "warmup_for_config",
    "workspace_bytes",
]
