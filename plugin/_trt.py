"""The TensorRT plugin definitions (imports ``tensorrt``; loaded only by :func:`gvr_topk_plugin.register`).

Each decorated function only translates between TensorRT's descriptors and the plain values of
:mod:`gvr_topk_plugin.spec`, :mod:`gvr_topk_plugin.aot` and :mod:`gvr_topk_plugin.jit`, where every rule lives and is
tested. Needs TensorRT 10.12 or later (``aot_impl``); written against the ``tensorrt.plugin`` API as documented for
10.x and 11.x, and not run here (no TensorRT in our CI or on our GPU test machine).
"""

from typing import List
from typing import Optional
from typing import Tuple
from typing import Union

import tensorrt as trt
import tensorrt.plugin as trtp

from . import aot
from . import jit
from . import spec

_DTYPE_NAMES = {trt.float32: "FP32", trt.float16: "FP16", trt.bfloat16: "BF16", trt.int32: "INT32",
                trt.int64: "INT64"}


def _dtype_name(dtype) -> str:
    return _DTYPE_NAMES.get(dtype, str(dtype))


def _static(expr) -> Optional[int]:
    """A dimension's value when it is a build-time constant, else None (fake expressions included)."""
    try:
        return int(expr.constant_value()) if expr.is_constant else None
    except RuntimeError:
        return None


def _shape(desc) -> List[Optional[int]]:
    return [_static(e) for e in desc.shape_expr]


def _device_arch() -> int:
    # The PTX targets the GPU the engine is built on (engines are GPU-specific anyway); sm_90 without one.
    import torch

    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return 10 * major + minor
    return aot.DEFAULT_ARCH


@trtp.register(spec.PLUGIN_ID)
def _describe(logits: trtp.TensorDesc, kv_lens: trtp.TensorDesc, pre_idx: trtp.TensorDesc, k: int, next_n: int,
              compress_ratio: int, max_seq_len: int, hint_free: int) -> trtp.TensorDesc:
    attrs = spec.validate_attrs(k, next_n, compress_ratio, max_seq_len, hint_free)
    spec.check_dtypes(_dtype_name(logits.dtype), _dtype_name(kv_lens.dtype), _dtype_name(pre_idx.dtype))
    spec.output_shape(attrs, _shape(logits), _shape(kv_lens), _shape(pre_idx))
    return trtp.from_shape_expr((logits.shape_expr[0], attrs.k), dtype=trt.int32)


@trtp.autotune(spec.PLUGIN_ID)
def _autotune(logits: trtp.TensorDesc, kv_lens: trtp.TensorDesc, pre_idx: trtp.TensorDesc, k: int, next_n: int,
              compress_ratio: int, max_seq_len: int, hint_free: int,
              outputs: Tuple[trtp.TensorDesc]) -> List[trtp.AutoTuneCombination]:
    attrs = spec.validate_attrs(k, next_n, compress_ratio, max_seq_len, hint_free)
    tactics = spec.tactics(attrs, _static(logits.shape_expr[1]))
    return [trtp.AutoTuneCombination(spec.autotune_io_types(), "LINEAR", tactics)]


@trtp.impl(spec.PLUGIN_ID)
def _run(logits: trtp.Tensor, kv_lens: trtp.Tensor, pre_idx: trtp.Tensor, k: int, next_n: int, compress_ratio: int,
         max_seq_len: int, hint_free: int, outputs: Tuple[trtp.Tensor], stream: int, tactic: int) -> None:
    import torch

    attrs = spec.validate_attrs(k, next_n, compress_ratio, max_seq_len, hint_free)

    def view(t):
        return torch.as_tensor(t, device="cuda")

    jit.run(attrs, view(logits), view(kv_lens), view(pre_idx), view(outputs[0]), stream=stream, tactic=tactic)


@trtp.aot_impl(spec.PLUGIN_ID)
def _compile(logits: trtp.TensorDesc, kv_lens: trtp.TensorDesc, pre_idx: trtp.TensorDesc, k: int, next_n: int,
             compress_ratio: int, max_seq_len: int, hint_free: int, outputs: Tuple[trtp.TensorDesc],
             tactic: int) -> Tuple[Union[str, bytes], Union[str, bytes], trtp.KernelLaunchParams, trtp.SymExprs]:
    attrs = spec.validate_attrs(k, next_n, compress_ratio, max_seq_len, hint_free)
    npad_expr = logits.shape_expr[1]
    npad = _static(npad_expr)
    kernel = aot.compile_aot(aot.aot_config(attrs, npad, tactic, arch=_device_arch(),
                                            max_ptx_version=aot.driver_ptx_version()))
    geometry = aot.launch_params(kernel, logits.shape_expr[0])
    params = trtp.KernelLaunchParams()
    params.grid_x, params.grid_y, params.grid_z = geometry.grid
    params.block_x, params.block_y, params.block_z = geometry.block
    params.shared_mem = geometry.shared_mem
    scalars = aot.scalar_args(attrs, npad if npad is not None else npad_expr, sym_min=trtp.min)
    extra = trtp.SymIntExprs(len(scalars))
    for i, value in enumerate(scalars):
        extra[i] = trtp.SymInt32(value)
    return kernel.name, kernel.ptx, params, extra
