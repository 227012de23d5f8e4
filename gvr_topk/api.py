"""Public entry points: argument checks, envelope, dispatch, launch.

``run_varlen`` is the decode op (varlen rows, optional hint), ``run`` the batch-uniform form, ``topk`` the
functional form (allocates its outputs; usable under ``torch.compile``). All three share one checker, so a bad
argument raises the same ``ValueError``/``TypeError`` naming it, before anything is written.
"""

import weakref
from typing import Optional
from typing import Tuple

import torch

from . import contract
from . import dispatch
from . import reference
from . import workspace as ws
from .launch import cache
from .launch import direct as direct_launch
from .launch.common import POINTER_ARGS
from .launch.common import family_module
from .launch.common import static_kwargs


def kernels_interpreted() -> bool:
    """True when the Triton kernels run through Triton's interpreter (``TRITON_INTERPRET=1`` at import)."""
    from .kernels import _common

    return _common.kernels_interpreted()


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


# ---------------------------------------------------------------------------------------------------------------
# Launch: a cached "validated + prepared" launch per call signature
# ---------------------------------------------------------------------------------------------------------------
#
# Everything ``_validate`` checks, and everything a launch needs except the tensors' addresses, is a pure function
# of tensor metadata (class, dtype, shape, strides, device) and the int arguments. ``_signature`` packs those into
# one tuple; the first call with a signature runs the full check and prepares the launch (``_Prepared`` and its
# ``LaunchEntry`` per envelope), later calls only fill in the pointers. A call that cannot be signed (an argument of
# an unexpected type) takes the same path without the cache, so every bad argument still meets ``_validate``.

_NOOP, _REFERENCE, _LAUNCH = 0, 1, 2
_PREPARED = cache.BoundedCache()
_ALIGNED5 = (True,) * 5
_INTERPRETED: Optional[bool] = None


def _interpreted() -> bool:
    global _INTERPRETED
    if _INTERPRETED is None:
        _INTERPRETED = kernels_interpreted()
    return _INTERPRETED


# Device and stream queries on the per-call path use the bindings behind torch.cuda.current_device() and
# torch.cuda.current_stream() directly (what Triton itself calls); the public calls cost microseconds more.
_get_device = getattr(torch._C, "_cuda_getDevice", None) or (lambda: torch.cuda.current_device())
_get_raw_stream = (getattr(torch._C, "_cuda_getCurrentRawStream", None)
                   or (lambda index: torch.cuda.current_stream(index).cuda_stream))


def _signature(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, workspace, family,
               n_uniform):
    """Hashable summary of everything validation and launch preparation depend on, or None (not cacheable).

    Per tensor: class, dtype, shape, strides and device; the int arguments by value (exact ``int`` only, so a bool
    or another int subclass, which ``_validate`` may reject, never matches a cached signature).
    """
    if (type(next_n) is not int or type(compress_ratio) is not int
            or (max_seq_len is not None and type(max_seq_len) is not int)
            or (family is not None and type(family) is not str)
            or (n_uniform is not None and type(n_uniform) is not int)):
        return None
    try:
        sig = (logits.__class__, logits.dtype, logits.shape, logits.stride(), logits.device,
               indices.__class__, indices.dtype, indices.shape, indices.stride(), indices.device,
               None if kv_lens is None else (kv_lens.__class__, kv_lens.dtype, kv_lens.shape, kv_lens.stride(),
                                             kv_lens.device),
               None if pre_idx is None else (pre_idx.__class__, pre_idx.dtype, pre_idx.shape, pre_idx.stride(),
                                             pre_idx.device),
               None if values is None else (values.__class__, values.dtype, values.shape, values.stride(),
                                            values.device),
               None if workspace is None else (workspace.__class__, workspace.dtype, workspace.shape,
                                               workspace.stride(), workspace.device),
               next_n, compress_ratio, max_seq_len, family, n_uniform)
    except Exception:  # not a tensor, a layout without strides, ...: let _validate name the problem
        return None
    return sig


