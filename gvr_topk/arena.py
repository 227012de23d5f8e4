"""The prior arena: last step's top-k of every live request, per indexer layer, for the op's ``pre_idx``.

Layout: one int32 tensor ``prior[L, S + 2, K]`` (L indexer layers, S = ``max_sequences`` slots, K = the model's
``index_topk``). Each request owns one slot from its first appearance until it is released or reclaimed, so a
batch can be recomposed (requests finish, are evicted, arrive, are reordered) without moving any prior data: only
the per-position slot vectors change. Two extra rows make every batch position resolvable without branches:

* ``NULL`` (row S): always -1, never written. Positions that get no hint read it; the kernel ignores -1 entries,
  so such rows run hint-free inside a hinted launch.
* ``SCRATCH`` (row S + 1): never read. Padding positions of a CUDA-graph batch write their rows here.

Host work (slot bookkeeping by request id, one small host-to-device copy of the slot vectors) happens in
:meth:`PriorArena.prepare`, which runs before a step and outside any CUDA graph. The per-layer device work
(:meth:`PriorArena.read`, :meth:`PriorArena.write_back`) reads no device value on the host and uses only buffers
allocated in the constructor, so it can be captured and replayed.
"""

from collections import OrderedDict
from typing import Hashable
from typing import List
from typing import Optional
from typing import Sequence

import torch

from . import contract


def _arg_error(cls, name: str, expected: str, got) -> Exception:
    return cls(f"gvr_topk.arena: argument '{name}': expected {expected}, got {got}")


def _host(values: Sequence[int], device: torch.device) -> torch.Tensor:
    """int64 host tensor of ``values``, pinned when it is bound for a CUDA device.

    Copied with ``non_blocking=True`` it reaches the device without a host synchronisation; the caching host
    allocator keeps a pinned block alive until its copy has run, so a later reuse cannot race the transfer.
    """
    t = torch.tensor(values, dtype=torch.int64)
    return t.pin_memory() if device.type == "cuda" else t


def _to_device(values: Sequence[int], device: torch.device) -> torch.Tensor:
    """int64 host list -> new device tensor, without a host synchronisation."""
    return _host(values, device).to(device, non_blocking=True)


def last_token_rows(prefill_indices: torch.Tensor, seq_lens: torch.Tensor) -> torch.Tensor:
    """Top-k row of each context request's last prompt token, the prefill seed of its prior.

    Parameters
    ----------
    prefill_indices : torch.Tensor
        int32 ``(total_tokens, >= K)``: prefill top-k of every context token, requests concatenated.
    seq_lens : torch.Tensor
        integer ``(num_requests,)`` on the same device: prompt tokens of each request (all >= 1).

    Returns
    -------
    torch.Tensor
        int32 ``(num_requests, prefill_indices.shape[1])``, gathered on the device (no host read).
    """
    if prefill_indices.dim() != 2 or prefill_indices.dtype != torch.int32:
        raise _arg_error(TypeError, "prefill_indices", "an int32 2-D tensor",
                         f"{prefill_indices.dtype} with shape {tuple(prefill_indices.shape)}")
    if seq_lens.dim() != 1 or seq_lens.device != prefill_indices.device:
        raise _arg_error(ValueError, "seq_lens", f"a 1-D tensor on {prefill_indices.device}",
                         f"shape {tuple(seq_lens.shape)} on {seq_lens.device}")
    last = torch.cumsum(seq_lens.to(torch.int64), 0) - 1
    return prefill_indices.index_select(0, last)


