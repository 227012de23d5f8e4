"""Strict schema of the per-model YAML configs (``configs/*.yaml``).

A file has four sections::

    schema_version: 1
    model:                    # facts about the checkpoint (checked against KNOWN_MODELS for the models we know)
    sparse_attention_config:  # TensorRT-LLM's key names: algorithm, index_topk, compress_ratios, ...
    speculative_config:       # optional MTP: next_n = 1 + num_nextn_predict_layers
    gvr_topk:                 # our section: the hint policy and the prior-arena sizing

Every model forbids unknown keys and rejects values of the wrong type (no coercion: ``"2048"`` is not an int).
Cross-field rules raise :class:`~pydantic_core.PydanticCustomError` of type ``cross_field`` whose context names the
offending field relative to the model that raised it; :mod:`gvr_topk.policy.loader` turns that into a dotted path
from the file's root.
"""

from dataclasses import dataclass
from typing import Dict
from typing import List
from typing import Literal
from typing import Optional
from typing import Tuple

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import model_validator
from pydantic_core import PydanticCustomError

from .. import contract

SCHEMA_VERSION = 1

#: Per-request situations a decode step can be in; the hint policy is set per scenario.
SCENARIOS: Tuple[str, ...] = ("first_decode_step", "disagg_generation", "kv_reuse", "steady_decode")

#: What a scenario gets: the arena's prior for the request, or no hint.
HintChoice = Literal["hinted", "hint_free"]
#: ``dropped_arena`` is hint-free with the guarantee that no arena exists (a hinted scenario is then an error).
Mode = Literal["hinted", "hint_free", "dropped_arena"]

#: Scenario defaults per mode. Under ``hinted`` only the scenarios that normally have a prior on this engine use it:
#: the first decode step reads the prefill seed, steady decode the previous step's write-back. A disaggregated
#: generation request or a full-prefix KV-reuse hit had no prefill here, so by default it gets no hint.
MODE_DEFAULTS: Dict[str, Dict[str, str]] = {
    "hinted": {"first_decode_step": "hinted", "disagg_generation": "hint_free", "kv_reuse": "hint_free",
               "steady_decode": "hinted"},
    "hint_free": {s: "hint_free" for s in SCENARIOS},
    "dropped_arena": {s: "hint_free" for s in SCENARIOS},
}

#: Compress ratios of layers without an indexer in DeepSeek-V4: 0 = sliding-window only, 128 = HCA (dense over
#: heavily compressed KV). Every other ratio marks a CSA layer, which runs the indexer and the top-k.
INDEXER_FREE_RATIOS = (0, 128)


@dataclass(frozen=True)
class ModelFacts:
    """Published facts of a checkpoint, used to reject a config that contradicts its model."""

    algorithm: str
    num_hidden_layers: int
    num_mtp_layers: int
    num_indexer_layers: int
    index_topk: int
    indexer_compress_ratio: int


#: Models whose facts are checked (integration notes §1.8: HF configs and TensorRT-LLM defaults). Other model names
#: are accepted and only checked for internal consistency.
KNOWN_MODELS: Dict[str, ModelFacts] = {
    "DeepSeek-V3.2": ModelFacts("dsa", 61, 1, 61, 2048, 1),
    "DeepSeek-V4-Flash": ModelFacts("deepseek_v4", 43, 1, 21, 512, 4),
    "DeepSeek-V4-Pro": ModelFacts("deepseek_v4", 61, 1, 30, 1024, 4),
}


def _cross(field: str, msg: str) -> PydanticCustomError:
    # ``field`` is relative to the model raising it; the loader appends it to the error's location.
    return PydanticCustomError("cross_field", "{msg}", {"field": field, "msg": msg})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ModelInfo(_Strict):
    """Checkpoint facts the runtime needs (layer counts); checked against :data:`KNOWN_MODELS` when known."""

    name: str = Field(min_length=1, description="Model name, e.g. 'DeepSeek-V3.2' (facts are checked for the "
                                                "names in KNOWN_MODELS).")
    num_hidden_layers: int = Field(ge=1, description="Decoder layers, MTP layers excluded (HF num_hidden_layers).")
    num_mtp_layers: int = Field(0, ge=0, description="MTP modules of the checkpoint (HF num_nextn_predict_layers).")
    num_indexer_layers: int = Field(ge=1, description="Decoder layers that run the indexer and the top-k; the "
                                                      "arena has one slab per such layer. Must agree with "
                                                      "compress_ratios.")


