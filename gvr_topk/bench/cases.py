"""Benchmark cases as frozen, named dataclasses: the target grid, varlen decode batches, adversarial rows.

A case fixes everything that decides the inputs and the call: rows, row width, K, the varlen layout
(``next_n``, ``compress_ratio``) and the data kind. Cases that differ only in K share one input (``data_key``),
so the runner generates it once and times the read floor (which does not depend on K) once.
"""

from dataclasses import dataclass
from typing import Iterable
from typing import List
from typing import Optional
from typing import Sequence
from typing import Tuple

#: The target grid (performance.md): rows x N x K. The odd N are deliberate: rows that are not a multiple of any
#: tile, and row starts that are not 16-byte aligned.
GRID_ROWS = (1, 8, 64, 512)
GRID_N = (4111, 16387, 65536, 131075, 262143)
GRID_K = (512, 1024, 2048)

#: ``--quick``: both sides of the register/streaming boundary and the three N = 131075 target cells.
QUICK_ROWS = (1, 8, 64, 512)
QUICK_N = (16387, 131075)
QUICK_K = (512, 2048)

#: Adversarial row kinds (see :func:`gvr_topk.bench.data.adversarial_rows`).
ADVERSARIAL_KINDS = ("ramp", "equal", "few_distinct", "bf16_ties", "heavy_tail", "pm_inf", "neg_inf_tail")
ADVERSARIAL_N = 131075
ADVERSARIAL_K = 2048
ADVERSARIAL_ROWS = (1, 8, 64, 512)
QUICK_ADVERSARIAL_ROWS = (8,)

SUITES = ("grid", "varlen", "adversarial")


@dataclass(frozen=True)
class Case:
    """One timed call.

    Attributes
    ----------
    suite : str
        ``"grid"``, ``"varlen"`` or ``"adversarial"``.
    batch : int
        Requests; ``rows = batch * next_n``.
    n : int
        Row width ``npad`` of the score matrix; for grid and adversarial cases every row has exactly ``n``
        columns, for varlen cases ``n = max_seq_len // compress_ratio`` is the envelope.
    k : int
        Selections per row.
    next_n : int
        Rows per request (1 + MTP draft tokens).
    compress_ratio : int
        KV compression ratio (a power of two).
    data : str
        ``"decode"`` (the synthetic indexer) or one of :data:`ADVERSARIAL_KINDS`.
    seed : int
        Base seed of the data (the case's shape is mixed in, see :func:`gvr_topk.bench.data.case_seed`).
    """

    suite: str
    batch: int
    n: int
    k: int
    next_n: int = 1
    compress_ratio: int = 1
    data: str = "decode"
    seed: int = 0

    @property
    def rows(self) -> int:
        """Rows of the score matrix."""
        return self.batch * self.next_n

    @property
    def varlen(self) -> bool:
        """True when rows have their own lengths (``kv_lens`` differ per request)."""
        return self.suite == "varlen"

    @property
    def max_seq_len(self) -> int:
        """Upper bound of ``kv_lens`` in uncompressed tokens, passed to the op so it never syncs with the host."""
        if self.varlen:
            return self.n * self.compress_ratio
        return uniform_kv_len(self.n, self.compress_ratio)

    @property
    def data_key(self) -> Tuple:
        """Identity of the input tensors (everything but K)."""
        return (self.suite, self.batch, self.n, self.next_n, self.compress_ratio, self.data, self.seed)

    @property
    def name(self) -> str:
        """Short unique label, e.g. ``grid/64x131075/k2048`` or ``varlen/b32xnn2/cr4/131072/k2048``."""
        if self.suite == "grid":
            return f"grid/{self.rows}x{self.n}/k{self.k}"
        if self.suite == "varlen":
            return f"varlen/b{self.batch}xnn{self.next_n}/cr{self.compress_ratio}/{self.n}/k{self.k}"
        return f"adv/{self.data}/{self.rows}x{self.n}/k{self.k}"


def uniform_kv_len(n: int, compress_ratio: int = 1) -> int:
    """The ``kv_lens`` value that gives the last row of a request exactly ``n`` columns (earlier draft rows get
    fewer by the length rule, so only ``next_n = 1`` makes every row ``n`` long; grid cases use that)."""
    return n * compress_ratio


def grid_cases(rows: Iterable[int] = GRID_ROWS, ns: Iterable[int] = GRID_N, ks: Iterable[int] = GRID_K,
               seed: int = 0) -> List[Case]:
    """The rows x N x K grid of decode-like cases, ordered so cases sharing an input are adjacent."""
    return [Case("grid", b, n, k, seed=seed) for n in ns for b in rows for k in ks]