class _Prepared:
    """A validated call signature: its mode and, per envelope, the prepared launch."""

    __slots__ = ("mode", "rows", "npad", "k", "dev", "dev_index", "next_n", "cr", "max_seq_len", "family",
                 "n_uniform", "entry", "entries", "meta")

    def __init__(self, logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, workspace,
                 family, n_uniform):
        rows, npad, k, _ = _validate(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio,
                                     max_seq_len, workspace, family)
        dev = logits.device
        self.rows, self.npad, self.k, self.dev = rows, npad, k, dev
        self.dev_index = (dev.index if dev.index is not None else _get_device()) if dev.type == "cuda" else None
        self.next_n, self.cr, self.max_seq_len, self.family, self.n_uniform = (next_n, compress_ratio, max_seq_len,
                                                                               family, n_uniform)
        self.entry = None
        self.entries = cache.BoundedCache(64)
        if rows == 0:
            self.mode = _NOOP
        elif dev.type == "cpu" and not _interpreted():
            self.mode = _REFERENCE
        else:
            self.mode = _LAUNCH
        self.meta = dict(
            row_stride=logits.stride(0), out_stride=indices.stride(0),
            val_stride=values.stride(0) if values is not None else 0,
            pre_stride=pre_idx.stride(0) if pre_idx is not None else 0,
            hint_free=pre_idx is None, varlen=kv_lens is not None, has_values=values is not None,
            dtypes=dict(indices_ptr=indices.dtype, values_ptr=(values if values is not None else indices).dtype,
                        logits_ptr=logits.dtype, pre_idx_ptr=(pre_idx if pre_idx is not None else indices).dtype,
                        kv_lens_ptr=(kv_lens if kv_lens is not None else indices).dtype))
        if self.mode == _LAUNCH and (n_uniform is not None or max_seq_len is not None):
            # The envelope needs no data: fix the launch now.
            self.entry = self.entry_for(_envelope(None, npad, compress_ratio, max_seq_len, n_uniform, dev))

    def entry_for(self, n_env: int) -> cache.LaunchEntry:
        e = self.entries.get(n_env)
        if e is None:
            e = self._make_entry(n_env)
            self.entries.put(n_env, e)
        return e

    def _make_entry(self, n_env: int) -> cache.LaunchEntry:
        rows, npad, k, m = self.rows, self.npad, self.k, self.meta
        plan = (dispatch.route(rows, n_env, npad, k) if self.family is None
                else dispatch.plan_for(self.family, rows, n_env, npad, k))
        # Rows never exceed the envelope: the register family's tile is sized for it.
        n_bound = max(n_env, min(k + 1, npad)) if plan.family == "reg" else n_env
        module = family_module(plan.family)
        scalars = static_kwargs(k=k, next_n=self.next_n, cr_shift=self.cr.bit_length() - 1,
                                n_uniform=0 if self.n_uniform is None else self.n_uniform, n_bound=n_bound,
                                row_stride=m["row_stride"], out_stride=m["out_stride"], val_stride=m["val_stride"],
                                pre_stride=m["pre_stride"], hint_free=m["hint_free"], varlen=m["varlen"],
                                has_values=m["has_values"])
        scalars.update(module.family_kwargs(plan, rows, self.dev))
        info = dict(rows=rows, k=k, npad=npad, row_stride=m["row_stride"], n_env=n_env, dtype=m["dtypes"]["logits_ptr"],
                    hint_free=m["hint_free"], has_values=m["has_values"], varlen=m["varlen"], next_n=self.next_n,
                    compress_ratio=self.cr, max_seq_len=self.max_seq_len, device=str(self.dev))
        return cache.LaunchEntry(plan, module, rows, scalars, m["dtypes"], self.dev,
                                 ws.workspace_bytes(rows, k) if module.WORKSPACE_ARGS else 0, info)

    def run(self, logits, pre_idx, kv_lens, indices, values, workspace) -> None:
        mode = self.mode
        if mode == _LAUNCH:
            entry = self.entry
            if entry is None:
                entry = self.entry_for(_envelope(kv_lens, self.npad, self.cr, None, None, self.dev))
            idx = self.dev_index
            # Triton launches on the current device: switch only when the tensors live elsewhere.
            if idx is not None and _get_device() != idx:
                with torch.cuda.device(idx):
                    _launch(self, entry, logits, pre_idx, kv_lens, indices, values, workspace)
            else:
                _launch(self, entry, logits, pre_idx, kv_lens, indices, values, workspace)
        elif mode == _REFERENCE:
            k = self.k
            idx, val = reference.topk_varlen(logits, kv_lens, k, next_n=self.next_n, compress_ratio=self.cr,
                                             n_valid=self.n_uniform)
            indices[:, :k].copy_(idx)
            if values is not None:
                values[:, :k].copy_(val)


