"""Per-step hint resolution: which requests get a prior, and the ``pre_idx`` tensor the op receives.

The resolver joins a validated :class:`~gvr_topk.policy.schema.GvrConfig` with the runtime: it owns the
:class:`~gvr_topk.arena.PriorArena` (allocated only when some scenario is hinted) and maps each request's scenario to
"use its prior" or "no hint". A batch may mix both: the rows without a usable prior read the arena's all -1 row,
which the kernel treats exactly like hint-free mode, so one hinted launch serves the whole batch.

Typical decode loop::

    res = HintResolver(load_config("deepseek-v4-pro"), device="cuda")
    # after prefill, per indexer layer: res.seed(layer, ctx_ids, last_token_rows(prefill_idx, seq_lens))
    step = res.prepare(ids, scenarios)               # host, once per step, outside CUDA graphs
    for layer in cfg.indexer_layers:                 # device, capturable
        idx, _ = gvr_topk.topk(logits, **res.op_kwargs(layer), kv_lens=kv_lens,
                               pre_idx=res.pre_idx(layer, step), max_seq_len=max_seq_len)
        res.write_back(layer, idx, step)
    res.release(finished_ids)
"""

from dataclasses import dataclass
from typing import Dict
from typing import Hashable
from typing import Optional
from typing import Sequence
from typing import Tuple

import torch

from ..arena import PriorArena
from .schema import SCENARIOS
from .schema import GvrConfig


@dataclass(frozen=True)
class StepHints:
    """What :meth:`HintResolver.prepare` decided for one step (host values only).

    Attributes
    ----------
    request_ids : tuple
        The step's requests in batch order.
    hinted : tuple of bool
        Per request: does it read its prior this step.
    batch_rows : int
        Batch size of the step (padded for CUDA graphs); ``pre_idx`` has this many rows.
    use_arena : bool
        ``pre_idx`` is gathered from the arena (else None: nothing in the batch is hinted, or there is no arena).
    """

    request_ids: Tuple[Hashable, ...]
    hinted: Tuple[bool, ...]
    batch_rows: int
    use_arena: bool


