"""What the plugin is, in plain Python: its attributes, shape and type rules, and tactics.

Nothing here imports TensorRT, so every rule the plugin enforces is unit-tested on CPU. The decorated functions in
:mod:`gvr_topk_plugin._trt` only translate TensorRT's descriptors into the ints and strings these functions take.
"""

from dataclasses import dataclass
from typing import List
from typing import Optional
from typing import Sequence

from gvr_topk import contract
from gvr_topk import tuning

#: The plugin's id, ``namespace::name`` (the same name as the torch op ``torch.ops.gvr.topk_varlen``).
PLUGIN_ID = "gvr::topk_varlen"
NAMESPACE, NAME = PLUGIN_ID.split("::")

#: Inputs, in the order the plugin (and the ahead-of-time kernel) takes them.
INPUTS = ("logits", "kv_lens", "pre_idx")
#: Outputs, in order.
OUTPUTS = ("indices",)
#: Attributes, in the order the decorated functions take them.
ATTRIBUTES = ("k", "next_n", "compress_ratio", "max_seq_len", "hint_free")

#: Element types each input accepts and the output has (TensorRT's names for them, upper case).
INPUT_DTYPES = {"logits": ("FP32",), "kv_lens": ("INT32",), "pre_idx": ("INT32",)}
OUTPUT_DTYPE = "INT32"

# Tactic ids (TensorRT reserves 0). Each names the kernel family the JIT implementation forces; the
# ahead-of-time implementation has two single-kernel families only and maps every tactic onto one of them.
TACTIC_AUTO = 1
TACTIC_REG = 2
TACTIC_STREAM = 3
TACTIC_SPLIT = 4
#: tactic -> family given to ``gvr_topk.run_varlen(family=...)`` (None: the dispatcher decides).
JIT_FAMILY = {TACTIC_AUTO: None, TACTIC_REG: "reg", TACTIC_STREAM: "stream", TACTIC_SPLIT: "split"}
#: Families the ahead-of-time implementation compiles: one program per row, no workspace.
AOT_FAMILIES = ("reg", "exact")


def _err(cls, what: str, expected: str, got) -> Exception:
    return cls(f"{PLUGIN_ID}: {what}: expected {expected}, got {got!r}")


@dataclass(frozen=True)
class PluginAttrs:
    """The plugin's attributes, validated.

    Attributes
    ----------
    k : int
        Selections per row, in [1, 2048]; the output is int32 ``(rows, k)``.
    next_n : int
        Rows per request (1 + MTP draft tokens), >= 1.
    compress_ratio : int
        KV compression ratio, a power of two.
    max_seq_len : int
        Upper bound of ``kv_lens`` (uncompressed tokens), >= 1. Rows are clamped to ``max_seq_len //
        compress_ratio`` columns, which also sizes the ahead-of-time kernel.
    hint_free : bool
        True: the ``pre_idx`` input is never read (any int32 tensor will do).
    """

    k: int
    next_n: int
    compress_ratio: int
    max_seq_len: int
    hint_free: bool

    @property
    def cr_shift(self) -> int:
        """log2(compress_ratio), the shift the kernels apply."""
        return self.compress_ratio.bit_length() - 1

    @property
    def n_cap(self) -> int:
        """Most columns any row can have, from the attributes alone (``max_seq_len // compress_ratio``)."""
        return self.max_seq_len // self.compress_ratio

    @property
    def kb(self) -> int:
        """Power of two >= k (at least 16): the kernels' slot tile for one output row."""
        return max(16, 1 << (self.k - 1).bit_length())


def _int_attr(name: str, v, lo: int, hi: Optional[int] = None) -> int:
    # numpy integers arrive from TensorRT's attribute deserialisation; accept them, but not bools or floats.
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise _err(TypeError, f"attribute '{name}'", "an int", f"{type(v).__name__} {v!r}")
    v = int(v.__index__())
    if v < lo or (hi is not None and v > hi):
        rng = f"an int >= {lo}" if hi is None else f"an int in [{lo}, {hi}]"
        raise _err(ValueError, f"attribute '{name}'", rng, v)
    return v


