"""Per-model YAML configs: every shipped file validates, malformed files fail naming the file and field path, the
``check-config`` CLI, and the hint resolver (scenario policy, pre_idx, mixed batches through the op)."""

from pathlib import Path

import pytest
import torch
import yaml

import gvr_topk
from gvr_topk import cli
from gvr_topk.policy import SCENARIOS
from gvr_topk.policy import ConfigError
from gvr_topk.policy import HintResolver
from gvr_topk.policy import apply_overrides
from gvr_topk.policy import default_config_path
from gvr_topk.policy import load_config
from gvr_topk.policy import parse_override
from gvr_topk.policy import shipped_configs
from gvr_topk.policy import validate_config
from gvr_topk.policy.schema import KNOWN_MODELS
from gvr_topk.testing import check_exact

pytestmark = pytest.mark.gvr_topk

REPO = Path(__file__).resolve().parents[5]
SHIPPED = sorted((REPO / "configs").glob("*.yaml"))


# ---------------------------------------------------------------------------------------------- shipped files


def test_every_repo_config_is_shipped():
    assert [p.name for p in SHIPPED] == ["deepseek-v3.2.yaml", "deepseek-v4-flash.yaml", "deepseek-v4-pro.yaml"]
    assert [p.resolve() for p in SHIPPED] == shipped_configs()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_config_loads(path):
    cfg = load_config(path)
    assert yaml.safe_load(path.read_text())["schema_version"] == 1
    facts = KNOWN_MODELS[cfg.model.name]
    assert cfg.k == facts.index_topk
    assert len(cfg.indexer_layers) == facts.num_indexer_layers
    assert {cfg.compress_ratio(layer) for layer in cfg.indexer_layers} == {facts.indexer_compress_ratio}
    assert cfg.next_n == 1 + cfg.speculative_config.num_nextn_predict_layers
    assert cfg.gvr_topk.mode == "hinted" and cfg.arena_needed
    assert cfg.arena_bytes() == len(cfg.indexer_layers) * cfg.gvr_topk.arena.max_sequences * cfg.k * 4
    # The same file by its shipped name.
    assert load_config(path.stem) == cfg


@pytest.mark.parametrize("name, k, ratio, layers, first", [
    ("deepseek-v3.2", 2048, 1, 61, 0), ("deepseek-v4-flash", 512, 4, 21, 2), ("deepseek-v4-pro", 1024, 4, 30, 2)])
def test_model_facts(name, k, ratio, layers, first):
    cfg = load_config(name)
    assert (cfg.k, cfg.compress_ratio(first), len(cfg.indexer_layers), cfg.indexer_layers[0]) == (k, ratio, layers,
                                                                                                   first)


def test_default_config_is_v32():
    p = default_config_path()
    assert p.is_file() and p.name == "deepseek-v3.2.yaml"
    assert load_config().model.name == "DeepSeek-V3.2"


def test_unknown_name_lists_shipped():
    with pytest.raises(FileNotFoundError, match="deepseek-v4-pro"):
        load_config("deepseek-v9")


# ---------------------------------------------------------------------------------------------- malformed files


def _base() -> dict:
    return yaml.safe_load(default_config_path().read_text())


def _write(tmp_path, data, name="bad.yaml") -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return p


def _fails(tmp_path, overrides, field, *fragments):
    p = _write(tmp_path, apply_overrides(_base(), overrides))
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    msg = str(ei.value)
    assert f"{p}: {field}: " in msg, msg
    for f in fragments:
        assert f in msg, msg
    assert any(path == field for path, _ in ei.value.problems)
    return msg


