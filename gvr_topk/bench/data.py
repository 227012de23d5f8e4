"""Benchmark inputs: a small synthetic DSA indexer (decode-like scores with a realistic previous-step hint) and
adversarial rows.

The decode generator imitates the shape of DeepSeek-V3.2's lightning indexer (``index_n_heads`` 64,
``index_head_dim`` 128, ``index_topk`` 2048: a weighted sum over heads of ReLU(q . k)) at reduced size, 8 heads
of 32 dimensions by default, which keeps a 512 x 262143 step cheap to generate while preserving what matters for
top-k: a positive-skewed score distribution, runs of related tokens, recency and attention-sink structure, and
queries that drift a little between decode steps, so the previous step's top-k overlaps most, not all, of the
current one.

Everything is drawn from one ``torch.Generator`` seeded from the case (:func:`case_seed`), on the target device:
the same case gives the same tensors on every run on the same kind of device.
"""

import math
import zlib
from dataclasses import dataclass
from typing import Optional

import torch

from .cases import Case


@dataclass(frozen=True)
class IndexerSpec:
    """Parameters of the synthetic indexer.

    Attributes
    ----------
    heads, head_dim : int
        Indexer heads and their dimension.
    segment : int
        Tokens per topical segment: keys of one segment share a topic vector, so relevant tokens come in runs
        (as retrieved passages do).
    topics : int
        Distinct topics in the context.
    topic_weight : float
        Share of a key that is its topic (the rest is per-token noise).
    query_topics : int
        Topics each request's query attends to.
    drift : float
        Relative change of a query from one decode step to the next (sets how good the hint is).
    draft_jitter : float
        Relative difference between the ``next_n`` rows (draft positions) of one request.
    recency_tokens, recency_gain : float
        Scale (columns) and height of the bonus of the most recent columns.
    sink_tokens : int
        Leading columns that get ``sink_gain`` (attention sinks).
    sink_gain : float
        Their bonus.
    """

    heads: int = 8
    head_dim: int = 32
    segment: int = 64
    topics: int = 512
    topic_weight: float = 0.8
    query_topics: int = 24
    drift: float = 0.25
    draft_jitter: float = 0.05
    recency_tokens: float = 256.0
    recency_gain: float = 1.5
    sink_tokens: int = 4
    sink_gain: float = 3.0


DEFAULT_SPEC = IndexerSpec()


@dataclass
class Inputs:
    """One case's tensors (shared by every K of the same ``Case.data_key``).

    Attributes
    ----------
    logits : torch.Tensor
        float32 ``(rows, npad)``: step-t scores; columns at or past a row's length hold -inf (what a masked
        indexer writes, and what lets ``torch.topk`` over the full width serve as the baseline).
    kv_lens : torch.Tensor
        int32 ``(batch,)``: uncompressed KV length of each request at step t.
    hint : torch.Tensor
        int32 ``(batch, k_max)``: the previous step's top-``k_max`` of each request's last row, best first
        (``hint[:, :K]`` is the top-K); slots past a short previous row are -1.
    lengths : torch.Tensor
        int64 ``(rows,)``: valid columns of each row (the op's length rule).
    """

    logits: torch.Tensor
    kv_lens: torch.Tensor
    hint: torch.Tensor
    lengths: torch.Tensor

    def hint_for(self, k: int) -> torch.Tensor:
        """int32 ``(batch, k)`` contiguous hint: the previous step's top-k."""
        return self.hint[:, :k].contiguous()


def case_seed(case: Case) -> int:
    """Deterministic 63-bit seed of a case's data (stable across processes, unlike ``hash``)."""
    return (zlib.crc32(repr(case.data_key).encode()) << 16) ^ case.seed