def validate_attrs(k, next_n, compress_ratio, max_seq_len, hint_free) -> PluginAttrs:
    """Check the plugin attributes and return them typed.

    Parameters
    ----------
    k : int
        Selections per row, in [1, 2048].
    next_n : int
        Rows per request, >= 1.
    compress_ratio : int
        A power of two, >= 1.
    max_seq_len : int
        Upper bound of ``kv_lens`` in uncompressed tokens, >= 1 (no host read of ``kv_lens`` ever happens).
    hint_free : int or bool
        0 or 1.

    Returns
    -------
    PluginAttrs

    Raises
    ------
    TypeError, ValueError
        Naming the attribute, what was expected and what was given.
    """
    k = _int_attr("k", k, 1, contract.MAX_K)
    next_n = _int_attr("next_n", next_n, 1)
    compress_ratio = _int_attr("compress_ratio", compress_ratio, 1)
    if compress_ratio & (compress_ratio - 1):
        raise _err(ValueError, "attribute 'compress_ratio'", "a power of two (1, 2, 4, ...)", compress_ratio)
    # The kernels take every scalar as int32.
    max_seq_len = _int_attr("max_seq_len", max_seq_len, 1, 2**31 - 1)
    hint_free = _int_attr("hint_free", hint_free, 0, 1)
    return PluginAttrs(k=k, next_n=next_n, compress_ratio=compress_ratio, max_seq_len=max_seq_len,
                       hint_free=bool(hint_free))


def _dim(shape: Sequence[Optional[int]], i: int) -> str:
    return "?" if shape[i] is None else str(shape[i])


def output_shape(attrs: PluginAttrs, logits: Sequence[Optional[int]], kv_lens: Sequence[Optional[int]],
                 pre_idx: Sequence[Optional[int]]) -> tuple:
    """Check the input shapes against each other and return the output shape.

    Parameters
    ----------
    attrs : PluginAttrs
        Validated attributes.
    logits, kv_lens, pre_idx : sequence of int or None
        Input shapes, one entry per dimension; None marks a dimension only known at run time (those are not
        checked here, the checks that involve them are left to the caller's data).

    Returns
    -------
    tuple
        ``(rows, k)``, ``rows`` being ``logits``' first dimension (None when dynamic).

    Raises
    ------
    ValueError
        Naming the input, with the expected and given shapes. ``pre_idx`` is checked only when
        ``attrs.hint_free`` is False.
    """
    if len(logits) != 2:
        raise _err(ValueError, "input 'logits'", "a 2-D tensor (rows, npad)", f"shape {tuple(logits)}")
    if len(kv_lens) != 1:
        raise _err(ValueError, "input 'kv_lens'", "a 1-D tensor (batch,)", f"shape {tuple(kv_lens)}")
    rows, npad = logits
    if npad is not None and npad < 1:
        raise _err(ValueError, "input 'logits'", "at least one column", f"shape {tuple(logits)}")
    if rows is not None and rows % attrs.next_n:
        raise _err(ValueError, "input 'logits'", f"a row count divisible by next_n={attrs.next_n}",
                   f"{rows} rows")
    batch = None if rows is None else rows // attrs.next_n
    if batch is not None and kv_lens[0] is not None and kv_lens[0] != batch:
        raise _err(ValueError, "input 'kv_lens'", f"length rows / next_n = {rows} / {attrs.next_n} = {batch}",
                   f"length {kv_lens[0]}")
    if not attrs.hint_free:
        if len(pre_idx) != 2:
            raise _err(ValueError, "input 'pre_idx'", f"a 2-D tensor (batch, {attrs.k})", f"shape {tuple(pre_idx)}")
        if batch is not None and pre_idx[0] is not None and pre_idx[0] != batch:
            raise _err(ValueError, "input 'pre_idx'", f"{batch} rows (one hint row per request)",
                       f"shape ({_dim(pre_idx, 0)}, {_dim(pre_idx, 1)})")
        # The ahead-of-time kernel reads hint rows with stride k, so the width must be exactly k.
        if pre_idx[1] is not None and pre_idx[1] != attrs.k:
            raise _err(ValueError, "input 'pre_idx'", f"width k = {attrs.k}",
                       f"shape ({_dim(pre_idx, 0)}, {_dim(pre_idx, 1)})")
    return (rows, attrs.k)