@pytest.mark.parametrize("overrides, field, fragments", [
    ({"sparse_attention_config.index_topk_x": 4}, "sparse_attention_config.index_topk_x", ["unknown key"]),
    ({"gvr_topk.arena.max_seqs": 4}, "gvr_topk.arena.max_seqs", ["unknown key"]),
    ({"gvr_topk.scenarios.prefill": "hinted"}, "gvr_topk.scenarios.prefill", ["unknown key"]),
    ({"extra_section": {}}, "extra_section", ["unknown key"]),
    ({"sparse_attention_config.index_topk": "2048"}, "sparse_attention_config.index_topk", ["integer", "'2048'"]),
    ({"sparse_attention_config.enable_heuristic_topk": "yes"}, "sparse_attention_config.enable_heuristic_topk",
     ["boolean"]),
    ({"gvr_topk.arena.max_sequences": 1.5}, "gvr_topk.arena.max_sequences", ["integer"]),
    ({"gvr_topk.mode": "sometimes"}, "gvr_topk.mode", ["'hinted'", "'sometimes'"]),
    ({"gvr_topk.scenarios.kv_reuse": "maybe"}, "gvr_topk.scenarios.kv_reuse", ["'hint_free'"]),
    ({"schema_version": 2}, "schema_version", ["1"]),
    ({"model.num_hidden_layers": None}, "model.num_hidden_layers", ["missing"]),
    ({"sparse_attention_config.index_topk": 4096}, "sparse_attention_config.index_topk", ["2048"]),
    # K that does not match the model.
    ({"sparse_attention_config.index_topk": 1024}, "sparse_attention_config.index_topk",
     ["DeepSeek-V3.2", "2048", "1024"]),
    # Contradictions.
    ({"gvr_topk.mode": "dropped_arena", "gvr_topk.arena": None, "gvr_topk.scenarios.steady_decode": "hinted"},
     "gvr_topk.scenarios.steady_decode", ["dropped_arena"]),
    ({"gvr_topk.mode": "dropped_arena"}, "gvr_topk.arena", ["dropped_arena"]),
    ({"gvr_topk.arena": None}, "gvr_topk.arena", ["required", "steady_decode"]),
    ({"gvr_topk.scenarios": {s: "hint_free" for s in SCENARIOS}}, "gvr_topk.scenarios", ["every scenario"]),
    ({"sparse_attention_config.use_self_sampling_topk": True}, "sparse_attention_config.use_self_sampling_topk",
     ["hinted"]),
    ({"sparse_attention_config.enable_heuristic_topk": False}, "sparse_attention_config.enable_heuristic_topk",
     ["true"]),
    ({"sparse_attention_config.compress_ratios": [1] * 62}, "sparse_attention_config.compress_ratios",
     ["deepseek_v4"]),
    ({"model.num_indexer_layers": 60}, "model.num_indexer_layers", ["61"]),
    ({"model.num_hidden_layers": 60, "model.num_indexer_layers": 60}, "model.num_hidden_layers", ["61", "60"]),
])
def test_malformed_names_file_and_field(tmp_path, overrides, field, fragments):
    _fails(tmp_path, overrides, field, *fragments)


def test_v4_compress_ratio_errors(tmp_path):
    data = yaml.safe_load((REPO / "configs" / "deepseek-v4-pro.yaml").read_text())
    ratios = data["sparse_attention_config"]["compress_ratios"]
    cases = [
        (ratios[:-1], "sparse_attention_config.compress_ratios", "62 entries"),
        (ratios[:5] + [3] + ratios[6:], "sparse_attention_config.compress_ratios.5", "power of two"),
        ([4 if r == 128 else r for r in ratios], "model.num_indexer_layers", "compress_ratios give"),
        ([2 if r == 4 else r for r in ratios], "sparse_attention_config.compress_ratios", "indexer-layer"),
    ]
    for bad, field, frag in cases:
        d = apply_overrides(data, {"sparse_attention_config.compress_ratios": bad})
        p = _write(tmp_path, d, "v4.yaml")
        with pytest.raises(ConfigError) as ei:
            load_config(p)
        assert f"{p}: {field}: " in str(ei.value) and frag in str(ei.value), str(ei.value)
    d = apply_overrides(data, {"sparse_attention_config.compress_ratios": None})
    with pytest.raises(ConfigError, match="compress_ratios: is required"):
        validate_config(d, "v4")


def test_yaml_level_errors(tmp_path):
    dup = _write(tmp_path, "schema_version: 1\nschema_version: 1\n", "dup.yaml")
    with pytest.raises(ConfigError, match=r"dup\.yaml: .*duplicate key 'schema_version'"):
        load_config(dup)
    with pytest.raises(ConfigError, match=r"list\.yaml: expected a YAML mapping"):
        load_config(_write(tmp_path, "- 1\n- 2\n", "list.yaml"))
    with pytest.raises(ConfigError, match=r"broken\.yaml: not valid YAML"):
        load_config(_write(tmp_path, "model: {name: [\n", "broken.yaml"))


