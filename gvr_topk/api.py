"""Public entry points: argument checks, envelope, dispatch, launch.

``run_varlen`` is the decode op (varlen rows, optional hint), ``run`` the batch-uniform form, ``topk`` the
functional form (allocates its outputs; usable under ``torch.compile``). All three share one checker, so a bad
argument raises the same ``ValueError``/``TypeError`` naming it, before anything is written.
"""

from typing import Optional
from typing import Tuple

import torch

from . import contract
from . import dispatch
from . import reference
from . import workspace as ws
from .launch import LaunchArgs
from .launch import launch


def kernels_interpreted() -> bool:
    """True when the Triton kernels run through Triton's interpreter (``TRITON_INTERPRET=1`` at import)."""
    from triton.runtime.interpreter import InterpretedFunction

    from .kernels.reg import _gvr_reg_kernel

    return isinstance(_gvr_reg_kernel, InterpretedFunction)


def _err(cls, name: str, expected: str, got) -> Exception:
    return cls(f"gvr_topk: argument '{name}': expected {expected}, got {got}")


def _check_tensor(name: str, t, dtypes, ndim: int, device: Optional[torch.device]) -> None:
    if not isinstance(t, torch.Tensor):
        raise _err(TypeError, name, "a torch.Tensor", type(t).__name__)
    if t.dtype not in dtypes:
        raise _err(TypeError, name, "dtype " + " or ".join(str(d) for d in dtypes), t.dtype)
    if t.dim() != ndim:
        raise _err(ValueError, name, f"a {ndim}-D tensor", f"{t.dim()}-D with shape {tuple(t.shape)}")
    if device is not None and t.device != device:
        raise _err(ValueError, name, f"a tensor on {device} (the device of 'logits')", t.device)
    if ndim == 2 and t.shape[1] > 1 and t.stride(1) != 1:
        raise _err(ValueError, name, "inner (column) stride 1", f"stride {tuple(t.stride())}")
    if ndim == 1 and t.shape[0] > 1 and t.stride(0) != 1:
        raise _err(ValueError, name, "a contiguous 1-D tensor", f"stride {tuple(t.stride())}")


def _check_int(name: str, v, lo: int) -> None:
    if not isinstance(v, int) or isinstance(v, bool):
        raise _err(TypeError, name, "an int", type(v).__name__)
    if v < lo:
        raise _err(ValueError, name, f"an int >= {lo}", v)


def _validate(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, workspace, family):
    """Check every argument; returns (rows, npad, k, batch). Raises before anything is written."""
    _check_tensor("logits", logits, contract.SCORE_DTYPES, 2, None)
    dev = logits.device
    rows, npad = logits.shape
    if rows > 1 and logits.stride(0) < npad:
        raise _err(ValueError, "logits", f"row stride >= row width {npad} (rows must not overlap)",
                   f"row stride {logits.stride(0)}")
    _check_tensor("indices", indices, (torch.int32,), 2, dev)
    k = indices.shape[1]
    if not 1 <= k <= contract.MAX_K:
        raise _err(ValueError, "indices", f"width K = indices.shape[1] in [1, {contract.MAX_K}]", k)
    if indices.shape[0] != rows:
        raise _err(ValueError, "indices", f"{rows} rows (logits.shape[0])", f"{indices.shape[0]} rows")
    if values is not None:
        _check_tensor("values", values, (torch.float32,), 2, dev)
        if values.shape[0] != rows or values.shape[1] < k:
            raise _err(ValueError, "values", f"shape ({rows}, >= {k}) matching indices", tuple(values.shape))
    _check_int("next_n", next_n, 1)
    _check_int("compress_ratio", compress_ratio, 1)
    if compress_ratio & (compress_ratio - 1):
        raise _err(ValueError, "compress_ratio", "a power of two (1, 2, 4, ...)", compress_ratio)
    if rows % next_n:
        raise _err(ValueError, "logits", f"a row count divisible by next_n={next_n}", f"{rows} rows")
    batch = rows // next_n
    if kv_lens is not None:
        _check_tensor("kv_lens", kv_lens, (torch.int32,), 1, dev)
        if kv_lens.shape[0] != batch:
            raise _err(ValueError, "kv_lens", f"length rows / next_n = {rows} / {next_n} = {batch}",
                       f"length {kv_lens.shape[0]}")
    if pre_idx is not None:
        _check_tensor("pre_idx", pre_idx, (torch.int32,), 2, dev)
        if pre_idx.shape[0] != batch or pre_idx.shape[1] < k:
            raise _err(ValueError, "pre_idx", f"shape ({batch}, >= {k}) (one hint row per request)",
                       tuple(pre_idx.shape))
    if max_seq_len is not None:
        _check_int("max_seq_len", max_seq_len, 0)
    if family is not None and family not in dispatch.FAMILIES:
        raise _err(ValueError, "family", f"None or one of {dispatch.FAMILIES}", repr(family))
    if workspace is not None:
        if not isinstance(workspace, torch.Tensor):
            raise _err(TypeError, "workspace", "a torch.Tensor", type(workspace).__name__)
        if workspace.device != dev:
            raise _err(ValueError, "workspace", f"a tensor on {dev}", workspace.device)
        if not workspace.is_contiguous():
            raise _err(ValueError, "workspace", "a contiguous tensor", f"stride {tuple(workspace.stride())}")
        need = ws.workspace_bytes(rows, k)
        have = workspace.numel() * workspace.element_size()
        if have < need:
            raise _err(ValueError, "workspace", f">= {need} bytes (workspace_bytes({rows}, {k}))", f"{have} bytes")
    return rows, npad, k, batch


