"""gvr-topk: exact top-k selection for sparse-attention decode (guess-verify-refine, Triton).

Importing the package registers ``torch.ops.gvr.*``. Public surface:

* :func:`run_varlen`, :func:`run`, :func:`topk`: the op (varlen, batch-uniform, functional).
* :func:`route`, :class:`Plan`, :data:`FAMILIES`: the pure dispatcher.
* :func:`workspace_bytes`: size of a caller-owned workspace.
* :mod:`gvr_topk.reference`: the pure-torch oracle with the same contract.
"""

from . import ops  # noqa: F401  (registers torch.ops.gvr)
from . import reference
from .api import kernels_interpreted
from .api import run
from .api import run_varlen
from .api import topk
from .dispatch import FAMILIES
from .dispatch import Plan
from .dispatch import plan_for
from .dispatch import route
from .workspace import workspace_bytes

__version__ = "0.1.0"

__all__ = [
    "FAMILIES",
    "Plan",
    "kernels_interpreted",
    "plan_for",
    "reference",
    "route",
    "run",
    "run_varlen",
    "topk",
    "workspace_bytes",
]
