"""Load and validate config files; every error names the file and the dotted field path.

Where the files live: the repository's ``configs/`` directory. ``gvr_topk/policy/configs`` is a symbolic link to
it, so the same files are found from an editable install and (once packaged as package data) from a wheel; there
is exactly one copy of each file.
"""

import copy
import os
from pathlib import Path
from typing import Any
from typing import Dict
from typing import Iterable
from typing import List
from typing import Mapping
from typing import Optional
from typing import Tuple
from typing import Union

import yaml
from pydantic import ValidationError

from .schema import GvrConfig

#: Model config used when none is named (the README's demo and the examples).
DEFAULT_MODEL = "deepseek-v3.2"

PathLike = Union[str, os.PathLike]


class ConfigError(ValueError):
    """A config file failed to load or validate.

    Attributes
    ----------
    source : str
        The file (or ``'<dict>'``) that failed.
    problems : list of (str, str)
        ``(dotted field path, message)`` per problem; the path is ``''`` for file-level problems.
    """

    def __init__(self, source: str, problems: List[Tuple[str, str]]):
        self.source = source
        self.problems = problems
        lines = [f"{source}: {path}: {msg}" if path else f"{source}: {msg}" for path, msg in problems]
        super().__init__("\n".join(lines))


def config_dir() -> Path:
    """Directory of the shipped configs (``gvr_topk/policy/configs``, a link to the repository's ``configs/``)."""
    return Path(__file__).resolve().parent / "configs"


def shipped_configs() -> List[Path]:
    """Every shipped ``*.yaml`` config, sorted by name."""
    return sorted(p.resolve() for p in config_dir().glob("*.yaml"))


def default_config_path() -> Path:
    """Path of the default model config (DeepSeek-V3.2)."""
    return config_path(DEFAULT_MODEL)


def config_path(name_or_path: PathLike) -> Path:
    """Resolve a shipped config name (``'deepseek-v4-pro'``) or a file path to a path.

    Raises
    ------
    FileNotFoundError
        Neither an existing file nor a shipped config name; the message lists the shipped names.
    """
    p = Path(name_or_path)
    if p.is_file():
        return p
    # A bare name (no directory part, no .yaml) names a shipped config; 'deepseek-v3.2' has a dot, so test the
    # string rather than Path.suffix.
    text = os.fspath(name_or_path)
    if os.sep not in text and not text.endswith((".yaml", ".yml")):
        shipped = config_dir() / f"{text}.yaml"
        if shipped.is_file():
            return shipped.resolve()  # through the link: report the repository's configs/ path
    names = [q.stem for q in shipped_configs()]
    raise FileNotFoundError(f"gvr_topk: config '{name_or_path}': expected an existing file or one of {names}")


class _UniqueKeyLoader(yaml.SafeLoader):
    """Safe YAML loader that rejects a key given twice in one mapping (plain PyYAML keeps the last silently)."""


def _mapping_without_duplicates(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {seen[key] + 1})", key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def _dotted(loc: Iterable[Any]) -> str:
    return ".".join(str(p) for p in loc)


def _problems(err: ValidationError) -> List[Tuple[str, str]]:
    out = []
    for e in err.errors():
        loc = list(e["loc"])
        ctx = e.get("ctx") or {}
        if e["type"] == "cross_field":
            # Cross-field rules name their field relative to the model that raised them.
            loc += ctx["field"].split(".")
            msg = ctx["msg"]
        else:
            msg = e["msg"]
            if e["type"] == "extra_forbidden":
                msg = "unknown key (not part of the schema; check the spelling)"
            elif e["type"] == "missing":
                msg = "required key is missing"
            elif not isinstance(e.get("input"), (dict, list)):
                msg += f", got {e['input']!r} ({type(e['input']).__name__})"
        out.append((_dotted(loc), msg))
    return out


def validate_config(data: Any, source: str = "<dict>") -> GvrConfig:
    """Validate already-parsed config data.

    Parameters
    ----------
    data : Any
        The parsed YAML document (a mapping).
    source : str
        Name used in error messages (the file path).

    Returns
    -------
    GvrConfig
        The validated, immutable config.

    Raises
    ------
    ConfigError
        Naming ``source`` and the dotted path of every bad field.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(source, [("", f"expected a YAML mapping at the top level, got {type(data).__name__}")])
    try:
        return GvrConfig.model_validate(dict(data))
    except ValidationError as err:
        raise ConfigError(source, _problems(err)) from None


def read_yaml(path: PathLike) -> Any:
    """Parse one YAML file with duplicate keys rejected; parse errors become :class:`ConfigError`."""
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.load(f, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as err:
        raise ConfigError(str(path), [("", f"not valid YAML: {err}")]) from None


def parse_override(text: str) -> Tuple[str, Any]:
    """Split ``'dotted.key=value'``; the value is parsed as a YAML scalar/flow value (``null`` deletes the key).

    Raises
    ------
    ValueError
        No ``=`` or an empty key.
    """
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"gvr_topk: override '{text}': expected 'dotted.key=value', e.g. gvr_topk.mode=hint_free")
    return key.strip(), yaml.safe_load(value)


def apply_overrides(data: Mapping, overrides: Mapping[str, Any]) -> Dict:
    """Copy of ``data`` with dotted-path overrides applied (a ``None`` value removes the key).

    Parameters
    ----------
    data : Mapping
        Parsed config.
    overrides : Mapping[str, Any]
        ``{'gvr_topk.mode': 'hint_free', 'gvr_topk.arena': None, ...}``. Intermediate mappings are created as
        needed; the result is validated by the caller, so a bad override fails like a bad file.
    """
    out = copy.deepcopy(dict(data))
    for key, value in overrides.items():
        parts = key.split(".")
        node = out
        for p in parts[:-1]:
            nxt = node.get(p)
            if not isinstance(nxt, dict):
                nxt = node[p] = {}
            node = nxt
        if value is None:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = value
    return out


def load_config(name_or_path: PathLike = DEFAULT_MODEL, overrides: Optional[Mapping[str, Any]] = None) -> GvrConfig:
    """Load and validate one config file.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        A file path or a shipped config name (``'deepseek-v3.2'``, ``'deepseek-v4-flash'``, ``'deepseek-v4-pro'``).
    overrides : Mapping[str, Any], optional
        Dotted-path overrides applied before validation (see :func:`apply_overrides`); how a deployment switches
        mode without editing the file, e.g. ``{'gvr_topk.mode': 'dropped_arena', 'gvr_topk.arena': None}``.

    Returns
    -------
    GvrConfig

    Raises
    ------
    FileNotFoundError
        Unknown name / missing file.
    ConfigError
        Invalid YAML or schema violation; the message names the file and each bad field's dotted path.
    """
    path = config_path(name_or_path)
    data = read_yaml(path)
    source = str(path)
    if overrides and isinstance(data, Mapping):
        data = apply_overrides(data, overrides)
        source += " (with overrides " + ", ".join(f"{k}={v!r}" for k, v in overrides.items()) + ")"
    return validate_config(data, source)