_NO_VIEWS: dict = {}


class _CallerWorkspace:
    """Views of one caller workspace tensor, per prepared launch: (views, alignment of each view, address of each
    view)."""

    __slots__ = ("ref", "ptr", "per_entry")

    def __init__(self, workspace: torch.Tensor):
        self.ref = weakref.ref(workspace)
        self.ptr = workspace.data_ptr()
        self.per_entry = {}


#: Caller workspaces seen recently, by ``id()``. A record holds views of the workspace's memory, so it is dropped as
#: soon as the caller's tensor object is freed (``weakref.finalize``); a freed workspace is never kept alive here.
_CALLER_WS: dict = {}
_CALLER_WS_LIMIT = 64


def _caller_views(prep: _Prepared, entry: cache.LaunchEntry, workspace: torch.Tensor) -> tuple:
    """(views, alignment, addresses) of a caller workspace for a prepared launch, made once per workspace tensor:
    rebuilding the int32 views on every call cost 5-7 us of host time (measured on the CI CPU)."""
    key = id(workspace)
    rec = _CALLER_WS.get(key)
    if rec is None or rec.ref() is not workspace or rec.ptr != workspace.data_ptr():
        if len(_CALLER_WS) >= _CALLER_WS_LIMIT:
            _CALLER_WS.clear()
        rec = _CALLER_WS[key] = _CallerWorkspace(workspace)
        weakref.finalize(workspace, _CALLER_WS.pop, key, None)
    made = rec.per_entry.get(entry)
    if made is None:
        views = entry.module.workspace_kwargs(entry.plan, prep.rows, workspace.view(torch.uint8))
        ptrs = tuple(rec.ptr + o for o in entry.ws_offsets)
        made = rec.per_entry[entry] = (views, cache.alignment(ptrs), ptrs)
    return made