#: Varlen decode batches: (batch, next_n, compress_ratio, envelope columns). DeepSeek-V4-style compressed KV
#: (ratio 4) with MTP drafts (next_n 2 and 4); the envelope is a 512K-token context.
VARLEN_SHAPES = ((1, 2, 4, 131072), (4, 4, 4, 131072), (32, 2, 4, 131072), (128, 4, 4, 131072))
VARLEN_K = (512, 2048)
QUICK_VARLEN_SHAPES = ((4, 4, 4, 131072), (32, 2, 4, 131072))
QUICK_VARLEN_K = (2048,)


def varlen_cases(shapes: Sequence[Tuple[int, int, int, int]] = VARLEN_SHAPES, ks: Iterable[int] = VARLEN_K,
                 seed: int = 0) -> List[Case]:
    """Varlen decode batches (per-request kv lengths, next_n rows per request, compressed KV)."""
    return [Case("varlen", b, n, k, next_n=nn, compress_ratio=cr, seed=seed)
            for (b, nn, cr, n) in shapes for k in ks]


def adversarial_cases(kinds: Iterable[str] = ADVERSARIAL_KINDS, rows: Iterable[int] = ADVERSARIAL_ROWS,
                      n: int = ADVERSARIAL_N, k: int = ADVERSARIAL_K, seed: int = 0) -> List[Case]:
    """Named adversarial rows (ties, infinities, ramps) at the given shapes."""
    return [Case("adversarial", b, n, k, data=kind, seed=seed) for kind in kinds for b in rows]


#: CPU smoke shapes (Triton interpreter): register-family rows (N 700) and split-family rows (N 20000), tiny K.
TINY_ROWS = (1, 2)
TINY_N = (700, 20000)
TINY_K = (64,)


def tiny_cases(seed: int = 0) -> List[Case]:
    """A handful of tiny cases that run through the Triton interpreter in seconds (``--device cpu``)."""
    cases = [Case("grid", b, n, k, seed=seed) for n in TINY_N for b in TINY_ROWS for k in TINY_K]
    cases.append(Case("varlen", 2, 20000, 64, next_n=2, compress_ratio=4, seed=seed))
    cases += [Case("adversarial", 2, 3000, 64, data=kind, seed=seed) for kind in ("bf16_ties", "neg_inf_tail")]
    return cases


def select_cases(*, quick: bool = False, tiny: bool = False, suites: Sequence[str] = SUITES,
                 rows: Optional[Sequence[int]] = None, ns: Optional[Sequence[int]] = None,
                 ks: Optional[Sequence[int]] = None, seed: int = 0) -> List[Case]:
    """The cases of one run.

    Parameters
    ----------
    quick : bool
        The ``--quick`` subset (about a third of the full run).
    tiny : bool
        CPU smoke shapes (overrides ``quick``); explicit ``rows``/``ns``/``ks`` still replace the grid's axes.
    suites : sequence of str
        Which of :data:`SUITES` to include.
    rows, ns, ks : sequence of int, optional
        Replace the grid's axes; ``ks`` also filters the varlen and adversarial K.
    seed : int
        Base data seed.

    Returns
    -------
    list of Case
        Grid cases first, then varlen, then adversarial.
    """
    bad = [s for s in suites if s not in SUITES]
    if bad:
        raise ValueError(f"unknown suite(s) {bad}; expected a subset of {SUITES}")
    out: List[Case] = []
    if tiny:
        base = tiny_cases(seed)
        if rows is not None or ns is not None or ks is not None:
            base = [c for c in base if c.suite != "grid"] + grid_cases(rows or TINY_ROWS, ns or TINY_N,
                                                                        ks or TINY_K, seed)
        return [c for c in base if c.suite in suites and (ks is None or c.k in ks)]
    if "grid" in suites:
        out += grid_cases(rows or (QUICK_ROWS if quick else GRID_ROWS), ns or (QUICK_N if quick else GRID_N),
                          ks or (QUICK_K if quick else GRID_K), seed)
    if "varlen" in suites:
        vk = [k for k in (QUICK_VARLEN_K if quick else VARLEN_K) if ks is None or k in ks] or list(ks or ())
        out += varlen_cases(QUICK_VARLEN_SHAPES if quick else VARLEN_SHAPES, vk, seed)
    if "adversarial" in suites:
        ak = ADVERSARIAL_K if ks is None or ADVERSARIAL_K in ks else max(ks)
        out += adversarial_cases(rows=QUICK_ADVERSARIAL_ROWS if quick else ADVERSARIAL_ROWS, k=ak, seed=seed)
    return out