class PriorArena:
    """Per-layer previous-step top-k rows, tracked by request id.

    Parameters
    ----------
    num_layers : int
        Indexer layers (one slab each).
    max_sequences : int
        Requests tracked at once (slots); also the largest (padded) batch a step may have.
    k : int
        Row width, the model's K.
    device : torch.device or str
        Where the buffers live.
    layer_ids : Sequence[int], optional
        Decoder-layer id of each slab, ascending (e.g. the CSA layers 2, 4, ... of DeepSeek-V4). Methods take these
        ids; default ``range(num_layers)``.

    Attributes
    ----------
    prior : torch.Tensor
        int32 ``(num_layers, max_sequences + 2, k)``; -1 where no prior is held. Its address never changes.
    read_slots, write_slots : torch.Tensor
        int64 ``(max_sequences,)``: slot read / written by each batch position in the current step (stable
        addresses, updated in place by :meth:`prepare`).
    """

    def __init__(self, num_layers: int, max_sequences: int, k: int, device, *,
                 layer_ids: Optional[Sequence[int]] = None):
        for name, v, lo in (("num_layers", num_layers, 1), ("max_sequences", max_sequences, 1), ("k", k, 1)):
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                raise _arg_error(ValueError, name, f"an int >= {lo}", repr(v))
        if k > contract.MAX_K:
            raise _arg_error(ValueError, "k", f"an int <= {contract.MAX_K}", k)
        layer_ids = list(range(num_layers)) if layer_ids is None else [int(x) for x in layer_ids]
        if len(layer_ids) != num_layers or len(set(layer_ids)) != num_layers:
            raise _arg_error(ValueError, "layer_ids", f"{num_layers} distinct layer ids", layer_ids)
        self.device = torch.device(device)
        self.num_layers, self.max_sequences, self.k = num_layers, max_sequences, k
        self.NULL, self.SCRATCH = max_sequences, max_sequences + 1
        self._slab = {lid: i for i, lid in enumerate(layer_ids)}
        self.layer_ids = tuple(layer_ids)
        self.prior = torch.full((num_layers, max_sequences + 2, k), contract.PAD_INDEX, dtype=torch.int32,
                                device=self.device)
        self.device = self.prior.device  # normalised ("cuda" -> "cuda:0") so device checks compare equal
        self.read_slots = torch.full((max_sequences,), self.NULL, dtype=torch.int64, device=self.device)
        self.write_slots = torch.full((max_sequences,), self.SCRATCH, dtype=torch.int64, device=self.device)
        # Host bookkeeping. _slots keeps every request that holds a slot, least recently scheduled first, so
        # requests absent from a batch ("parked": paused, waiting) keep their prior until the space is needed.
        self._slots: "OrderedDict[Hashable, int]" = OrderedDict()
        self._free: List[int] = list(range(max_sequences - 1, -1, -1))
        self._batch: List[Hashable] = []
        self._batch_rows = 0

    # ------------------------------------------------------------------ sizes and lookups

    @property
    def nbytes(self) -> int:
        """Device bytes held: the prior rows (incl. the NULL and SCRATCH rows) and the two slot vectors."""
        return sum(t.numel() * t.element_size() for t in (self.prior, self.read_slots, self.write_slots))

    @property
    def batch(self) -> List[Hashable]:
        """Request ids of the current step, in batch order (a copy)."""
        return list(self._batch)

    def tracked(self) -> List[Hashable]:
        """Every request id holding a slot (in the batch or parked), least recently scheduled first."""
        return list(self._slots)

    def slot_of(self, request_id: Hashable) -> Optional[int]:
        """Slot of a request, or None when it holds none."""
        return self._slots.get(request_id)

    def slab(self, layer: int) -> int:
        """Arena slab of decoder layer ``layer``; raises ``KeyError`` naming the layer if it has no indexer."""
        try:
            return self._slab[layer]
        except (KeyError, TypeError):
            raise KeyError(f"gvr_topk.arena: argument 'layer': expected an indexer layer id "
                           f"{list(self.layer_ids)[:8]}{'...' if self.num_layers > 8 else ''}, got {layer!r}") from None

    # ------------------------------------------------------------------ host side (before a step, outside graphs)

    def _assign(self, ids: Sequence[Hashable], keep: set) -> None:
        """Give each unseen id a slot; reclaim least-recently-scheduled parked ids when no slot is free."""
        fresh = []
        for rid in ids:
            if rid in self._slots:
                continue
            if not self._free:
                victim = next((r for r in self._slots if r not in keep), None)
                if victim is None:
                    raise _arg_error(ValueError, "request_ids", f"at most max_sequences={self.max_sequences} "
                                                                "requests in use at once", len(keep))
                self._free.append(self._slots.pop(victim))
            slot = self._free.pop()
            self._slots[rid] = slot
            fresh.append(slot)
        if fresh:
            # A slot may still hold a finished request's rows: clear them so a new request reads no hint.
            self.prior.index_fill_(1, _to_device(fresh, self.device), contract.PAD_INDEX)

    def prepare(self, request_ids: Sequence[Hashable], use_prior: Optional[Sequence[bool]] = None, *,
                padded_batch: Optional[int] = None) -> int:
        """Set up the slot vectors for the next decode step (host bookkeeping + one small copy, no sync).

        Parameters
        ----------
        request_ids : Sequence[Hashable]
            Ids of the step's requests in batch order (distinct). Unseen ids get a slot with no prior (-1 rows);
            known ids keep theirs whatever their position; ids absent from the list stay parked until
            :meth:`release` or until their slot is needed.
        use_prior : Sequence[bool], optional
            Per request: read its prior (True, default) or a -1 row (False: no usable prior this step). Every
            request writes back either way.
        padded_batch : int, optional
            Batch size the step runs with (a CUDA graph's captured size), >= ``len(request_ids)``; the extra
            positions read -1 rows and write to the scratch row. Default: ``len(request_ids)``.

        Returns
        -------
        int
            The step's batch size (``padded_batch`` or ``len(request_ids)``).
        """
        ids = list(request_ids)
        if len(set(ids)) != len(ids):
            dup = sorted({str(r) for r in ids if ids.count(r) > 1})
            raise _arg_error(ValueError, "request_ids", "distinct ids", f"duplicates {dup}")
        use = [True] * len(ids) if use_prior is None else [bool(u) for u in use_prior]
        if len(use) != len(ids):
            raise _arg_error(ValueError, "use_prior", f"{len(ids)} flags (one per request)", f"{len(use)}")
        if len(ids) > self.max_sequences:
            raise _arg_error(ValueError, "request_ids", f"at most max_sequences={self.max_sequences} requests per "
                                                        "step", f"{len(ids)}")
        rows = len(ids) if padded_batch is None else padded_batch
        if not isinstance(rows, int) or not len(ids) <= rows <= self.max_sequences:
            raise _arg_error(ValueError, "padded_batch", f"an int in [len(request_ids)={len(ids)}, "
                                                         f"max_sequences={self.max_sequences}]", repr(padded_batch))
        keep = set(ids)
        self._assign(ids, keep)
        for rid in ids:  # most recently scheduled last: reclaim order
            self._slots.move_to_end(rid)
        slots = [self._slots[r] for r in ids]
        read = [s if u else self.NULL for s, u in zip(slots, use)] + [self.NULL] * (self.max_sequences - len(ids))
        write = slots + [self.SCRATCH] * (self.max_sequences - len(ids))
        self.read_slots.copy_(_host(read, self.device), non_blocking=True)
        self.write_slots.copy_(_host(write, self.device), non_blocking=True)
        self._batch, self._batch_rows = ids, rows
        return rows

    def release(self, request_ids: Sequence[Hashable]) -> None:
        """Forget finished or evicted requests (unknown ids are ignored); their slots are reused later."""
        for rid in request_ids:
            slot = self._slots.pop(rid, None)
            if slot is not None:
                self._free.append(slot)
        self._batch = [r for r in self._batch if r in self._slots]

    def reset(self) -> None:
        """Drop every request and clear all rows (e.g. after a warm-up with dummy requests)."""
        self._slots.clear()
        self._free = list(range(self.max_sequences - 1, -1, -1))
        self._batch, self._batch_rows = [], 0
        self.prior.fill_(contract.PAD_INDEX)
        self.read_slots.fill_(self.NULL)
        self.write_slots.fill_(self.SCRATCH)

    def seed(self, layer: int, request_ids: Sequence[Hashable], topk_rows: torch.Tensor) -> None:
        """Store prefill top-k rows as the priors of ``request_ids`` on one layer (after prefill, outside graphs).

        Parameters
        ----------
        layer : int
            Decoder-layer id (an indexer layer).
        request_ids : Sequence[Hashable]
            Requests whose prefill just finished; unseen ids get a slot (they are not added to the batch).
        topk_rows : torch.Tensor
            int32 ``(len(request_ids), >= K)`` on the arena's device, e.g. :func:`last_token_rows` of the
            prefill top-k. Entries may be -1 (short prompts).
        """
        slab = self.slab(layer)
        ids = list(request_ids)
        self._check_rows("topk_rows", topk_rows, len(ids))
        if not ids:
            return
        self._assign(ids, set(ids) | set(self._batch))
        for rid in ids:  # just seeded: the last to be reclaimed
            self._slots.move_to_end(rid)
        slots = _to_device([self._slots[r] for r in ids], self.device)
        self.prior[slab].index_copy_(0, slots, topk_rows[:, :self.k])

    # ------------------------------------------------------------------ device side (capturable)

    def _check_rows(self, name: str, t: torch.Tensor, rows: int) -> None:
        if not isinstance(t, torch.Tensor) or t.dtype != torch.int32 or t.dim() != 2:
            got = f"{t.dtype} with shape {tuple(t.shape)}" if isinstance(t, torch.Tensor) else type(t).__name__
            raise _arg_error(TypeError, name, "an int32 2-D tensor", got)
        if t.shape[0] != rows or t.shape[1] < self.k:
            raise _arg_error(ValueError, name, f"shape ({rows}, >= K={self.k})", tuple(t.shape))
        if t.device != self.device:
            raise _arg_error(ValueError, name, f"a tensor on {self.device}", t.device)

    def read(self, layer: int, batch_rows: Optional[int] = None) -> torch.Tensor:
        """The op's ``pre_idx`` for one layer: int32 ``(batch_rows, K)``, -1 rows where no prior is used.

        Parameters
        ----------
        layer : int
            Decoder-layer id.
        batch_rows : int, optional
            The step's (padded) batch; default: the value :meth:`prepare` returned.
        """
        rows = self._batch_rows if batch_rows is None else batch_rows
        return self.prior[self.slab(layer)].index_select(0, self.read_slots[:rows])

    def write_back(self, layer: int, indices: torch.Tensor, next_n: int = 1,
                   batch_rows: Optional[int] = None) -> None:
        """Store each request's last MTP row of this step's top-k as its prior for the next step.

        Parameters
        ----------
        layer : int
            Decoder-layer id.
        indices : torch.Tensor
            int32 ``(batch_rows * next_n, K)``: the op's output for the step.
        next_n : int
            Rows per request; row ``b * next_n + next_n - 1`` (the last draft position) is kept.
        batch_rows : int, optional
            The step's (padded) batch; default: the value :meth:`prepare` returned.
        """
        rows = self._batch_rows if batch_rows is None else batch_rows
        if not isinstance(next_n, int) or isinstance(next_n, bool) or next_n < 1:
            raise _arg_error(ValueError, "next_n", "an int >= 1", repr(next_n))
        self._check_rows("indices", indices, rows * next_n)
        last = indices[next_n - 1::next_n, :self.k]  # strided view: no copy, any row stride
        self.prior[self.slab(layer)].index_copy_(0, self.write_slots[:rows], last)