def _row_lengths(kv_lens: torch.Tensor, next_n: int, compress_ratio: int, npad: int) -> torch.Tensor:
    r = torch.arange(kv_lens.shape[0] * next_n, device=kv_lens.device)
    n = (kv_lens.to(torch.int64)[r // next_n] - next_n + r % next_n + 1) // compress_ratio
    return n.clamp(0, npad)


def _unit(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-6)


class SyntheticIndexer:
    """Keys of one context and per-request queries; scores any step's rows.

    Parameters
    ----------
    npad : int
        Context columns (the row width).
    batch : int
        Requests.
    gen : torch.Generator
        Source of all randomness (on ``device``).
    device : torch.device
    spec : IndexerSpec
    """

    def __init__(self, npad: int, batch: int, gen: torch.Generator, device, spec: IndexerSpec = DEFAULT_SPEC):
        h, d = spec.heads, spec.head_dim
        self.spec, self.gen, self.device = spec, gen, device
        topic_vecs = _unit(torch.randn(h, spec.topics, d, generator=gen, device=device))
        seg_topic = torch.randint(0, spec.topics, (-(-npad // spec.segment),), generator=gen, device=device)
        col_topic = seg_topic.repeat_interleave(spec.segment)[:npad]
        noise = _unit(torch.randn(h, npad, d, generator=gen, device=device))
        # (heads, npad, head_dim): a key is mostly its segment's topic plus token noise.
        self.keys = spec.topic_weight * topic_vecs[:, col_topic] + (1.0 - spec.topic_weight) * noise
        # Each request attends to a few topics, with unequal weights; the query is their blend plus noise.
        pick = torch.randint(0, spec.topics, (batch, spec.query_topics), generator=gen, device=device)
        mix = torch.rand(batch, spec.query_topics, generator=gen, device=device) ** 2
        topics_bhd = topic_vecs[:, pick]  # (h, batch, query_topics, d)
        blend = (topics_bhd * mix[None, :, :, None]).sum(2).permute(1, 0, 2)  # (batch, h, d)
        self.query = _unit(_unit(blend) + 0.3 * _unit(torch.randn(batch, h, d, generator=gen, device=device)))
        # Per-head weights (the indexer's learned head gates): positive, uneven.
        self.head_w = (torch.rand(batch, h, generator=gen, device=device) + 0.25) / h
        self.scale = math.sqrt(d)

    def step(self) -> None:
        """Advance one decode step: every query drifts by ``spec.drift`` of its norm, then is renormalised."""
        noise = _unit(torch.randn(self.query.shape, generator=self.gen, device=self.device))
        self.query = _unit(self.query + self.spec.drift * noise)

    def scores(self, lengths: torch.Tensor, next_n: int, npad: int) -> torch.Tensor:
        """float32 ``(batch * next_n, npad)`` scores of the current step; -inf at and past each row's length.

        Parameters
        ----------
        lengths : torch.Tensor
            int64 ``(batch * next_n,)`` valid columns per row.
        next_n : int
            Draft rows per request; their queries differ by ``spec.draft_jitter``.
        npad : int
            Row width.
        """
        rows = lengths.shape[0]
        q = self.query.repeat_interleave(next_n, dim=0)  # (rows, h, d)
        if next_n > 1:
            jitter = _unit(torch.randn(q.shape, generator=self.gen, device=self.device))
            q = _unit(q + self.spec.draft_jitter * jitter)
        w = self.head_w.repeat_interleave(next_n, dim=0)
        out = torch.zeros(rows, npad, dtype=torch.float32, device=self.device)
        for h in range(self.spec.heads):
            # One head at a time keeps the temporary at rows x npad.
            s = torch.relu(q[:, h] @ self.keys[h].T * self.scale)
            out.addcmul_(s, w[:, h:h + 1])
        cols = torch.arange(npad, device=self.device)
        age = (lengths[:, None] - 1 - cols[None, :]).clamp_min(0).to(torch.float32)
        out += self.spec.recency_gain * torch.exp(-age / self.spec.recency_tokens)
        out[:, :self.spec.sink_tokens] += self.spec.sink_gain
        return out.masked_fill_(cols[None, :] >= lengths[:, None], float("-inf"))


def _draw_kv_lens(case: Case, gen: torch.Generator, device) -> torch.Tensor:
    """Per-request KV lengths of a varlen case: spread over [max/16, max], one request at the envelope, and (for
    batches of 4+) one request short enough that its rows have fewer than K columns."""
    top = case.max_seq_len
    lo = max(top // 16, 1)
    kv = torch.randint(lo, top + 1, (case.batch,), generator=gen, device=device)
    kv[0] = top
    if case.batch >= 4:
        kv[-1] = max(case.k * case.compress_ratio // 2, case.next_n)
    return kv.to(torch.int32)


def _prev_topk(prev: torch.Tensor, prev_len: torch.Tensor, k_max: int) -> torch.Tensor:
    """int32 ``(rows, k_max)`` top-k of the previous step's rows (``torch.topk``, best first); -1 past short rows."""
    kk = min(k_max, prev.shape[1])
    idx = torch.topk(prev, kk, dim=1, sorted=True).indices
    idx = torch.where(idx < prev_len[:, None], idx, torch.full_like(idx, -1))
    if kk < k_max:
        idx = torch.cat([idx, idx.new_full((idx.shape[0], k_max - kk), -1)], dim=1)
    return idx.to(torch.int32)


def decode_inputs(case: Case, k_max: int, device, spec: IndexerSpec = DEFAULT_SPEC) -> Inputs:
    """Step-t scores and the step-(t-1) top-k hint of a decode-like case.

    Parameters
    ----------
    case : Case
        A ``"grid"`` or ``"varlen"`` case (``data == "decode"``).
    k_max : int
        Width of the hint to produce (the largest K that will use these inputs).
    device : torch.device or str
    spec : IndexerSpec

    Returns
    -------
    Inputs
    """
    device = torch.device(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(case_seed(case))
    npad = case.n
    if case.varlen:
        kv = _draw_kv_lens(case, gen, device)
    else:
        kv = torch.full((case.batch,), case.max_seq_len, dtype=torch.int32, device=device)
    lengths = _row_lengths(kv, case.next_n, case.compress_ratio, npad)
    idx = SyntheticIndexer(npad, case.batch, gen, device, spec)
    # The previous step: every request was next_n tokens shorter (all drafts accepted); its last row's top-k is
    # what a decode loop would hand to this step.
    prev_kv = (kv - case.next_n).clamp_min(0)
    prev_len = _row_lengths(prev_kv, 1, case.compress_ratio, npad)
    prev = idx.scores(prev_len, 1, npad)
    hint = _prev_topk(prev, prev_len, k_max)
    del prev
    idx.step()
    logits = idx.scores(lengths, case.next_n, npad)
    return Inputs(logits=logits, kv_lens=kv, hint=hint, lengths=lengths)


def adversarial_rows(kind: str, rows: int, n: int, gen: torch.Generator, device) -> torch.Tensor:
    """float32 ``(rows, n)`` rows built to stress an exact selection.

    Parameters
    ----------
    kind : str
        ``"ramp"``: ascending ``j + row`` (the top-K are the last columns, the worst case for a threshold taken
        from early columns); ``"equal"``: all 1.0 (every score ties; the tie rule alone picks the lowest K
        columns); ``"few_distinct"``: four values; ``"bf16_ties"``: normal scores rounded to bfloat16 (thousands
        of exact ties around the K-th score); ``"heavy_tail"``: standard Cauchy (huge outliers squeeze the
        bulk into a narrow key range); ``"pm_inf"``: normal with 1% +inf and 1% -inf; ``"neg_inf_tail"``: only
        the first ``n // 128`` columns finite, the rest -inf (fewer finite scores than K: -inf ties decide).
    rows, n : int
        Shape.
    gen : torch.Generator
    device : torch.device or str

    Returns
    -------
    torch.Tensor
    """
    shape = (rows, n)
    if kind == "ramp":
        return (torch.arange(n, device=device, dtype=torch.float32)[None, :]
                + torch.arange(rows, device=device, dtype=torch.float32)[:, None])
    if kind == "equal":
        return torch.ones(shape, device=device)
    if kind == "few_distinct":
        return torch.randint(0, 4, shape, generator=gen, device=device).to(torch.float32)
    if kind == "bf16_ties":
        return torch.randn(shape, generator=gen, device=device).to(torch.bfloat16).to(torch.float32)
    if kind == "heavy_tail":
        u = torch.rand(shape, generator=gen, device=device).clamp(1e-7, 1 - 1e-7)
        return torch.tan(math.pi * (u - 0.5))
    if kind == "pm_inf":
        x = torch.randn(shape, generator=gen, device=device)
        u = torch.rand(shape, generator=gen, device=device)
        x = x.masked_fill(u < 0.01, float("inf"))
        return x.masked_fill(u > 0.99, float("-inf"))
    if kind == "neg_inf_tail":
        x = torch.randn(shape, generator=gen, device=device)
        x[:, max(n // 128, 1):] = float("-inf")
        return x
    raise ValueError(f"unknown adversarial kind {kind!r}")


def adversarial_inputs(case: Case, k_max: int, device) -> Inputs:
    """Adversarial rows at step t; the hint is the top-k of the same kind of rows one column shorter, drawn with
    another seed (a previous step that shares the structure, not the values)."""
    device = torch.device(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(case_seed(case))
    rows, n = case.rows, case.n
    prev_len = torch.full((case.batch,), max(n - 1, 0), dtype=torch.int64, device=device)
    prev = adversarial_rows(case.data, case.batch, n, gen, device)
    prev[:, max(n - 1, 0):] = float("-inf")
    hint = _prev_topk(prev, prev_len, k_max)
    del prev
    logits = adversarial_rows(case.data, rows, n, gen, device)
    kv = torch.full((case.batch,), case.max_seq_len, dtype=torch.int32, device=device)
    lengths = _row_lengths(kv, case.next_n, case.compress_ratio, n)
    return Inputs(logits=logits, kv_lens=kv, hint=hint, lengths=lengths)


def make_inputs(case: Case, k_max: Optional[int] = None, device="cpu", spec: IndexerSpec = DEFAULT_SPEC) -> Inputs:
    """The inputs of ``case`` (decode-like or adversarial), with a hint ``k_max`` wide (default ``case.k``)."""
    k_max = case.k if k_max is None else k_max
    if case.data == "decode":
        return decode_inputs(case, k_max, device, spec)
    return adversarial_inputs(case, k_max, device)
