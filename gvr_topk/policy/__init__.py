"""Per-model deployment configs (YAML) and the hint policy they define.

* :func:`load_config` / :func:`default_config_path` / :func:`shipped_configs`: find, parse and validate files.
* :class:`GvrConfig`: the validated config (schema in :mod:`gvr_topk.policy.schema`).
* :class:`HintResolver`: per step, decides which requests get a hint and hands the op its ``pre_idx``.

Not imported by ``gvr_topk/__init__``; import ``gvr_topk.policy`` explicitly.
"""

from .loader import ConfigError
from .loader import apply_overrides
from .loader import config_dir
from .loader import config_path
from .loader import default_config_path
from .loader import load_config
from .loader import parse_override
from .loader import shipped_configs
from .loader import validate_config
from .resolver import HintResolver
from .resolver import StepHints
from .schema import SCENARIOS
from .schema import GvrConfig

__all__ = [
    "SCENARIOS",
    "ConfigError",
    "GvrConfig",
    "HintResolver",
    "StepHints",
    "apply_overrides",
    "config_dir",
    "config_path",
    "default_config_path",
    "load_config",
    "parse_override",
    "shipped_configs",
    "validate_config",
]