def _envelope(kv_lens, npad: int, cr: int, max_seq_len: Optional[int], n_uniform: Optional[int], dev) -> int:
    """Longest row the launch must cover, clamped to npad. Reads kv_lens on the host only without max_seq_len."""
    if n_uniform is not None:
        return min(max(n_uniform, 0), npad)
    if max_seq_len is not None:
        return min(max_seq_len // cr, npad)
    if dev.type == "cuda" and torch.cuda.is_current_stream_capturing():
        raise RuntimeError("gvr_topk: argument 'max_seq_len': expected an int during CUDA-graph capture (without it "
                           "the op reads kv_lens.max() on the host, which capture forbids), got None")
    kv_max = int(kv_lens.max()) if kv_lens.numel() else 0
    n = max(kv_max // cr, 0)
    # Round up to a power of two so growing sequences recompile only at powers of two.
    return min(1 << max(n - 1, 0).bit_length(), npad)


def _execute(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, workspace, family,
             n_uniform: Optional[int] = None) -> None:
    rows, npad, k, _ = _validate(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len,
                                 workspace, family)
    if rows == 0:
        return
    dev = logits.device
    if dev.type == "cpu" and not kernels_interpreted():
        idx, val = reference.topk_varlen(logits, kv_lens, k, next_n=next_n, compress_ratio=compress_ratio,
                                         n_valid=n_uniform)
        indices[:, :k].copy_(idx)
        if values is not None:
            values[:, :k].copy_(val)
        return
    n_env = _envelope(kv_lens, npad, compress_ratio, max_seq_len, n_uniform, dev)
    plan = dispatch.route(rows, n_env, npad, k) if family is None else dispatch.plan_for(family, rows, n_env, npad, k)
    if plan.family != "reg" and workspace is None:
        workspace = ws.default_workspace(dev, ws.workspace_bytes(rows, k))
    if workspace is not None:
        workspace = workspace.view(torch.uint8)
    # Rows never exceed the envelope: the register family's tile is sized for it.
    n_bound = max(n_env, min(k + 1, npad)) if plan.family == "reg" else n_env
    args = LaunchArgs(logits=logits, pre_idx=pre_idx, kv_lens=kv_lens, indices=indices, values=values, k=k,
                      next_n=next_n, cr_shift=compress_ratio.bit_length() - 1,
                      n_uniform=0 if n_uniform is None else n_uniform, n_bound=n_bound)
    if dev.type == "cuda":
        with torch.cuda.device(dev):
            launch(plan, args, workspace)
    else:
        launch(plan, args, workspace)


def run_varlen(logits: torch.Tensor, pre_idx: Optional[torch.Tensor], kv_lens: torch.Tensor, indices: torch.Tensor,
               *, next_n: int = 1, compress_ratio: int = 1, values: Optional[torch.Tensor] = None,
               max_seq_len: Optional[int] = None, workspace: Optional[torch.Tensor] = None,
               family: Optional[str] = None) -> None:
    """Exact top-K of every decode row, written into ``indices`` (and ``values``).

    Parameters
    ----------
    logits : torch.Tensor
        ``(rows, npad)`` float32, bfloat16 or float16 scores; inner stride 1, any row stride >= npad. Columns at or
        past a row's valid length are never read.
    pre_idx : torch.Tensor or None
        int32 ``(batch, >= K)``: the previous step's top-K of each request (row r uses ``pre_idx[r // next_n]``),
        or None for hint-free mode. Any content is legal: entries outside ``[0, n_r)`` are ignored. The hint can
        change speed, never the result.
    kv_lens : torch.Tensor
        int32 ``(batch,)``, ``batch = rows // next_n``: each request's uncompressed KV length. Row r has
        ``n_r = (kv_lens[r // next_n] - next_n + r % next_n + 1) // compress_ratio`` columns, clamped to
        ``[0, npad]``.
    indices : torch.Tensor
        int32 ``(rows, K)`` output; K = ``indices.shape[1]`` in [1, 2048]. Long rows (n_r > K): K distinct columns
        whose scores are the row's K largest (order unspecified; ties at the K-th score go to the lowest columns).
        Short rows: ``0 .. n_r - 1`` then -1.
    next_n : int
        Rows per request (1 + MTP draft tokens), >= 1; ``rows`` must be a multiple.
    compress_ratio : int
        KV compression ratio, a power of two (1 for DeepSeek-V3.2, 4 for V4).
    values : torch.Tensor, optional
        float32 ``(rows, >= K)`` output: the scores at the chosen columns (as float32); pad slots get
        ``torch.finfo(torch.float32).min``.
    max_seq_len : int, optional
        Upper bound of ``kv_lens`` (uncompressed tokens). With it no host synchronisation happens (CUDA-graph
        capturable); rows are clamped to ``max_seq_len // compress_ratio`` columns. Without it the op reads
        ``kv_lens.max()`` once on the host.
    workspace : torch.Tensor, optional
        Zero-initialised contiguous tensor of at least ``workspace_bytes(rows, K)`` bytes on the same device; it is
        left zeroed where it must be. Default: a library-owned buffer per (device, stream).
    family : str, optional
        Force a kernel family (``"reg"``, ``"stream"``, ``"split"``); None lets :func:`gvr_topk.route` decide.

    Raises
    ------
    TypeError, ValueError
        A bad argument, named in the message with what was expected and what was given; nothing is written.
    """
    if kv_lens is None:
        raise _err(TypeError, "kv_lens", "an int32 torch.Tensor (use gvr_topk.run for uniform rows)", None)
    _execute(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, workspace, family)


def run(logits: torch.Tensor, pre_idx: Optional[torch.Tensor], n_valid: int, indices: torch.Tensor,
        values: Optional[torch.Tensor] = None, *, family: Optional[str] = None,
        workspace: Optional[torch.Tensor] = None) -> None:
    """Exact top-K of rows that all have ``n_valid`` valid columns (batch-uniform form of :func:`run_varlen`).

    Parameters
    ----------
    logits : torch.Tensor
        ``(rows, npad)`` float32 / bfloat16 / float16 scores, inner stride 1.
    pre_idx : torch.Tensor or None
        int32 ``(rows, >= K)`` hint per row, or None (hint-free).
    n_valid : int
        Valid columns of every row (clamped to ``[0, npad]``); a Python int, so no host read is needed.
    indices : torch.Tensor
        int32 ``(rows, K)`` output, as in :func:`run_varlen`.
    values : torch.Tensor, optional
        float32 ``(rows, >= K)`` output.
    family : str, optional
        Force a kernel family.
    workspace : torch.Tensor, optional
        As in :func:`run_varlen`.
    """
    if isinstance(n_valid, torch.Tensor):
        if n_valid.is_cuda and torch.cuda.is_current_stream_capturing():
            raise _err(TypeError, "n_valid", "a Python int during CUDA-graph capture (a tensor needs a host read)",
                       "a tensor")
        n_valid = int(n_valid)
    _check_int("n_valid", n_valid, -2**31)
    _execute(logits, pre_idx, None, indices, values, 1, 1, None, workspace, family, n_uniform=n_valid)


def topk(logits: torch.Tensor, k: int, *, kv_lens: Optional[torch.Tensor] = None,
         pre_idx: Optional[torch.Tensor] = None, next_n: int = 1, compress_ratio: int = 1,
         return_values: bool = False, max_seq_len: Optional[int] = None
         ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """Functional form: allocate the outputs and select (works under ``torch.compile(fullgraph=True)``).

    Parameters
    ----------
    logits : torch.Tensor
        ``(rows, npad)`` float32 / bfloat16 / float16 scores.
    k : int
        Selections per row, in [1, 2048].
    kv_lens : torch.Tensor, optional
        int32 ``(rows // next_n,)`` as in :func:`run_varlen`; None: every row is ``npad`` long.
    pre_idx : torch.Tensor, optional
        int32 ``(rows // next_n, >= k)`` hint, or None.
    next_n, compress_ratio, max_seq_len
        As in :func:`run_varlen`.
    return_values : bool
        Also return the float32 scores at the chosen columns.

    Returns
    -------
    (torch.Tensor, torch.Tensor or None)
        int32 indices ``(rows, k)`` and, with ``return_values``, float32 values ``(rows, k)``.
    """
    _check_int("k", k, 1)
    if not isinstance(logits, torch.Tensor):
        raise _err(TypeError, "logits", "a torch.Tensor", type(logits).__name__)
    rows, npad = (logits.shape[0], logits.shape[1]) if logits.dim() == 2 else (0, 0)
    indices = torch.empty((rows, k), dtype=torch.int32, device=logits.device)
    values = torch.empty((rows, k), dtype=torch.float32, device=logits.device) if return_values else None
    if kv_lens is None:
        # Every row full: a length that clamps to npad for every row, and an envelope with no host read.
        if not isinstance(next_n, int) or isinstance(next_n, bool) or next_n < 1 or rows % next_n:
            _validate(logits, pre_idx, None, indices, values, next_n, compress_ratio, None, None, None)
        kv_lens = torch.full((rows // next_n,), npad * compress_ratio + next_n, dtype=torch.int32,
                             device=logits.device)
        max_seq_len = npad * compress_ratio + next_n
    torch.ops.gvr.topk_varlen(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len)
    return indices, values