class SparseAttentionConfig(_Strict):
    """The subset of TensorRT-LLM's ``sparse_attention_config`` the top-k depends on (same key names)."""

    algorithm: Literal["dsa", "deepseek_v4"] = Field(description="'dsa' (DeepSeek-V3.2) or 'deepseek_v4'.")
    index_topk: int = Field(ge=1, le=contract.MAX_K, description="K: tokens the indexer keeps per query row.")
    compress_ratios: Optional[List[int]] = Field(
        None, description="deepseek_v4 only: one KV compress ratio per layer, decoder layers then MTP layers. "
                          "Layers with ratio 0 (sliding window) or 128 (HCA) have no indexer; the others are CSA "
                          "layers whose indexer row has kv_len // ratio columns. Absent for 'dsa' (ratio 1).")
    enable_heuristic_topk: bool = Field(description="Turns the GVR top-k on; must be true in a gvr-topk config.")
    use_self_sampling_topk: Optional[bool] = Field(
        None, description="TensorRT-LLM's hint-free switch. Derived from gvr_topk.mode and scenarios (true when "
                          "no scenario is hinted); if given it must agree.")

    @model_validator(mode="after")
    def _ratios(self):
        if self.algorithm == "dsa" and self.compress_ratios is not None:
            raise _cross("compress_ratios", "is a deepseek_v4 field; 'dsa' layers all have compress ratio 1, "
                                            "remove the key")
        if self.algorithm == "deepseek_v4" and self.compress_ratios is None:
            raise _cross("compress_ratios", "is required for algorithm 'deepseek_v4' (one ratio per layer)")
        for i, r in enumerate(self.compress_ratios or ()):
            if r < 0 or (r and r & (r - 1)):
                raise _cross(f"compress_ratios.{i}", f"expected 0 or a power of two, got {r}")
        if not self.enable_heuristic_topk:
            raise _cross("enable_heuristic_topk", "expected true (this file configures the GVR top-k; false "
                                                  "would turn it off), got false")
        return self


class SpeculativeConfig(_Strict):
    """MTP speculative decoding (TensorRT-LLM ``speculative_config`` names): sets the op's ``next_n``."""

    decoding_type: Literal["MTP"] = Field(description="Only MTP changes the top-k's row layout.")
    num_nextn_predict_layers: int = Field(ge=1, le=15, description="Draft tokens per step; next_n = 1 + this.")


class ScenarioOverrides(_Strict):
    """Per-scenario choice; an absent key takes the mode's default (:data:`MODE_DEFAULTS`)."""

    first_decode_step: Optional[HintChoice] = Field(
        None, description="First decode step after a prefill on this engine (prior = prefill seed).")
    disagg_generation: Optional[HintChoice] = Field(
        None, description="First step of a request that arrived with its KV cache from a prefill server; the "
                          "arena has a prior only if the deployment seeds one.")
    kv_reuse: Optional[HintChoice] = Field(
        None, description="First step after a full-prefix KV-cache hit (no prefill ran, so no seed unless the "
                          "deployment provides one).")
    steady_decode: Optional[HintChoice] = Field(
        None, description="Every later step (prior = the previous step's written-back top-k).")


class ArenaConfig(_Strict):
    """Sizing of the prior arena: int32 ``[num_indexer_layers, max_sequences, index_topk]``."""

    max_sequences: int = Field(ge=1, le=1 << 16, description="Requests the arena can track at once (the "
                                                              "engine's max batch of live sequences).")


class GvrTopkSection(_Strict):
    """Our section: hint policy and arena sizing."""

    mode: Mode = Field(description="'hinted' | 'hint_free' | 'dropped_arena' (hint-free, no arena at all).")
    scenarios: ScenarioOverrides = Field(default_factory=ScenarioOverrides,
                                         description="Overrides of the mode's per-scenario defaults.")
    arena: Optional[ArenaConfig] = Field(None, description="Required when a scenario is hinted; forbidden under "
                                                           "'dropped_arena'.")

    def policy(self) -> Dict[str, str]:
        """Effective choice per scenario: the mode's default with this file's overrides applied."""
        out = dict(MODE_DEFAULTS[self.mode])
        for s in SCENARIOS:
            v = getattr(self.scenarios, s)
            if v is not None:
                out[s] = v
        return out

    @model_validator(mode="after")
    def _consistent(self):
        pol = self.policy()
        hinted = [s for s in SCENARIOS if pol[s] == "hinted"]
        if self.mode == "dropped_arena":
            for s in SCENARIOS:
                if getattr(self.scenarios, s) == "hinted":
                    raise _cross(f"scenarios.{s}", "'hinted' contradicts mode 'dropped_arena' (no arena exists "
                                                   "to hold a prior); use mode 'hint_free' or 'hinted'")
            if self.arena is not None:
                raise _cross("arena", "contradicts mode 'dropped_arena' (no arena is allocated); remove it")
        if self.mode == "hinted" and not hinted:
            raise _cross("scenarios", "mode 'hinted' but every scenario is overridden to 'hint_free'; use mode "
                                      "'hint_free' or 'dropped_arena'")
        if hinted and self.arena is None:
            raise _cross("arena", f"is required: scenarios {hinted} are hinted, so an arena must be sized "
                                  "(arena: {max_sequences: N})")
        return self