def _launch(prep: _Prepared, entry: cache.LaunchEntry, logits, pre_idx, kv_lens, indices, values, workspace):
    """Fill in the pointers of a prepared launch and run it (on the current device).

    The hot path covers the usual call: every pointer 16-byte aligned, the library workspace (views already made
    for this stream) or a caller workspace seen before, and a launcher already compiled; anything else goes
    through :func:`_launch_checked`. A hot launch whose compiled kernel can be launched directly
    (``launch/direct.py``) skips ``JITFunction.run``'s per-call binding from its second call on.
    """
    p_i, p_l = indices.data_ptr(), logits.data_ptr()
    p_v = values.data_ptr() if values is not None else p_i
    p_p = pre_idx.data_ptr() if pre_idx is not None else p_i
    p_k = kv_lens.data_ptr() if kv_lens is not None else p_i
    views = _NO_VIEWS
    ws_ptrs = ()
    stream = None
    if entry.ws_args:
        if workspace is None:
            stream = _get_raw_stream(prep.dev_index) if prep.dev_index is not None else 0
            got = entry.ws_views.get(stream)
            views, ws_ptrs = got if got is not None else (None, ())
        else:
            views, ws_align, ws_ptrs = _caller_views(prep, entry, workspace)
            if ws_align != entry.default_ws_align:
                views = None
    if views is None or not entry.hot or (p_i | p_v | p_l | p_p | p_k) & (cache.ALIGN - 1):
        return _launch_checked(prep, entry, (p_i, p_v, p_l, p_p, p_k), logits, pre_idx, kv_lens, indices, values,
                               workspace)
    direct = entry.direct
    if direct is not None:
        if stream is None:
            stream = _get_raw_stream(prep.dev_index) if prep.dev_index is not None else 0
        direct(stream, p_i, p_v, p_l, p_p, p_k, *ws_ptrs)
        return
    compiled = entry.kernel.run(indices_ptr=indices, values_ptr=values if values is not None else indices,
                                logits_ptr=logits, pre_idx_ptr=pre_idx if pre_idx is not None else indices,
                                kv_lens_ptr=kv_lens if kv_lens is not None else indices, **views, **entry.scalars,
                                grid=entry.grid, warmup=False)
    if not entry.direct_tried:
        # The variant of the hot pattern just launched through the regular path: keep it for direct launches.
        entry.direct_tried = True
        entry.direct = direct_launch.build(compiled, entry.kernel, entry.grid, entry.scalars,
                                           POINTER_ARGS + entry.ws_args)


def _launch_checked(prep, entry, ptrs, logits, pre_idx, kv_lens, indices, values, workspace):
    """The general launch: keys the variant by pointer alignment, refuses a cold one during capture, makes the
    workspace views, launches, and records the variant as warm."""
    user_align = cache.alignment(ptrs)  # in the order of common.POINTER_ARGS
    stream = None
    views = _NO_VIEWS
    ws_align = ()
    if entry.ws_args:
        views = None
        if workspace is None:
            stream = _get_raw_stream(prep.dev_index) if prep.dev_index is not None else 0
            got = entry.ws_views.get(stream)
            views = got[0] if got is not None else None
            ws_align = entry.default_ws_align
        else:
            views, ws_align, _ = _caller_views(prep, entry, workspace)
    align = (user_align, ws_align)
    full = None
    if align not in entry.warm:
        full = entry.full_key(align)
        if cache.is_warm(full):
            entry.warm.add(align)
            full = None
        elif cache.capturing(prep.dev):
            raise entry.cold_error(align)  # before anything is allocated or written
    if views is None:
        if workspace is None:
            buf = ws.default_workspace(prep.dev, entry.ws_nbytes)
            if cache.alignment(buf.data_ptr() + o for o in entry.ws_offsets) != ws_align:
                # Not allocator-aligned after all: launch it as a caller workspace (keyed by what it really is).
                return _launch_checked(prep, entry, ptrs, logits, pre_idx, kv_lens, indices, values, buf)
            views = entry.module.workspace_kwargs(entry.plan, prep.rows, buf.view(torch.uint8))
            entry.ws_views.put(stream, (views, tuple(views[n].data_ptr() for n in entry.ws_args)))
    entry.kernel.run(indices_ptr=indices, values_ptr=values if values is not None else indices, logits_ptr=logits,
                     pre_idx_ptr=pre_idx if pre_idx is not None else indices,
                     kv_lens_ptr=kv_lens if kv_lens is not None else indices, **views, **entry.scalars,
                     grid=entry.grid, warmup=False)
    if full is not None:
        # Launched outside capture: this variant is now compiled and loaded.
        cache.mark_warm(full)
        entry.warm.add(align)
    if align == entry.hot_align:
        entry.hot = True


