"""CPU tests of the benchmark (gvr_topk.bench): cases, data, the fast exactness check, the read floor, the report,
and a tiny end-to-end run through the Triton interpreter (tests/conftest.py sets TRITON_INTERPRET=1 without a GPU).
"""

import collections
import dataclasses
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gvr_topk
from gvr_topk import dispatch
from gvr_topk import reference
from gvr_topk.bench import cases as bc
from gvr_topk.bench import floor as bfloor
from gvr_topk.bench import report
from gvr_topk.bench import timing
from gvr_topk.bench.cases import Case
from gvr_topk.bench.data import adversarial_rows
from gvr_topk.bench.data import make_inputs
from gvr_topk.bench.exact import check_exact_fast
from gvr_topk.policy import load_config
from gvr_topk.testing import check_exact

pytestmark = pytest.mark.gvr_topk

needs_kernels = pytest.mark.skipif(not gvr_topk.kernels_interpreted() and not torch.cuda.is_available(),
                                   reason="needs the Triton interpreter (TRITON_INTERPRET=1) or a GPU")


# ------------------------------------------------------------------------------------------------ cases


def _bench_script(name: str):
    """Import ``benchmarks/<name>.py`` (the benchmark scripts are not a package)."""
    bench = str(Path(__file__).resolve().parents[5] / "benchmarks")
    sys.path.insert(0, bench)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(bench)


def test_grid_is_the_target_grid():
    grid = bc.grid_cases()
    assert len(grid) == 4 * 5 * 3
    assert {c.rows for c in grid} == {1, 8, 64, 512}
    assert {c.n for c in grid} == {4111, 16387, 65536, 131075, 262143}
    assert {c.k for c in grid} == {512, 1024, 2048}
    assert all(c.next_n == 1 and c.compress_ratio == 1 and c.data == "decode" for c in grid)
    assert all(c.max_seq_len == c.n for c in grid)
    # Cases sharing an input are adjacent, so the runner generates each input once.
    keys = [c.data_key for c in grid]
    assert len(set(keys)) == 20 and keys == sorted(keys, key=keys.index)


def test_case_names_unique_and_frozen():
    every = bc.select_cases()
    assert len({c.name for c in every}) == len(every)
    with pytest.raises(dataclasses.FrozenInstanceError):
        every[0].k = 1
    assert every[0].data_key == dataclasses.replace(every[0], k=every[0].k + 1).data_key


def test_varlen_and_adversarial_suites():
    vl = bc.varlen_cases()
    assert {c.next_n for c in vl} == {2, 4} and {c.compress_ratio for c in vl} == {4}
    assert all(c.varlen and c.max_seq_len == c.n * 4 and c.rows == c.batch * c.next_n for c in vl)
    adv = bc.adversarial_cases()
    assert {c.data for c in adv} == set(bc.ADVERSARIAL_KINDS)
    assert {"ramp", "equal", "few_distinct", "bf16_ties", "heavy_tail", "pm_inf", "neg_inf_tail"} == \
        set(bc.ADVERSARIAL_KINDS)


def test_quick_subset_contains_target_cells_and_is_smaller():
    quick = bc.select_cases(quick=True)
    full = bc.select_cases()
    assert len(quick) < len(full) / 3
    names = {c.name for c in quick}
    for rows in (1, 64, 512):
        assert f"grid/{rows}x131075/k2048" in names
    assert {c.suite for c in quick} == set(bc.SUITES)


def test_select_cases_filters():
    cs = bc.select_cases(suites=["grid"], rows=[1], ns=[131075], ks=[2048])
    assert [c.name for c in cs] == ["grid/1x131075/k2048"]
    assert all(c.k == 2048 for c in bc.select_cases(ks=[2048]))
    with pytest.raises(ValueError):
        bc.select_cases(suites=["nope"])
    tiny = bc.select_cases(tiny=True)
    assert tiny and max(c.n for c in tiny) <= 20000 and {c.suite for c in tiny} == set(bc.SUITES)


# ------------------------------------------------------------------------------------------------ data
@pytest.mark.parametrize("case", [Case("grid", 3, 5000, 128), Case("varlen", 4, 3000, 256, next_n=2,
                                                                     compress_ratio=4)],
                         ids=lambda c: c.name)
def test_decode_generator_deterministic_and_shaped(case):
    a = make_inputs(case, 512)
    b = make_inputs(case, 512)
    for x, y in ((a.logits, b.logits), (a.kv_lens, b.kv_lens), (a.hint, b.hint)):
        assert torch.equal(x, y)
    other = make_inputs(dataclasses.replace(case, seed=1), 512)
    assert not torch.equal(a.logits, other.logits)
    assert a.logits.shape == (case.rows, case.n) and a.logits.dtype == torch.float32
    assert a.kv_lens.shape == (case.batch,) and a.kv_lens.dtype == torch.int32
    assert a.hint.shape == (case.batch, 512) and a.hint.dtype == torch.int32
    want_len = reference.row_lengths(a.kv_lens, case.rows, case.n, next_n=case.next_n,
                                     compress_ratio=case.compress_ratio)
    assert torch.equal(a.lengths, want_len)
    cols = torch.arange(case.n)
    past = cols[None, :] >= a.lengths[:, None]
    assert torch.isinf(a.logits[past]).all() and (a.logits[past] < 0).all()
    assert torch.isfinite(a.logits[~past]).all()
    # The hint is the previous step's top-k: legal columns (or -1), distinct, and a prefix for smaller K.
    assert ((a.hint >= -1) & (a.hint < case.n)).all()
    assert torch.equal(a.hint_for(128), a.hint[:, :128]) and a.hint_for(128).is_contiguous()
    for row in a.hint:
        live = row[row >= 0]
        assert live.unique().numel() == live.numel()
    if case.varlen:
        assert int(a.kv_lens[0]) == case.max_seq_len
        assert int(a.lengths[-1]) <= case.k  # one short request: its rows exercise the short-row layout