def check_dtypes(logits: str, kv_lens: str, pre_idx: str) -> None:
    """Check the input element types (TensorRT names such as ``"FP32"``, any case).

    Raises
    ------
    TypeError
        Naming the input, the accepted types and the given one.
    """
    for name, got in zip(INPUTS, (logits, kv_lens, pre_idx)):
        want = INPUT_DTYPES[name]
        if str(got).upper() not in want:
            raise _err(TypeError, f"input '{name}'", "dtype " + " or ".join(want), str(got))


def autotune_io_types() -> str:
    """The one type combination offered to TensorRT: inputs then the output, e.g. ``"FP32, INT32, INT32, INT32"``."""
    return ", ".join([INPUT_DTYPES[n][0] for n in INPUTS] + [OUTPUT_DTYPE])


def n_bound_static(attrs: PluginAttrs, npad: Optional[int]) -> Optional[int]:
    """The row-length clamp ``min(max_seq_len // compress_ratio, npad)`` when ``npad`` is known, else None."""
    return None if npad is None else min(attrs.n_cap, npad)


def n_bound_max(attrs: PluginAttrs, npad: Optional[int]) -> int:
    """Largest value the row-length clamp can take: what a kernel built before ``npad`` is known must cover."""
    return attrs.n_cap if npad is None else min(attrs.n_cap, npad)


def reg_fits(attrs: PluginAttrs, npad: Optional[int]) -> bool:
    """True when every row fits the register family's tile (``tuning.REG_MAX_N`` columns)."""
    return n_bound_max(attrs, npad) <= tuning.REG_MAX_N


def tactics(attrs: PluginAttrs, npad: Optional[int]) -> List[int]:
    """Tactic ids offered to TensorRT's build-time timing for one shape.

    ``TACTIC_REG`` is offered only when every row fits a register tile (forcing it on longer rows is an error in
    ``gvr_topk``); the others always apply.
    """
    out = [TACTIC_AUTO]
    if reg_fits(attrs, npad):
        out.append(TACTIC_REG)
    out += [TACTIC_STREAM, TACTIC_SPLIT]
    return out


def jit_family(tactic: Optional[int]) -> Optional[str]:
    """The ``family=`` the JIT implementation passes to ``gvr_topk.run_varlen`` for a tactic (None: route).

    Raises
    ------
    ValueError
        For a tactic id this plugin never offered.
    """
    if tactic is None or tactic == 0:
        # TensorRT passes 0 ("default") where no tactic was timed, e.g. when autotune is skipped.
        return None
    if tactic not in JIT_FAMILY:
        raise _err(ValueError, "tactic", f"one of {sorted(JIT_FAMILY)} (or 0)", tactic)
    return JIT_FAMILY[tactic]


def aot_family(attrs: PluginAttrs, npad: Optional[int], tactic: Optional[int]) -> str:
    """The single-kernel family the ahead-of-time implementation compiles for a tactic.

    ``reg`` for the automatic and register tactics when every row fits a register tile, otherwise ``exact``
    (whole-row selection streamed from global memory: any length, no workspace, slower). The streaming tactics
    need a workspace that an ahead-of-time kernel cannot be given, so they map to ``exact``.
    """
    if tactic not in (None, 0) and tactic not in JIT_FAMILY:
        raise _err(ValueError, "tactic", f"one of {sorted(JIT_FAMILY)} (or 0)", tactic)
    if tactic in (None, 0, TACTIC_AUTO, TACTIC_REG) and reg_fits(attrs, npad):
        return "reg"
    return "exact"