def _execute(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, workspace, family,
             n_uniform: Optional[int] = None) -> None:
    """Validate (once per call signature), prepare and launch one call of the op."""
    sig = _signature(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, workspace,
                     family, n_uniform)
    prep = None
    if sig is not None:
        try:
            prep = _PREPARED.get(sig)
        except TypeError:  # an unhashable attribute (not a real tensor): no caching
            sig = None
    if prep is None:
        prep = _Prepared(logits, pre_idx, kv_lens, indices, values, next_n, compress_ratio, max_seq_len, workspace,
                         family, n_uniform)
        if sig is not None:
            _PREPARED.put(sig, prep)
    entry = prep.entry
    if entry is not None and (prep.dev_index is None or _get_device() == prep.dev_index):
        _launch(prep, entry, logits, pre_idx, kv_lens, indices, values, workspace)  # the common case, inlined
    else:
        prep.run(logits, pre_idx, kv_lens, indices, values, workspace)


def clear_launch_cache(*, forget_warm: bool = False) -> None:
    """Drop every prepared launch (the next call of each signature validates and prepares again).

    Parameters
    ----------
    forget_warm : bool
        Also forget which launchers are compiled, so that capture refuses every launch until it has run once more
        outside capture (for tests of the refusal; Triton's compiled kernels themselves are kept).
    """
    _PREPARED.clear()
    if forget_warm:
        cache.forget_warm()


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


# ---------------------------------------------------------------------------------------------------------------
# Warm-up: compile every launcher a configuration can need, before CUDA-graph capture
# ---------------------------------------------------------------------------------------------------------------

def _as_list(name: str, v, kind) -> list:
    items = list(v) if isinstance(v, (list, tuple)) else [v]
    if not items:
        raise _err(ValueError, name, "a non-empty value or list", v)
    for x in items:
        if kind is bool and not isinstance(x, bool):
            raise _err(TypeError, name, "a bool or a list of bools", type(x).__name__)
        if kind is torch.dtype and x not in contract.SCORE_DTYPES:
            raise _err(TypeError, name, "dtype " + " or ".join(str(d) for d in contract.SCORE_DTYPES) +
                       " (or a list of them)", x)
    return list(dict.fromkeys(items))