def test_decode_hint_is_realistic():
    case = Case("grid", 4, 16387, 512)
    inp = make_inputs(case)
    ref, _ = reference.topk_varlen(inp.logits, inp.kv_lens, case.k)
    overlap = [len(set(ref[r].tolist()) & set(inp.hint[r].tolist())) / case.k for r in range(case.rows)]
    # Drifting queries: the previous step's top-k covers most, never all, of this step's.
    assert 0.5 < sum(overlap) / len(overlap) < 0.999


def test_adversarial_rows_properties():
    g = torch.Generator().manual_seed(0)
    n, rows = 4096, 3
    ramp = adversarial_rows("ramp", rows, n, g, "cpu")
    assert (ramp[:, 1:] > ramp[:, :-1]).all()
    assert (adversarial_rows("equal", rows, n, g, "cpu") == 1.0).all()
    assert adversarial_rows("few_distinct", rows, n, g, "cpu").unique().numel() <= 4
    bf = adversarial_rows("bf16_ties", rows, n, g, "cpu")
    assert torch.equal(bf, bf.to(torch.bfloat16).to(torch.float32))
    assert bf[0].unique().numel() < n * 0.5  # many exact ties
    heavy = adversarial_rows("heavy_tail", rows, n, g, "cpu")
    assert torch.isfinite(heavy).all() and heavy.abs().max() > 100.0
    pm = adversarial_rows("pm_inf", rows, n, g, "cpu")
    assert (pm == float("inf")).any() and (pm == float("-inf")).any()
    tail = adversarial_rows("neg_inf_tail", rows, n, g, "cpu")
    head = n // 128
    assert torch.isfinite(tail[:, :head]).all() and (tail[:, head:] == float("-inf")).all()
    with pytest.raises(ValueError):
        adversarial_rows("bogus", rows, n, g, "cpu")


def test_adversarial_inputs_deterministic():
    c = Case("adversarial", 2, 3000, 64, data="bf16_ties")
    a, b = make_inputs(c), make_inputs(c)
    assert torch.equal(a.logits, b.logits) and torch.equal(a.hint, b.hint)
    assert (a.lengths == 3000).all()


# ------------------------------------------------------------------------------------------------ exactness
def _inputs_for_check():
    g = torch.Generator().manual_seed(3)
    out = []
    x = torch.randn(5, 700, generator=g)
    out.append((x, None, 1, 1))
    ties = torch.randint(0, 3, (4, 900), generator=g).to(torch.float32)
    ties[1, :] = 0.0
    ties[1, ::2] = -0.0
    out.append((ties, None, 1, 1))
    kv = torch.tensor([2400, 100, 1700], dtype=torch.int32)  # cr 4, next_n 2: some rows shorter than K
    out.append((torch.randn(6, 600, generator=g).to(torch.bfloat16), kv, 2, 4))
    return out


def _both(x, idx, kv, nn, cr, **kw):
    a = check_exact(x, idx, kv_lens=kv, next_n=nn, compress_ratio=cr, **kw)
    b = check_exact_fast(x, idx, kv_lens=kv, next_n=nn, compress_ratio=cr, **kw)
    return a, b


@pytest.mark.parametrize("which", range(3))
def test_fast_check_agrees_with_check_exact(which):
    x, kv, nn, cr = _inputs_for_check()[which]
    k = 64
    good, vals = reference.topk_varlen(x, kv, k, next_n=nn, compress_ratio=cr)
    a, b = _both(x, good, kv, nn, cr, values=vals)
    assert a == b == []
    lens = reference.row_lengths(kv, x.shape[0], x.shape[1], next_n=nn, compress_ratio=cr)
    long_rows = [r for r in range(x.shape[0]) if lens[r] > k]
    short_rows = [r for r in range(x.shape[0]) if lens[r] <= k]
    breakages = []
    bad = good.clone()
    bad[long_rows[0], 0] = int(lens[long_rows[0]])  # out of range
    breakages.append(bad)
    bad = good.clone()
    bad[long_rows[-1], 1] = bad[long_rows[-1], 0]  # duplicate
    breakages.append(bad)
    bad = good.clone()
    r = long_rows[0]
    outside = sorted(set(range(int(lens[r]))) - set(good[r].tolist()))
    key = reference.order_keys(x[r].to(torch.float32))
    low = min(outside, key=lambda c: int(key[c]))
    bad[r, 0] = low  # replace a winner by a strictly smaller (or tied-higher-column) score
    breakages.append(bad)
    if short_rows:
        bad = good.clone()
        bad[short_rows[0], -1] = 0  # short-row layout
        breakages.append(bad)
    for bad in breakages:
        a, b = _both(x, bad, kv, nn, cr)
        assert a and a == b
    wrong_vals = vals.clone()
    wrong_vals[long_rows[0], 3] += 1.0
    a, b = _both(x, good, kv, nn, cr, values=wrong_vals)
    assert a and a == b


def test_fast_check_tie_rule():
    x = torch.ones(2, 300)
    k = 16
    good, _ = reference.topk_varlen(x, None, k)
    assert torch.equal(good[0].sort().values, torch.arange(k, dtype=torch.int32))
    bad = good.clone()
    bad[1, 0] = 299  # same value, but not the lowest tied column
    a, b = _both(x, bad, None, 1, 1)
    assert a == b and "tie rule" in a[0]
    a, b = _both(x, bad, None, 1, 1, tie_rule=False)
    assert a == b == []