class GvrConfig(_Strict):
    """One model's deployment config (a whole YAML file)."""

    schema_version: Literal[1] = Field(description="Version of this schema; bump on incompatible change.")
    model: ModelInfo
    sparse_attention_config: SparseAttentionConfig
    speculative_config: Optional[SpeculativeConfig] = Field(None, description="Absent: no MTP, next_n = 1.")
    gvr_topk: GvrTopkSection

    # ----- derived values (what the runtime uses) -----

    @property
    def k(self) -> int:
        """K given to the op: ``sparse_attention_config.index_topk``."""
        return self.sparse_attention_config.index_topk

    @property
    def next_n(self) -> int:
        """Rows per request in decode: ``1 + num_nextn_predict_layers`` with MTP, else 1."""
        sc = self.speculative_config
        return 1 + sc.num_nextn_predict_layers if sc is not None else 1

    def layer_compress_ratios(self) -> List[int]:
        """Compress ratio of each decoder layer (``num_hidden_layers`` entries; 1 everywhere for 'dsa')."""
        sa = self.sparse_attention_config
        if sa.compress_ratios is None:
            return [1] * self.model.num_hidden_layers
        return list(sa.compress_ratios[:self.model.num_hidden_layers])

    @property
    def indexer_layers(self) -> List[int]:
        """Decoder-layer ids that run the top-k, ascending; position in this list = the layer's arena slab."""
        if self.sparse_attention_config.compress_ratios is None:
            return list(range(self.model.num_hidden_layers))
        return [i for i, r in enumerate(self.layer_compress_ratios()) if r not in INDEXER_FREE_RATIOS]

    def compress_ratio(self, layer: int) -> int:
        """Compress ratio the op gets on decoder layer ``layer`` (an indexer layer)."""
        return self.layer_compress_ratios()[layer]

    def scenario_policy(self) -> Dict[str, str]:
        """Effective ``'hinted'`` / ``'hint_free'`` per scenario."""
        return self.gvr_topk.policy()

    @property
    def arena_needed(self) -> bool:
        """True when some scenario is hinted: only then is a prior arena allocated."""
        return "hinted" in self.scenario_policy().values()

    def arena_bytes(self, max_sequences: Optional[int] = None) -> int:
        """Bytes of the arena's prior rows (int32 ``[indexer layers, max_sequences, K]``); 0 without an arena."""
        if not self.arena_needed:
            return 0
        s = self.gvr_topk.arena.max_sequences if max_sequences is None else max_sequences
        return len(self.indexer_layers) * s * self.k * 4

    # ----- cross-section rules -----

    @model_validator(mode="after")
    def _against_model(self):
        m, sa = self.model, self.sparse_attention_config
        if sa.compress_ratios is not None:
            want = m.num_hidden_layers + m.num_mtp_layers
            if len(sa.compress_ratios) != want:
                raise _cross("sparse_attention_config.compress_ratios",
                             f"expected {want} entries (num_hidden_layers {m.num_hidden_layers} + num_mtp_layers "
                             f"{m.num_mtp_layers}), got {len(sa.compress_ratios)}")
        n_idx = len(self.indexer_layers)
        if n_idx != m.num_indexer_layers:
            why = (f"compress_ratios give {n_idx} (layers whose ratio is not one of {INDEXER_FREE_RATIOS})"
                   if sa.compress_ratios is not None else
                   f"algorithm 'dsa' runs the indexer on every decoder layer ({n_idx})")
            raise _cross("model.num_indexer_layers", f"says {m.num_indexer_layers} indexer layers but {why}")
        facts = KNOWN_MODELS.get(m.name)
        if facts is not None:
            ratios = sorted({self.compress_ratio(i) for i in self.indexer_layers})
            checks = [
                ("sparse_attention_config.algorithm", "algorithm", sa.algorithm, facts.algorithm),
                ("sparse_attention_config.index_topk", "index_topk (K)", sa.index_topk, facts.index_topk),
                ("model.num_hidden_layers", "num_hidden_layers", m.num_hidden_layers, facts.num_hidden_layers),
                ("model.num_mtp_layers", "num_mtp_layers", m.num_mtp_layers, facts.num_mtp_layers),
                ("model.num_indexer_layers", "num_indexer_layers", m.num_indexer_layers, facts.num_indexer_layers),
                ("sparse_attention_config.compress_ratios", "indexer-layer compress ratios", ratios,
                 [facts.indexer_compress_ratio]),
            ]
            for path, what, got, want in checks:
                if got != want:
                    raise _cross(path, f"{m.name} has {what} {want!r}, the file gives {got!r}")
        any_hinted = self.arena_needed
        if sa.use_self_sampling_topk is not None and sa.use_self_sampling_topk == any_hinted:
            raise _cross("sparse_attention_config.use_self_sampling_topk",
                         f"is {sa.use_self_sampling_topk} but gvr_topk.mode '{self.gvr_topk.mode}' with its "
                         f"scenarios is {'hinted' if any_hinted else 'hint-free'}; expected "
                         f"{not any_hinted} (or leave the key out: it is derived)")
        return self