def test_several_problems_reported_together(tmp_path):
    p = _write(tmp_path, apply_overrides(_base(), {"model.colour": "red", "sparse_attention_config.index_topk": "x"}))
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    assert {f for f, _ in ei.value.problems} == {"model.colour", "sparse_attention_config.index_topk"}


# ---------------------------------------------------------------------------------------------- switching modes


def test_mode_switch_is_a_config_change():
    hinted = load_config()
    free = load_config(overrides={"gvr_topk.mode": "hint_free", "gvr_topk.arena": None})
    dropped = load_config(overrides={"gvr_topk.mode": "dropped_arena", "gvr_topk.arena": None})
    assert hinted.arena_needed and not free.arena_needed and not dropped.arena_needed
    assert free.arena_bytes() == dropped.arena_bytes() == 0
    assert set(free.scenario_policy().values()) == {"hint_free"}
    # hint_free may still hint one scenario; that brings the arena back.
    partial = load_config(overrides={"gvr_topk.mode": "hint_free", "gvr_topk.scenarios.steady_decode": "hinted"})
    assert partial.arena_needed and partial.scenario_policy()["first_decode_step"] == "hint_free"
    # Consistent use_self_sampling_topk is accepted.
    load_config(overrides={"sparse_attention_config.use_self_sampling_topk": False})
    load_config(overrides={"gvr_topk.mode": "dropped_arena", "gvr_topk.arena": None,
                           "sparse_attention_config.use_self_sampling_topk": True})


def test_parse_override():
    assert parse_override("gvr_topk.mode=hint_free") == ("gvr_topk.mode", "hint_free")
    assert parse_override("gvr_topk.arena=null") == ("gvr_topk.arena", None)
    assert parse_override("gvr_topk.arena.max_sequences=8") == ("gvr_topk.arena.max_sequences", 8)
    with pytest.raises(ValueError, match="dotted.key=value"):
        parse_override("gvr_topk.mode")


# ---------------------------------------------------------------------------------------------- CLI


def test_check_config_cli(tmp_path, capsys):
    assert cli.main(["check-config"] + [str(p) for p in SHIPPED]) == 0
    out = capsys.readouterr().out
    assert out.count("OK ") == 3 and "K=2048" in out and "K=512" in out and "K=1024" in out
    bad = _write(tmp_path, apply_overrides(_base(), {"gvr_topk.mode": "dropped_arena",
                                                     "gvr_topk.scenarios.kv_reuse": "hinted"}))
    assert cli.main(["check-config", str(SHIPPED[0]), str(bad)]) == 1
    captured = capsys.readouterr()
    assert f"{bad}: gvr_topk.scenarios.kv_reuse:" in captured.err and "OK " in captured.out
    assert cli.main(["check-config", str(tmp_path / "missing.yaml")]) == 1
    assert "missing.yaml" in capsys.readouterr().err
    assert cli.main(["check-config", "--quiet"]) == 0  # default: every shipped file
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------------------------------------- resolver


def test_resolver_modes_and_arena_allocation():
    assert HintResolver(load_config(), "cpu", max_sequences=4).arena is not None
    for mode in ("hint_free", "dropped_arena"):
        r = HintResolver(load_config(overrides={"gvr_topk.mode": mode, "gvr_topk.arena": None}), "cpu")
        assert r.arena is None and r.arena_bytes == 0
        step = r.prepare(["a", "b"], ["steady_decode", "first_decode_step"], padded_batch=3, static=True)
        assert step.batch_rows == 3 and not step.use_arena and r.pre_idx(0, step) is None
        r.write_back(0, torch.zeros(6, 2048, dtype=torch.int32), step)  # no-op
        r.seed(0, ["a"], torch.zeros(1, 2048, dtype=torch.int32))       # no-op
        r.release(["a"])