def test_fast_check_reports_rows_in_order_and_max_report():
    x = torch.randn(8, 500)
    good, _ = reference.topk_varlen(x, None, 32)
    bad = good.clone()
    bad[:, 0] = -5
    a, b = _both(x, bad, None, 1, 1, max_report=3)
    assert a == b and [int(re.match(r"row (\d+)", p).group(1)) for p in b] == [0, 1, 2]


# ------------------------------------------------------------------------------------------------ floor
def test_floor_split_rule():
    assert bfloor.floor_split(1, 131072) == 64
    assert bfloor.floor_split(8, 131072) == 64
    assert bfloor.floor_split(64, 131072) == 16
    assert bfloor.floor_split(512, 131072) == 2
    assert bfloor.floor_split(1, 4111) == 4  # no program gets less than MIN_CHUNK scores
    assert bfloor.floor_split(4096, 131072) == 1
    assert list(bfloor.split_candidates(64, 131072)) == [8, 16, 32]
    assert list(bfloor.split_candidates(1, 262143)) == [32, 64]


@needs_kernels
def test_rowmax_kernel_matches_amax_and_resets():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(3, 9000, device=dev)
    x[1] = float("-inf")
    x[2, 17] = float("nan")
    for split in (1, 3):
        rm = bfloor.RowMax(x, None, 9000, split)
        for _ in range(2):  # the merge slots must be back at zero for the second launch
            out = rm().clone()
            assert torch.equal(out[:2], x[:2].amax(1)) and torch.isnan(out[2])
    kv = torch.tensor([4 * 5000, 4 * 40], dtype=torch.int32, device=dev)  # next_n 2, cr 4
    xv = torch.randn(4, 9000, device=dev)
    rm = bfloor.RowMax(xv, kv, 9000, 2, next_n=2, compress_ratio=4)
    lens = reference.row_lengths(kv.cpu(), 4, 9000, next_n=2, compress_ratio=4).tolist()
    want = torch.stack([xv[r, :lens[r]].amax() for r in range(4)])
    assert torch.equal(rm(), want)


# ------------------------------------------------------------------------------------------------ timing
def test_quantiles():
    assert timing.quantile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert timing.quantile([0.0, 10.0], 0.2) == pytest.approx(2.0)
    t = timing.summarize([float(i) for i in range(1, 26)], "graph")
    assert (t.median_us, t.p20_us, t.p80_us, t.reps) == (13.0, 5.8, 20.2, 25) or \
        (t.median_us == 13.0 and t.p20_us == pytest.approx(5.8) and t.p80_us == pytest.approx(20.2))
    with pytest.raises(ValueError):
        timing.quantile([], 0.5)



