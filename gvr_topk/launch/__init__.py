"""Host launchers: one module per kernel family, mirroring ``gvr_topk.kernels``. No ``tl`` code here."""

from .common import LaunchArgs
from .common import launch

__all__ = ["LaunchArgs", "launch"]