def warmup(num_rows, k: int, npad: int, max_seq_len: int, *, row_stride: Optional[int] = None, next_n: int = 1,
           compress_ratio: int = 1, hinted=(False, True), with_values=(False, True), dtype=torch.float32,
           device=None, family: Optional[str] = None, out_stride: Optional[int] = None,
           values_stride: Optional[int] = None, hint_stride: Optional[int] = None,
           stream: Optional["torch.cuda.Stream"] = None) -> int:
    """Compile and load every launcher that :func:`run_varlen` calls of one configuration can use.

    Runs the op once per (row count, score dtype, hint mode, values on/off) on dummy data shaped like the real
    calls, outside CUDA-graph capture. With ``max_seq_len`` fixed the launch depends only on (rows, envelope, npad,
    K) and on these switches, so afterwards capturing calls with the same shapes compiles nothing; a capture that
    still meets an uncompiled variant raises :class:`gvr_topk.ColdLauncherError` instead of compiling.

    Parameters
    ----------
    num_rows : int or sequence of int
        Row counts of the calls (``batch * next_n``, e.g. every padded batch size a CUDA graph is captured for
        times ``next_n``); each a positive multiple of ``next_n``.
    k : int
        K = ``indices.shape[1]``, in [1, 2048].
    npad : int
        Row width of ``logits`` (``logits.shape[1]``).
    max_seq_len : int
        The ``max_seq_len`` the calls pass (uncompressed tokens; the envelope is ``max_seq_len // compress_ratio``
        columns, clamped to ``npad``). Calls without ``max_seq_len`` cannot be captured and are not covered.
    row_stride : int, optional
        ``logits.stride(0)`` of the calls (>= npad); default ``npad``.
    next_n, compress_ratio : int
        As in :func:`run_varlen`.
    hinted : bool or sequence of bool
        Modes to warm: True = with ``pre_idx`` (int32 ``(rows // next_n, >= K)``), False = hint-free. Default both.
    with_values : bool or sequence of bool
        Warm with and/or without the float32 ``values`` output. Default both.
    dtype : torch.dtype or sequence of torch.dtype
        Score dtype(s) of ``logits``: float32, bfloat16, float16.
    device : torch.device or str or int, optional
        Device of the calls; default the current CUDA device, or the CPU without CUDA.
    family : str, optional
        The ``family=`` the calls force, if any.
    out_stride, values_stride, hint_stride : int, optional
        ``indices.stride(0)``, ``values.stride(0)``, ``pre_idx.stride(0)`` of the calls when the tensors are
        views of wider buffers; default K (only whether a stride is 1 or a multiple of 16 matters to compilation).
    stream : torch.cuda.Stream, optional
        Stream to run on (default: the current stream). Running on the stream that later calls use also creates
        the library workspace of that stream ahead of time.

    Returns
    -------
    int
        Launchers newly compiled (recorded as warm) by this call; 0 when everything was already warm.

    Raises
    ------
    TypeError, ValueError
        A bad argument, named in the message.
    RuntimeError
        Called during CUDA-graph capture.
    """
    rows_l = _as_list("num_rows", num_rows, int)
    for r in rows_l:
        _check_int("num_rows", r, 1)
    _check_int("k", k, 1)
    if k > contract.MAX_K:
        raise _err(ValueError, "k", f"an int in [1, {contract.MAX_K}]", k)
    _check_int("npad", npad, 1)
    _check_int("max_seq_len", max_seq_len, 0)
    _check_int("next_n", next_n, 1)
    _check_int("compress_ratio", compress_ratio, 1)
    if compress_ratio & (compress_ratio - 1):
        raise _err(ValueError, "compress_ratio", "a power of two (1, 2, 4, ...)", compress_ratio)
    bad = [r for r in rows_l if r % next_n]
    if bad:
        raise _err(ValueError, "num_rows", f"multiples of next_n={next_n}", bad)
    row_stride = npad if row_stride is None else row_stride
    _check_int("row_stride", row_stride, npad)
    strides = {}
    for name, v in (("out_stride", out_stride), ("values_stride", values_stride), ("hint_stride", hint_stride)):
        strides[name] = k if v is None else v
        _check_int(name, strides[name], k)
    hinted_l = _as_list("hinted", hinted, bool)
    values_l = _as_list("with_values", with_values, bool)
    dtypes = _as_list("dtype", dtype, torch.dtype)
    if family is not None and family not in dispatch.FAMILIES:
        raise _err(ValueError, "family", f"None or one of {dispatch.FAMILIES}", repr(family))
    if device is None:
        dev = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    else:
        try:
            dev = torch.device(device) if not isinstance(device, int) else torch.device("cuda", device)
        except (RuntimeError, TypeError) as e:
            raise _err(ValueError, "device", "a torch.device, a device string or a CUDA index", repr(device)) from e
        if dev.type == "cuda" and dev.index is None:
            dev = torch.device("cuda", torch.cuda.current_device())
    if dev.type == "cuda":
        with torch.cuda.device(dev):
            if torch.cuda.is_current_stream_capturing() or (stream is not None and _stream_capturing(stream)):
                raise RuntimeError("gvr_topk.warmup: called during CUDA-graph capture; warm up before capture "
                                   "(warm-up compiles kernels, which capture forbids)")
    before = cache.warm_count()
    batch_max = max(rows_l) // next_n
    rmax = max(rows_l)

    def body():
        kv = torch.full((batch_max,), max_seq_len, dtype=torch.int32, device=dev)
        # Hints: K distinct in-range columns (their content never changes what compiles).
        n_env = max(min(max_seq_len // compress_ratio, npad), 1)
        pre = torch.zeros(batch_max, strides["hint_stride"], dtype=torch.int32, device=dev)
        pre[:, :k] = torch.arange(k, dtype=torch.int32, device=dev) % n_env
        idx = torch.empty(rmax, strides["out_stride"], dtype=torch.int32, device=dev)
        val = torch.empty(rmax, strides["values_stride"], dtype=torch.float32, device=dev)
        # Distinct, deterministic scores (a bijective hash of the column; no RNG, so warm-up leaves the caller's
        # random state alone); every row the same, so the temporaries are one row long.
        row = torch.arange(row_stride, dtype=torch.int64, device=dev).mul_(2654435761).remainder_(1 << 24)
        row = row.to(torch.float32).mul_(1.0 / (1 << 24))
        for dt in dtypes:
            x = row.to(dt).repeat(rmax, 1)
            for r in rows_l:
                b = r // next_n
                for h in hinted_l:
                    for v in values_l:
                        run_varlen(x[:r, :npad], pre[:b, :k] if h else None, kv[:b], idx[:r, :k], next_n=next_n,
                                   compress_ratio=compress_ratio, values=val[:r, :k] if v else None,
                                   max_seq_len=max_seq_len, family=family)

    if dev.type == "cuda":
        with torch.cuda.device(dev):
            if stream is not None:
                with torch.cuda.stream(stream):
                    body()
            else:
                body()
    else:
        body()
    return cache.warm_count() - before


def _stream_capturing(stream) -> bool:
    with torch.cuda.stream(stream):
        return torch.cuda.is_current_stream_capturing()


def warmup_for_config(config, *, batch_sizes, max_seq_len: int, npad: Optional[int] = None,
                      row_stride: Optional[int] = None, with_values=(False, True), dtype=torch.float32,
                      device=None, stream: Optional["torch.cuda.Stream"] = None) -> int:
    """:func:`warmup` for a model config: K, next_n, the indexer layers' compress ratios and the hint modes.

    Parameters
    ----------
    config : gvr_topk.policy.GvrConfig or str or os.PathLike
        A loaded config, or a name / path :func:`gvr_topk.policy.load_config` accepts (e.g. ``"deepseek-v3.2"``).
    batch_sizes : int or sequence of int
        Request batch sizes of the calls (e.g. every padded batch a CUDA graph is captured for); rows are
        ``batch * next_n`` with the config's ``next_n``.
    max_seq_len : int
        ``max_seq_len`` the calls pass (uncompressed tokens).
    npad : int, optional
        Row width of ``logits``; default ``ceil(max_seq_len / compress_ratio)`` for each compress ratio.
    row_stride : int, optional
        ``logits.stride(0)``; default ``npad``.
    with_values, dtype, device, stream
        As in :func:`warmup`.

    Returns
    -------
    int
        Launchers newly compiled.

    Notes
    -----
    Hint modes come from the config's scenario policy: hint-free is always warmed (scenarios without a prior, and
    batches where no request has one), hinted too when any scenario is hinted.
    """
    from .policy import GvrConfig
    from .policy import load_config

    cfg = config if isinstance(config, GvrConfig) else load_config(config)
    _check_int("max_seq_len", max_seq_len, 0)
    if npad is not None:
        _check_int("npad", npad, 1)
    sizes = _as_list("batch_sizes", batch_sizes, int)
    for b in sizes:
        _check_int("batch_sizes", b, 1)
    hinted = [False] + ([True] if cfg.arena_needed else [])
    ratios = sorted({cfg.compress_ratio(layer) for layer in cfg.indexer_layers})
    total = 0
    for cr in ratios:
        width = -(-max_seq_len // cr) if npad is None else npad
        total += warmup([b * cfg.next_n for b in sizes], cfg.k, max(width, 1), max_seq_len, row_stride=row_stride,
                        next_n=cfg.next_n, compress_ratio=cr, hinted=hinted, with_values=with_values, dtype=dtype,
                        device=device, stream=stream)
    return total