@pytest.mark.parametrize("arms,reps", [(1, 5), (2, 4), (3, 6), (4, 8), (5, 20), (6, 12), (7, 3)])
def test_interleaved_order_balances_places_and_the_arm_before(arms, reps):
    order = timing.interleaved_order(arms, reps)
    assert len(order) == arms * reps
    rounds = [order[r * arms:(r + 1) * arms] for r in range(reps)]
    assert all(sorted(r) == list(range(arms)) for r in rounds)  # each round replays every arm once
    period = arms if arms % 2 == 0 else 2 * arms
    if reps % period:
        return  # a partial period: only the rounds' completeness holds
    per = reps // period
    for place in range(arms):  # each arm at each place equally often
        assert [sum(r[place] == a for r in rounds) for a in range(arms)] == [per * period // arms] * arms
    pairs = collections.Counter((r[p], r[p + 1]) for r in rounds for p in range(arms - 1))
    want = per * (1 if arms % 2 == 0 else 2)
    assert all(pairs[(a, b)] == want for a in range(arms) for b in range(arms) if a != b)  # each arm before each


def test_interleaved_order_bad_arguments():
    assert timing.interleaved_order(3, 0) == []
    for arms, reps in ((0, 5), (2, -1)):
        with pytest.raises(ValueError, match="arms >= 1 and reps >= 0"):
            timing.interleaved_order(arms, reps)

# ------------------------------------------------------------------------------------------------ report
def _rec(rows, n, k, hinted, torch_us, floor_us=None, free=None, invalid=None, eager=None, suite="grid",
         exact=True, clock="graph"):
    arms = {"hinted": dict(median_us=hinted, clock=clock, exact=exact),
            "torch": dict(median_us=torch_us, clock=clock, exact=True)}
    if floor_us is not None:
        arms["floor"] = dict(median_us=floor_us, clock=clock, exact=True)
    if free is not None:
        arms["free"] = dict(median_us=free, clock=clock, exact=True)
    if invalid is not None:
        arms["invalid"] = dict(median_us=invalid, clock=clock, exact=True)
    if eager is not None:
        arms["eager"] = dict(median_us=eager, clock="eager", exact=True)
    return dict(name=f"{suite}/{rows}x{n}/k{k}", suite=suite, rows=rows, n=n, k=k, arms=arms, read_bytes=rows * n * 4,
                plan={"family": "split", "split": 8})


def _targets(results):
    return {t["key"]: t for t in report.evaluate_targets(results)}


def test_geomean_and_ratio():
    assert report.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert report.geomean([None, 4.0, float("nan")]) == pytest.approx(4.0)
    assert report.geomean([]) is None
    r = _rec(1, 131075, 2048, 10.0, 60.0, floor_us=5.0)
    assert report.ratio(r, "torch", "hinted") == 6.0 and report.ratio(r, "hinted", "floor") == 2.0
    assert report.ratio(r, "free", "hinted") is None


def test_targets_pass():
    res = [_rec(b, 131075, 2048, t, t * 6, floor_us=t / 1.5, free=t, invalid=t * 1.02, eager=t + 10)
           for b, t in ((1, 11.0), (64, 29.0), (512, 100.0))]
    t = _targets(res)
    assert all(v["status"] == "PASS" for v in t.values()), t
    assert t["speedup_geomean"]["measured"] == pytest.approx(6.0)
    assert t["floor_geomean"]["measured"] == pytest.approx(1.5)
    assert t["eager_overhead"]["measured"] == pytest.approx(10.0)
    assert t["t_64x131075"]["measured"] == 29.0


def test_targets_miss_and_boundaries():
    res = [_rec(1, 131075, 2048, 13.0, 13.0 * 5, floor_us=13.0 / 1.8, free=13.0 * 1.2, invalid=13.0 * 1.31,
                eager=13.0 + 15.5),
           _rec(8, 4111, 512, 20.0, 20.0 * 1.49, floor_us=20.0, free=20.0, invalid=20.0)]
    t = _targets(res)
    assert t["speedup_min"]["status"] == "MISS" and t["speedup_min"]["measured"] == pytest.approx(1.49)
    assert t["free_max"]["status"] == "MISS" and t["invalid_max"]["status"] == "MISS"
    assert t["t_1x131075"]["status"] == "MISS" and t["eager_overhead"]["status"] == "MISS"
    assert t["t_512x131075"]["status"] == "n/a"
    exact_at_goal = _targets([_rec(1, 4111, 512, 10.0, 50.0, floor_us=10.0 / 1.8)])
    assert exact_at_goal["speedup_geomean"]["status"] == "PASS"  # 5.0x is >= 5x
    assert exact_at_goal["floor_geomean"]["status"] == "PASS"  # 1.8x is <= 1.8x
    assert report.TARGETS[4].status(0.969) == "MISS" and report.TARGETS[4].status(1.0) == "PASS"


def test_exactness_target_counts_every_arm():
    res = [_rec(1, 4111, 512, 10.0, 50.0), _rec(8, 4111, 512, 10.0, 50.0, exact=False)]
    t = _targets(res)
    assert t["exact"]["status"] == "MISS" and t["exact"]["text"].startswith("3/4")
    res[1]["arms"]["hinted"] = dict(median_us=None, error="RuntimeError: boom", exact=False)
    res[1]["arms"]["eager"] = dict(median_us=None, skipped="no GPU")
    assert _targets(res)["exact"]["status"] == "MISS"
    assert _targets(res[:1])["exact"]["status"] == "PASS"


def test_cpu_clock_gives_na_not_pass():
    res = [_rec(1, 131075, 2048, 1e5, 10.0, floor_us=1e4, free=1e5, invalid=1e5, clock="host")]
    t = _targets(res)
    assert t["exact"]["status"] == "PASS"
    assert all(v["status"] == "n/a" for k, v in t.items() if k != "exact")


def test_table_summary_and_heatmap_matrix():
    res = [_rec(1, 4111, 512, 10.0, 40.0), _rec(1, 4111, 2048, 10.0, 90.0), _rec(64, 131075, 2048, 20.0, 100.0),
           _rec(4, 3000, 64, 10.0, 20.0, suite="varlen")]
    table = report.format_table(res)
    assert len(table.splitlines()) == 2 + len(res) and "grid/1x4111/k512" in table
    summary = report.format_summary(res, report.evaluate_targets(res), ["a note"])
    assert "PASS" in summary and "MISS" in summary and "note: a note" in summary
    rows, ns, mat = report.heatmap_matrix(res)
    assert rows == [1, 64] and ns == [4111, 131075]
    assert mat[0][0] == pytest.approx(6.0) and mat[0][1] is None and mat[1][1] == pytest.approx(5.0)


def test_provenance_commit_from_the_environment_wins(monkeypatch):
    """A copied tree may carry a stale ``.git`` (remote GPU hosts): the commit given by the caller is recorded."""
    monkeypatch.setenv("GVR_TOPK_GIT_COMMIT", "0123456789abcdef")
    prov = report.provenance(torch.device("cpu"), ["x"])
    assert prov["git_commit"] == "0123456789abcdef" and prov["git_dirty"] is None


def test_write_json_roundtrip(tmp_path):
    res = [_rec(1, 4111, 512, 10.0, 40.0)]
    res[0]["arms"]["hinted"]["p20_us"] = float("nan")
    path = tmp_path / "r.json"
    prov = report.provenance(torch.device("cpu"), ["x"])
    for key in ("date", "torch", "triton", "git_commit", "gpu", "driver"):
        assert key in prov
    report.write_json(str(path), prov, res, report.evaluate_targets(res), {"reps": 25}, ["n"])
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == report.SCHEMA_VERSION
    assert doc["cases"][0]["arms"]["hinted"]["p20_us"] is None  # NaN is not JSON
    assert {t["key"] for t in doc["targets"]} == {t.key for t in report.TARGETS}
    md = report.benchmarks_markdown(doc)
    assert "| speed-up over torch.topk, geomean over the grid | >= 5x | 4.00x over 1 cells | MISS |" in md


def _saved_run(tmp_path, results, **prov_changes):
    prov = dict(git_commit="abc1234", git_dirty=None, gpu="NVIDIA H200", driver="580", device="cuda:0",
                torch="2.11", triton="3.6", cuda="13.0", gvr_topk="0.1.0", date="2026-12-02T10:00:00+00:00")
    config = dict(arms=["hinted", "torch"], reps=25, seed=0, flush_bytes=1 << 27)
    path = tmp_path / "gvr_topk_bench.json"
    report.write_json(str(path), dict(prov, **prov_changes), results, report.evaluate_targets(results),
                      dict(config, partial=True))
    return str(path), prov, config


def test_resumable_keeps_the_finished_selected_cases(tmp_path):
    """A run cut short keeps its finished cases: those the new run selects and that hold no error."""
    done = [_rec(1, 4111, 512, 10.0, 40.0), _rec(8, 4111, 512, 11.0, 40.0), _rec(64, 4111, 512, 12.0, 40.0)]
    done[2]["error"] = "RuntimeError: out of memory"
    path, prov, config = _saved_run(tmp_path, done)
    names = ["grid/1x4111/k512", "grid/64x4111/k512", "grid/512x4111/k512"]  # 8 rows not selected this time
    kept, date = report.resumable(path, dict(prov, date="later"), config, names)
    assert [r["name"] for r in kept] == ["grid/1x4111/k512"] and date == "2026-12-02T10:00:00+00:00"
    assert report.resumable(str(tmp_path / "none.json"), prov, config, names) == ([], None)


@pytest.mark.parametrize("where,key,value,message", [
    ("prov", "git_commit", "def5678", "provenance field 'git_commit' of .* is 'abc1234', this run's is 'def5678'"),
    ("prov", "gpu", "NVIDIA B200", "provenance field 'gpu'"),
    ("prov", "git_dirty", True, "uncommitted changes"),
    ("config", "reps", 30, "config field 'reps' of .* is 25, this run's is 30"),
    ("config", "arms", ["hinted"], "config field 'arms'"),
])
def test_resumable_refuses_another_run(tmp_path, where, key, value, message):
    path, prov, config = _saved_run(tmp_path, [_rec(1, 4111, 512, 10.0, 40.0)])
    if where == "prov":
        prov = dict(prov, **{key: value})
    else:
        config = dict(config, **{key: value})
    with pytest.raises(ValueError, match=message):
        report.resumable(path, prov, config, ["grid/1x4111/k512"])


def test_cli_resume_times_only_the_missing_cases(tmp_path, monkeypatch, capsys):
    """``--resume`` keeps the saved run's cases, times the others, and writes all of them in selection order."""
    from gvr_topk.bench import runner as brunner
    from gvr_topk.bench.cli import JSON_NAME
    from gvr_topk.bench.cli import run_from_argv

    timed = []

    def fake_run_case(self, case, inp, floor_rec):
        timed.append(case.name)
        rec = _rec(case.rows, case.n, case.k, 1.0, 2.0, suite=case.suite, clock="host")
        return dict(rec, name=case.name)

    monkeypatch.setattr(brunner.Runner, "run_case", fake_run_case)
    monkeypatch.setenv("GVR_TOPK_GIT_COMMIT", "abc1234")
    argv = ["--device", "cpu", "--out", str(tmp_path), "--no-progress", "--no-plot", "--arms", "hinted,torch",
            "--suites", "grid"]
    assert run_from_argv(argv) == 0
    names = [c.name for c in bc.select_cases(tiny=True, suites=["grid"])]
    assert timed == names
    doc = json.loads((tmp_path / JSON_NAME).read_text())
    doc["cases"] = doc["cases"][:2]  # as a run stopped by its time limit after two cases leaves it
    (tmp_path / JSON_NAME).write_text(json.dumps(doc))
    timed.clear()
    assert run_from_argv(argv + ["--resume"]) == 0
    assert timed == names[2:]
    doc = json.loads((tmp_path / JSON_NAME).read_text())
    assert [r["name"] for r in doc["cases"]] == names and doc["config"]["resumed"]["kept"] == 2
    assert any(n.startswith("resumed: 2 of") for n in doc["notes"])
    capsys.readouterr()
    assert run_from_argv(argv + ["--resume", "--reps", "30"]) == 2
    assert "config field 'reps'" in capsys.readouterr().err


def test_heatmap_png(tmp_path):
    pytest.importorskip("matplotlib")
    res = [_rec(1, 4111, 512, 10.0, 40.0), _rec(64, 131075, 2048, 20.0, 100.0)]
    path = tmp_path / "h.png"
    assert report.write_heatmap(str(path), res, "t", note=lambda m: None)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_heatmap_degrades_without_data(tmp_path):
    notes = []
    assert not report.write_heatmap(str(tmp_path / "h.png"), [], "t", note=notes.append)
    assert notes


# ------------------------------------------------------------------------------------------------ end to end
def test_precompile_specs_dedupe():
    from gvr_topk.bench.precompile import specs_for

    cs = bc.select_cases(quick=True)
    specs = specs_for(cs, ("hinted", "invalid", "free", "floor"))
    assert len(specs) == len({(c.rows, c.n, c.k, c.next_n, c.compress_ratio) for c in cs})
    assert all(s[7] and s[8] for s in specs)
    assert sum(bool(s[9]) for s in specs) == len({c.data_key[1:5] for c in cs})


@needs_kernels
def test_precompile_worker_in_process():
    from gvr_topk.bench.precompile import _worker

    dev = "cuda:0" if torch.cuda.is_available() else "cpu"
    assert _worker((dev, [(2, 1500, 32, 1, 1, 1500, False, True, True, (1, 2))])) == []


def test_end_to_end_cpu_smoke(tmp_path, capsys):
    from gvr_topk.bench.cli import JSON_NAME
    from gvr_topk.bench.cli import LOG_NAME
    from gvr_topk.bench.cli import run_from_argv

    rc = run_from_argv(["--device", "cpu", "--out", str(tmp_path), "--no-progress", "--no-plot",
                        "--markdown", str(tmp_path / "B.md")])
    text = capsys.readouterr().out
    assert rc == 0, text
    doc = json.loads((tmp_path / JSON_NAME).read_text())
    assert (tmp_path / LOG_NAME).read_text().strip()
    assert "# gvr-topk benchmark results" in (tmp_path / "B.md").read_text()
    assert len(doc["cases"]) == len(bc.tiny_cases())
    for rec in doc["cases"]:
        assert rec["plan"]["family"] in gvr_topk.FAMILIES
        for arm in ("hinted", "invalid", "free"):
            a = rec["arms"][arm]
            assert a["exact"] is True and a["clock"] == "host" and a["median_us"] > 0
        assert rec["arms"]["eager"]["skipped"]
    assert {r["plan"]["family"] for r in doc["cases"]} >= {"reg", "split"}
    assert doc["provenance"]["device"] == "cpu" and not doc["config"].get("partial")
    assert "Targets" in text and "every timed output exact" in text
    assert next(t for t in doc["targets"] if t["key"] == "exact")["status"] == "PASS"

    # The package CLI reaches the same code, and re-renders the saved run.
    from gvr_topk.cli import main as gvr_main

    assert gvr_main(["bench", "--from-json", str(tmp_path / JSON_NAME), "--no-plot"]) == 0
    assert "grid/1x700/k64" in capsys.readouterr().out


def test_cli_usage_errors(tmp_path):
    from gvr_topk.bench.cli import run_from_argv

    assert run_from_argv(["--device", "cpu", "--out", str(tmp_path), "--arms", "bogus"]) == 2
    assert run_from_argv(["--device", "tpu", "--out", str(tmp_path)]) == 2
    with pytest.raises(SystemExit):
        run_from_argv(["--rows", "0"])


def test_survivor_simulation_script_runs_on_the_host():
    """benchmarks/sim_survivors.py (host only): one line per arm and cell, every row classified once."""
    repo = Path(__file__).resolve().parents[5]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, str(repo / "benchmarks" / "sim_survivors.py"), "--cells", "4x20000x512",
                        "--arms", "g8/m2048,g1/m1024", "--data", "decode,ramp", "--low", "0,128"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    lines = [ln for ln in p.stdout.splitlines() if "count/aim" in ln]
    assert len(lines) == 8 and "g1/m1024" in lines[2] and "aim 1536" in lines[2] and "ramp" in lines[4], lines
    for ln in lines:
        counts = [int(v) for v in re.findall(r"(?:under K|half tile|full tile|over capacity) (\d+)", ln)]
        assert len(counts) == 4 and sum(counts) == 4, ln
        assert re.search(r"fewer levels \d+%", ln), ln


def test_probe_arm_settings_name_real_tuning_values():
    """benchmarks/probe_sample.py arms: every knob letter maps to an existing ``gvr_topk.tuning`` name, with the value
    types the launchers expect; a malformed setting is refused with the accepted forms."""
    probe_sample = _bench_script("probe_sample")
    from gvr_topk import tuning

    assert all(hasattr(tuning, name) for name in probe_sample.KNOBS.values())
    arm = probe_sample.parse_arm("g1/m896/c4096/f75/w16/p1024/s8/i4096/t2048/x2048/a32/q132/u64/k2048/n128/v4/"
                                 "y32768/r512/o2048/b8")
    assert arm == dict(SAMPLE_GROUP=1, AIM_MARGIN=896, CAP_BY_K=((2048, 4096),), AIM_MAX_FRACTION=0.75,
                       SELECT_WARPS=16, STREAM_TARGET_PROGRAMS=1024, STREAM_WARPS=8, STREAM_TILE=4096,
                       SELECT_MIN_TILE=2048, SAMPLE_MAX=2048, SAMPLE_ABOVE=32, SPLIT_TARGET_PROGRAMS=132,
                       SPLIT_MAX_ROWS=64, SPLIT_MIN_CHUNK=2048, SELECT_MANY_MAXNREG=128, SELECT_MANY_WARPS=4,
                       SPLIT_SHORT_MAX_N=32768, STREAM_CHUNK_ROWS=512,
                       STREAM_MIN_CHUNK=2048, THRESHOLD_WARPS=8)
    assert all(type(v) is type(getattr(tuning, name)) for name, v in arm.items())
    assert probe_sample.parse_arm("defaults") == {} and probe_sample.parse_arm("") == {}
    assert probe_sample.parse_arm("L6/z3") == dict(STREAM_MIN_SPLIT=6, STREAM_STAGE_SPARSE=3)
    for bad in ("Z4", "w", "g1//m2", "wx"):
        with pytest.raises(SystemExit, match="expected one of"):
            probe_sample.parse_arm(bad)
    saved = tuning.SELECT_WARPS
    with probe_sample.tuned({"SELECT_WARPS": saved // 2}):
        assert tuning.SELECT_WARPS == saved // 2
    assert tuning.SELECT_WARPS == saved


def test_probe_ab_freezes_revisions_beside_the_working_tree(tmp_path):
    """benchmarks/probe_ab.py: each frozen revision (a git revision, or a directory holding an exported package)
    imports as its own package next to ``gvr_topk``, with its own op namespace (all register), and the same public
    call; arms are named by revision, directories by their last component."""
    import shutil
    import subprocess

    repo = Path(__file__).resolve().parents[5]
    if shutil.which("git") is None or subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                                                     capture_output=True).returncode != 0:
        pytest.skip("needs git and a git checkout")
    probe_ab = _bench_script("probe_ab")
    exported = tmp_path / "exports" / "mine"
    exported.mkdir(parents=True)
    shutil.copytree(repo / "gvr_topk", exported / "gvr_topk", symlinks=True)
    frozen = tmp_path / "frozen"
    frozen.mkdir()
    revs = ["HEAD", str(exported)]
    for i, rev in enumerate(revs):
        probe_ab.freeze(rev, str(frozen), i)
    pkgs = probe_ab.packages(str(frozen), revs, True)
    try:
        assert list(pkgs) == ["HEAD", "mine", "new"]
        assert all(pkgs[a].__file__.startswith(str(frozen)) for a in ("HEAD", "mine"))
        assert [pkgs[a].ops.NAMESPACE for a in pkgs] == ["gvr_r0", "gvr_r1", "gvr"]
        assert all(hasattr(getattr(torch.ops, ns), "topk_varlen") for ns in ("gvr_r0", "gvr_r1", "gvr"))
        assert callable(pkgs["mine"].run_varlen)
    finally:
        sys.path.remove(str(frozen))


def test_probe_ab_data_kinds_and_summary(capsys):
    """benchmarks/probe_ab.py ``--data``: several kinds in the order given, an unknown or repeated kind refused by
    name; the closing table (shared with probe_sample.py) shows each record's kind and counts inexact outputs."""
    probe_ab = _bench_script("probe_ab")
    probe_sample = _bench_script("probe_sample")
    assert probe_ab.parse_data("decode") == ["decode"]
    assert probe_ab.parse_data("equal,decode,neg_inf_tail") == ["equal", "decode", "neg_inf_tail"]
    for bad in ("decod", "decode,decode", "equal,", ""):
        with pytest.raises(SystemExit, match="--data expects distinct kinds"):
            probe_ab.parse_data(bad)
    recs = [dict(rows=8, n=131075, k=2048, data=d, family="split", us={"torch": 66.0, "old": t0, "new": t1},
                 exact={"old": True, "new": ok}) for d, t0, t1, ok in (("decode", 25.5, 25.8, True),
                                                                       ("equal", 178.3, 95.8, False))]
    assert probe_sample.summarize(recs, ["old", "new"]) == 1
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("   8")]
    assert [r[3] for r in rows] == ["decode", "equal"] and rows[1][-1] == "95.8!"
    assert "3 arm outputs exact, 1 not exact [(8, 131075, 2048, 'equal', 'new')]" in out


def test_ncu_stall_summary(tmp_path, capsys):
    """benchmarks/ncu_stalls.py on a small export in Nsight Compute's layout (kernel row, header row, one row per
    SASS instruction): samples summed per reason, instructions ranked by samples, main reasons per instruction."""
    ncu_stalls = _bench_script("ncu_stalls")
    header = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
              "Instructions Executed", "stall_long_sb", "stall_wait", "stall_long_sb (Not Issued)"]
    lines = [["Kernel Name", "_k"], header,
             ["0x10", "FSETP.GT.AND P0, PT, R1, R2, PT", "30", "30", "64", "27", "3", "27"],
             ["0x20", "ATOMG.E.ADD", "10", "8", "2,048", "0", "10", "0"],
             ["0x30", "EXIT", "0", "0", "0", "0", "0", "0"]]
    path = tmp_path / "k_sass.csv"
    path.write_text("\n".join(",".join(f'"{v}"' for v in row) for row in lines) + "\n")
    s = ncu_stalls.summarize(str(path), top=2)
    assert s["samples"] == 40 and s["instructions"] == 3 and s["executed_once"] == 2
    assert s["reasons"] == [("long_sb", 27.0), ("wait", 13.0)]
    assert [h[1] for h in s["hottest"]] == ["0x10", "0x20"]
    assert s["hottest"][0][3] == 64 and s["hottest"][0][4] == {"long_sb": 27}
    assert s["hottest"][1][3] == 2048 and s["hottest"][1][4] == {"wait": 10}
    assert ncu_stalls.main([str(path), "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "40 samples over 3 instructions (2 executed)" in out and "long_sb" in out and "ATOMG" not in out


def test_select_phase_probe_compiles_for_sm90():
    """benchmarks/probe_select_phases.py (GPU only to run): its instrumented select kernel compiles for sm_90 with the
    installed Triton (no GPU needed to compile), at the half-capacity tile of a K=2048 row and the 2048-lane tile of a
    K=512 row, with the plan's warps and register cap past one wave. In a subprocess without TRITON_INTERPRET (the
    interpreter's kernels cannot be compiled)."""
    bench = Path(__file__).resolve().parents[5] / "benchmarks"
    code = """
import sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import probe_select_phases as ps

kernel = ps._timed_stream_select_kernel
sig = {name: ("*fp32" if name == "logits_ptr" else "*i64" if name == "t_ptr" else "*i32") if name.endswith("_ptr")
       else "constexpr" if name.isupper() else "i32" for name in kernel.arg_names}
for k, tile in ((2048, 4096), (512, 2048)):
    src = ASTSource(fn=kernel, signature=sig, constexprs=dict(K=k, CAP=8192, SEL_TILE=tile))
    ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=8, maxnreg=128)).asm["ptx"]
    assert "%globaltimer" in ptx and "%smid" in ptx, k
print("compiled")
"""
    env = {key: v for key, v in os.environ.items() if key != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(bench), str(bench.parent), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and "compiled" in out.stdout, out.stderr[-2000:]


def test_sass_counts_by_function(tmp_path):
    """benchmarks/sass_counts.py --by-function: instructions go to the innermost Python function of the source line
    nvdisasm names before them (checked on a made-up listing), and the threshold kernel compiles for sm_90 with its
    line table, most of its code in the sample threshold (in a subprocess without TRITON_INTERPRET)."""
    src = tmp_path / "kernels.py"
    src.write_text("def outer(x):\n    def inner(y):\n        return y\n    return inner(x)\n")
    insn = "        /*{:04x}*/                   MOV R1, R2 ;"
    listing = "\n".join([insn.format(0), f'        //## File "{src}", line 3', insn.format(16), insn.format(32),
                          f'        //## File "{src}", line 4', insn.format(48), f'        //## File "{src}", line 9',
                          insn.format(64)])
    sass_counts = _bench_script("sass_counts")
    assert sass_counts.by_function(listing) == {"?": 2, "inner": 2, "outer": 1}

    bench = Path(__file__).resolve().parents[5] / "benchmarks"
    env = {key: v for key, v in os.environ.items() if key != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(bench.parent), env.get("PYTHONPATH", "")])
    env["TRITON_CACHE_DIR"] = str(tmp_path / "cache")
    p = subprocess.run([sys.executable, str(bench / "sass_counts.py"), "threshold", "--by-function"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    total = int(re.search(r"instructions\s+(\d+)", p.stdout).group(1))
    top = re.search(r"^  _sample_bracket (\d+) ", p.stdout, re.M)
    assert top and 0.5 * total < int(top.group(1)) <= total, p.stdout


def test_variant_probe_counts_without_running_and_compiles_one(tmp_path):
    """benchmarks/probe_variants.py (host only): the warm-up's launches are recorded, not run, and counted once per
    compile key; the streaming family's batch sizes (64-512 requests of next_n rows) share one stage variant and one
    threshold variant per group-maxima setting the dispatcher plans for them (``Plan.maxima``, a constexpr); a
    recorded variant compiles offline for sm_90 from the JSON alone."""
    repo = Path(__file__).resolve().parents[5]
    script = repo / "benchmarks" / "probe_variants.py"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, str(script), "--sizes", "1,64,128,256,512", "--out", str(tmp_path)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads((tmp_path / "probe_variants.json").read_text())
    variants = doc["variants"]
    assert doc["sizes"] == [1, 64, 128, 256, 512] and doc["wall_s"] is None
    probe_variants = _bench_script("probe_variants")
    per = {}
    for v in variants:
        per[v["kernel"]] = per.get(v["kernel"], 0) + 1
        assert v["tensors"] and set(v["options"]) <= set(probe_variants.OPTIONS)
    assert per["_gvr_stage_kernel"] == 1, per
    threshold = [v["constexprs"]["SAMPLE_MAXIMA"] for v in variants if v["kernel"] == "_gvr_threshold_kernel"]
    cfg = load_config("deepseek-v3.2")  # probe_variants.py's default config: rows are requests x next_n
    planned = {dispatch.plan_for("stream", b * cfg.next_n, 131072, 131072, cfg.k).maxima for b in (64, 128, 256, 512)}
    assert sorted(threshold) == sorted(planned), (threshold, planned)
    assert any("split" in k for k in per), per
    # The accept launch (SELECT_PART 2) never reads the hint: hint-free in both modes; the ladder keeps the mode.
    select = [v["constexprs"] for v in variants if v["kernel"] == "_gvr_select_kernel"]
    assert all(c["HINT_FREE"] for c in select if c["SELECT_PART"] == 2), select
    assert {c["HINT_FREE"] for c in select if c["SELECT_PART"] == 1} == {True, False}, select
    total = re.search(r"^total\s+(\d+)$", p.stdout, re.M)
    assert total and int(total.group(1)) == len(variants), p.stdout

    # The offline compile path (what --compile runs per worker), on the smallest variant, without the interpreter.
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([next(v for v in variants if v["kernel"] == "_gvr_threshold_kernel")]))
    cenv = {k: v for k, v in env.items() if k != "TRITON_INTERPRET"}
    cenv["TRITON_CACHE_DIR"] = str(tmp_path / "cache")
    p = subprocess.run([sys.executable, str(script), "--worker", str(batch)], env=cenv, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    (done,) = json.loads(batch.read_text())
    assert done["compile_s"] > 0
    assert any((tmp_path / "cache").rglob("*.cubin")), "no sm_90 binary was written"


def test_probe_cells_grid_and_varlen():
    """benchmarks/probe_sample.py cells: ROWSxNxK of decode or adversarial rows, or a benchmark varlen case by its
    name (the same case, so the same inputs); anything else is refused."""
    probe_sample = _bench_script("probe_sample")
    from gvr_topk.bench.cases import Case

    assert probe_sample.parse_cell("64x131075x2048") == Case("grid", 64, 131075, 2048)
    assert probe_sample.parse_cell("8x131075x2048", "equal") == Case("adversarial", 8, 131075, 2048, data="equal")
    case = probe_sample.parse_cell("varlen/b4xnn4/cr4/131072/k2048")
    assert case == Case("varlen", 4, 131072, 2048, next_n=4, compress_ratio=4) and case.name == \
        "varlen/b4xnn4/cr4/131072/k2048"
    assert probe_sample.call_kwargs(case) == dict(next_n=4, compress_ratio=4, max_seq_len=4 * 131072)
    for bad in ("64x131075", "varlen/b4xnn4/131072/k2048", "ax1x2"):
        with pytest.raises(SystemExit, match="expected ROWSxNxK"):
            probe_sample.parse_cell(bad)