class HintResolver:
    """Applies a config's hint policy to decode steps and owns the prior arena.

    Parameters
    ----------
    config : GvrConfig
        Validated model config (:func:`gvr_topk.policy.load_config`).
    device : torch.device or str
        Device of the arena and of the op's inputs.
    max_sequences : int, optional
        Override of ``gvr_topk.arena.max_sequences`` (e.g. a small arena for tests and examples).

    Attributes
    ----------
    arena : PriorArena or None
        None when no scenario is hinted (``hint_free`` without hinted overrides, ``dropped_arena``).
    policy : dict
        Effective ``'hinted'`` / ``'hint_free'`` per scenario.
    """

    def __init__(self, config: GvrConfig, device, *, max_sequences: Optional[int] = None):
        if not isinstance(config, GvrConfig):
            raise TypeError(f"gvr_topk.policy: argument 'config': expected a GvrConfig (load_config(...)), got "
                            f"{type(config).__name__}")
        self.config = config
        self.device = torch.device(device)
        self.policy: Dict[str, str] = config.scenario_policy()
        self.arena: Optional[PriorArena] = None
        if config.arena_needed:
            s = config.gvr_topk.arena.max_sequences if max_sequences is None else max_sequences
            self.arena = PriorArena(len(config.indexer_layers), s, config.k, self.device,
                                    layer_ids=config.indexer_layers)

    @property
    def arena_bytes(self) -> int:
        """Device bytes of the arena actually allocated (0 without one)."""
        return 0 if self.arena is None else self.arena.nbytes

    def is_hinted(self, scenario: str) -> bool:
        """True when the policy gives requests in ``scenario`` their prior."""
        if scenario not in self.policy:
            raise ValueError(f"gvr_topk.policy: scenario: expected one of {list(SCENARIOS)}, got {scenario!r}")
        return self.policy[scenario] == "hinted"

    def op_kwargs(self, layer: int) -> Dict[str, int]:
        """The config-derived op arguments of one indexer layer: ``k``, ``next_n``, ``compress_ratio``."""
        if layer not in self.config.indexer_layers:
            raise KeyError(f"gvr_topk.policy: argument 'layer': expected an indexer layer of "
                           f"{self.config.model.name}, got {layer!r}")
        return {"k": self.config.k, "next_n": self.config.next_n,
                "compress_ratio": self.config.compress_ratio(layer)}

    def prepare(self, request_ids: Sequence[Hashable], scenarios: Sequence[str], *,
                padded_batch: Optional[int] = None, static: bool = False) -> StepHints:
        """Decide the step's hints and update the arena's slot vectors (host side, outside CUDA graphs).

        Parameters
        ----------
        request_ids : Sequence[Hashable]
            The step's requests in batch order.
        scenarios : Sequence[str]
            Scenario of each request this step, one of :data:`~gvr_topk.policy.schema.SCENARIOS`.
        padded_batch : int, optional
            Batch size the step runs at (>= len(request_ids)); padding rows get no hint and write nowhere.
        static : bool
            For CUDA graphs: gather ``pre_idx`` from the arena even when no request is hinted, so every step has
            the captured shape of work. Without an arena ``pre_idx`` is always None.

        Returns
        -------
        StepHints
        """
        ids = tuple(request_ids)
        scen = list(scenarios)
        if len(scen) != len(ids):
            raise ValueError(f"gvr_topk.policy: argument 'scenarios': expected {len(ids)} entries (one per "
                             f"request), got {len(scen)}")
        bad = [s for s in scen if s not in self.policy]
        if bad:
            raise ValueError(f"gvr_topk.policy: argument 'scenarios': expected entries from {list(SCENARIOS)}, "
                             f"got {bad[0]!r}")
        hinted = tuple(self.policy[s] == "hinted" for s in scen)
        rows = len(ids) if padded_batch is None else padded_batch
        if self.arena is not None:
            rows = self.arena.prepare(ids, hinted, padded_batch=padded_batch)
        elif not isinstance(rows, int) or rows < len(ids):
            raise ValueError(f"gvr_topk.policy: argument 'padded_batch': expected an int >= {len(ids)}, "
                             f"got {padded_batch!r}")
        use = self.arena is not None and (static or any(hinted))
        return StepHints(ids, hinted, rows, use)

    def pre_idx(self, layer: int, step: StepHints) -> Optional[torch.Tensor]:
        """The op's ``pre_idx`` for one layer: int32 ``(step.batch_rows, K)`` or None (device side, capturable)."""
        if not step.use_arena:
            return None
        return self.arena.read(layer, step.batch_rows)

    def write_back(self, layer: int, indices: torch.Tensor, step: StepHints) -> None:
        """Keep each request's last MTP row of ``indices`` (int32 ``(batch_rows * next_n, K)``) as its prior.

        A no-op without an arena; otherwise done for every request, hinted this step or not, so a request that
        started without a prior (disaggregated generation, KV reuse) has one from its second step on.
        """
        if self.arena is not None:
            self.arena.write_back(layer, indices, self.config.next_n, step.batch_rows)

    def seed(self, layer: int, request_ids: Sequence[Hashable], topk_rows: torch.Tensor) -> None:
        """After prefill: store each request's last-token top-k as its prior on one layer.

        A no-op when there is no arena or when ``first_decode_step`` is hint-free (the seed would never be read).

        Parameters
        ----------
        layer : int
            Decoder-layer id (an indexer layer).
        request_ids : Sequence[Hashable]
            Requests that finished prefill.
        topk_rows : torch.Tensor
            int32 ``(len(request_ids), >= K)``, see :func:`gvr_topk.arena.last_token_rows`.
        """
        if self.arena is not None and self.is_hinted("first_decode_step"):
            self.arena.seed(layer, request_ids, topk_rows)

    def release(self, request_ids: Sequence[Hashable]) -> None:
        """Forget finished or evicted requests."""
        if self.arena is not None:
            self.arena.release(request_ids)