def test_resolver_op_kwargs_and_errors():
    r = HintResolver(load_config("deepseek-v4-flash"), "cpu", max_sequences=2)
    assert r.op_kwargs(2) == {"k": 512, "next_n": 4, "compress_ratio": 4}
    with pytest.raises(KeyError, match="'layer'.*got 3"):
        r.op_kwargs(3)  # an HCA layer: no indexer
    with pytest.raises(KeyError, match="'layer'"):
        r.pre_idx(3, r.prepare(["a"], ["steady_decode"]))
    with pytest.raises(ValueError, match="'scenarios'.*got 'prefill'"):
        r.prepare(["a"], ["prefill"])
    with pytest.raises(ValueError, match="'scenarios': expected 2 entries"):
        r.prepare(["a", "b"], ["steady_decode"])
    with pytest.raises(TypeError, match="'config'"):
        HintResolver({"gvr_topk": {}}, "cpu")


def test_resolver_mixed_batch_rows():
    """Requests without a usable prior get -1 rows inside a hinted pre_idx; None when nobody is hinted."""
    cfg = load_config("deepseek-v4-flash")
    r = HintResolver(cfg, "cpu", max_sequences=4)
    k = cfg.k
    seed = torch.arange(2 * k, dtype=torch.int32).view(2, k) % 700
    r.seed(2, ["p0", "p1"], seed)
    only_new = r.prepare(["d0"], ["disagg_generation"])
    assert not only_new.use_arena and r.pre_idx(2, only_new) is None
    assert r.prepare(["d0"], ["disagg_generation"], static=True).use_arena  # graphs always gather
    step = r.prepare(["p1", "d0", "p0", "k0"], ["first_decode_step", "disagg_generation", "first_decode_step",
                                                 "kv_reuse"])
    assert step.hinted == (True, False, True, False) and step.use_arena
    pre = r.pre_idx(2, step)
    assert pre.shape == (4, k) and pre.dtype == torch.int32
    assert torch.equal(pre[0], seed[1]) and torch.equal(pre[2], seed[0])
    assert (pre[1] == -1).all() and (pre[3] == -1).all()
    # Layers not seeded have no prior yet: -1 rows even for hinted requests.
    assert (r.pre_idx(4, step) == -1).all()


def test_mixed_batch_is_exact_through_the_op():
    """Hinted, -1 (no prior) and garbage-hint rows in one launch: the selection equals the reference."""
    cfg = load_config("deepseek-v4-flash")
    r = HintResolver(cfg, "cpu", max_sequences=4)
    k, nn, cr = cfg.k, cfg.next_n, cfg.compress_ratio(2)
    g = torch.Generator().manual_seed(1)
    npad = 900
    logits = torch.randn(4 * nn, npad, generator=g)
    kv_lens = torch.tensor([npad * cr, 700 * cr, 300 * cr, npad * cr - 5], dtype=torch.int32)
    ref_idx, _ = gvr_topk.topk(logits, k, kv_lens=kv_lens, next_n=nn, compress_ratio=cr, max_seq_len=npad * cr)
    # Seed two requests: one with last step's exact answer, one with an out-of-range garbage row.
    garbage = torch.randint(-5, 5000, (1, k), generator=g, dtype=torch.int32)
    r.seed(2, ["a", "c"], torch.cat([ref_idx[nn - 1:nn], garbage]))
    step = r.prepare(["a", "b", "c", "d"], ["steady_decode", "disagg_generation", "steady_decode", "kv_reuse"])
    pre = r.pre_idx(2, step)
    assert (pre[1] == -1).all() and (pre[3] == -1).all()
    idx, _ = gvr_topk.topk(logits, **r.op_kwargs(2), kv_lens=kv_lens, pre_idx=pre, max_seq_len=npad * cr)
    assert check_exact(logits, idx, kv_lens=kv_lens, next_n=nn, compress_ratio=cr) == []
    r.write_back(2, idx, step)
    step2 = r.prepare(["d", "b"], ["steady_decode", "steady_decode"])
    pre2 = r.pre_idx(2, step2)
    assert torch.equal(pre2[0], idx[4 * nn - 1]) and torch.equal(pre2[1], idx[2 * nn - 1])
