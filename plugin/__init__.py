"""gvr_topk_plugin: the GVR top-k as a TensorRT plugin, ``gvr::topk_varlen``.

Importing this package needs no TensorRT: the plugin's rules (:mod:`.spec`), its ahead-of-time compilation
(:mod:`.aot`) and its JIT body (:mod:`.jit`) are plain Python. TensorRT is imported by :func:`register` only, which
defines the plugin (``register``, ``autotune``, ``impl``, ``aot_impl``) in TensorRT's plugin registry. The core
package ``gvr_topk`` never imports this one.

Typical use::

    import gvr_topk_plugin
    gvr_topk_plugin.register()          # before building, or before loading an engine that uses the JIT path
    import tensorrt.plugin as trtp
    layer = network.add_plugin(trtp.op.gvr.topk_varlen(logits, kv_lens, pre_idx, k=2048, next_n=1,
                                                        compress_ratio=1, max_seq_len=65536, hint_free=1), aot=True)
"""

from .aot import AotConfig
from .aot import AotKernel
from .aot import aot_config
from .aot import compile_aot
from .spec import PLUGIN_ID
from .spec import PluginAttrs
from .spec import output_shape
from .spec import tactics
from .spec import validate_attrs

__all__ = [
    "PLUGIN_ID",
    "AotConfig",
    "AotKernel",
    "PluginAttrs",
    "aot_config",
    "compile_aot",
    "output_shape",
    "register",
    "tactics",
    "trt_available",
    "validate_attrs",
]


def trt_available() -> bool:
    """True when ``tensorrt.plugin`` can be imported (TensorRT with the Python plugin API)."""
    try:
        import tensorrt.plugin  # noqa: F401
    except ImportError:
        return False
    return True


def register() -> None:
    """Define ``gvr::topk_varlen`` in TensorRT's plugin registry (idempotent: the definitions run once).

    Call it before building a network that uses the plugin, and before deserialising an engine built with its JIT
    implementation (engines built with ``aot=True`` need no Python at all).

    Raises
    ------
    ImportError
        TensorRT with ``tensorrt.plugin`` is not installed. It comes from NVIDIA's package index (the ``tensorrt``
        packages on PyPI are stubs that fetch it from there), version 10.12 or later for ``aot_impl``.
    """
    try:
        import tensorrt.plugin  # noqa: F401
    except ImportError as e:
        raise ImportError(f"gvr_topk_plugin.register: expected TensorRT with the `tensorrt.plugin` module (10.12 or "
                          f"later, installed from NVIDIA's package index, not PyPI), got ImportError: {e}") from e
    from . import _trt  # noqa: F401  (importing the module runs the decorators, once per process)
