"""Seeded fuzz test of the gvr top-k op: random shapes, row lengths, dtypes, strides, hints and score distributions.

Every case is checked exactly against the contract: the index set must equal the reference's (the tie rule makes it
unique), short rows must be ``0 .. n-1`` then -1 slot for slot, values must be the scores at the chosen columns
(pad slots ``finfo(float32).min``), and nothing outside ``[:, :K]`` of the output buffers may change.

Compile cost: K and the launch plan are Triton constexprs, so cases are grouped by *configuration* (K, row width,
dtype, family, batch, next_n, compress ratio, strides, hint/values on or off, entry point). A configuration fixes
everything that selects a compiled kernel; inside it each case draws fresh row lengths, data, poison and hints.
K comes from a small fixed set and the row width from a few envelopes.

Environment:

* ``GVR_FUZZ_CASES``: number of cases (default 240 on CPU, where the kernels run in Triton's interpreter, and
  2000 on a GPU).
* ``GVR_FUZZ_SEED``: master seed (default 20260101).
* ``GVR_FUZZ_REPORT``: path of a JSON summary (cases, mismatches, coverage counts, failing cases).
* ``GVR_FUZZ_ONLY``: ``"<config seed>:<case seed>"`` replays one case (printed with every failure).
* ``GVR_FUZZ_FAMILY``: keep only configurations whose widest launch takes this family (``widest_plan``'s family,
  e.g. ``stream``), drawn from the same seeded sequence, to aim a run at one family's kernels.
* ``GVR_FUZZ_TUNING``: ``"NAME=INT[,NAME=INT...]"`` replaces ``gvr_topk.tuning`` integers for the run, e.g.
  ``SPLIT_BALANCE=0``: an option is fuzzed on either side before it is adopted or dropped.

On a GPU the data is generated on the device and the check runs there against ``gvr_topk.reference`` (its index
set is unique under the tie rule), with one host synchronisation per configuration; the first case of every
configuration (and every failing case) is also checked with ``gvr_topk.testing.check_exact``, which compares the
value multiset with ``torch.topk`` on the host. On CPU every case goes through ``check_exact`` as well.
"""

import json
import os
import random
import time
from collections import Counter
from dataclasses import asdict
from dataclasses import dataclass
from typing import List
from typing import Optional

import pytest
import torch

import gvr_topk
from gvr_topk import contract
from gvr_topk import reference
from gvr_topk import tuning
from gvr_topk.dispatch import capacity
from gvr_topk.testing import check_exact
from gvr_topk.testing import tuning_overrides

pytestmark = pytest.mark.gvr_topk

ON_GPU = torch.cuda.is_available()
DEV = torch.device("cuda") if ON_GPU else torch.device("cpu")

#: K values (each compiles its own kernels, so the set stays small).
KS = (1, 5, 64, 512, 1024, 2048) if ON_GPU else (1, 5, 64, 512)
#: Row widths (npad) the configurations draw from: short rows, around the staging capacity, long rows.
NPADS = (2100, 6000, 9000, 20000, 70000) if ON_GPU else (700, 2100, 5000)
#: Rows per request and KV compression ratios.
NEXT_NS = (1, 2, 4)
CRS = (1, 2, 4)
BATCHES = (1, 2, 3, 8, 17, 32, 64, 200) if ON_GPU else (1, 2, 3, 5)
DTYPES = (torch.float32, torch.bfloat16, torch.float16)
DISTRIBUTIONS = ("randn", "ramp_up", "ramp_down", "all_equal", "few_distinct", "bf16_ties", "heavy_tail",
                 "pos_inf", "neg_inf", "pm_inf", "neg_inf_tail", "all_neg_inf", "signed_zeros", "low_bits",
                 "ints_with_spikes")
HINTS = ("minus_one", "duplicates", "out_of_range", "huge", "negative", "all_equal", "partial", "prev_topk",
         "exact", "random", "mixed")
ROW_KINDS = ("zero", "below_next_n", "short", "eq_k", "k_plus_1", "just_above_k", "cap_minus_1", "cap",
             "cap_plus_1", "random", "full")
IDX_CANARY = -123456
VAL_CANARY = 12345.0


def _env_int(name: str, default: int) -> int:
    v = os.environ.get(name)
    return default if v in (None, "") else int(v)


@dataclass(frozen=True)
class Config:
    """Everything that selects a compiled kernel (one group of cases)."""

    seed: int
    entry: str              # "run_varlen" | "run" | "topk"
    k: int
    npad: int
    stride_extra: int       # logits row stride = npad + stride_extra
    out_extra: int          # indices/values row stride = k + out_extra
    hint_extra: int         # pre_idx width = k + hint_extra
    dtype: str
    family: Optional[str]
    batch: int
    next_n: int
    cr: int
    hinted: bool
    values: bool
    max_seq_len: Optional[int]
    caller_workspace: bool
    n_valid_choices: tuple  # entry "run": the uniform lengths drawn from


def _legal_families(rows: int, n_env: int, npad: int, k: int):
    fams = [None, "stream"]
    if min(max(n_env, k + 1), npad) <= tuning.REG_MAX_N:
        fams.append("reg")
    # Forced split beyond SPLIT_MAX_ROWS rows (a shape route never picks) has its own test in
    # test_gvr_robustness.py, run in a subprocess: a failure there can crash the process.
    if rows <= tuning.SPLIT_MAX_ROWS:
        fams.append("split")
    return fams


def widest_plan(cfg: Config) -> str:
    """The plan of a configuration's widest launch (its envelope at max_seq_len, or the full row width), as
    "family" or "split/coop" (the split family's cooperative form): the coverage report's view of which kernels a
    configuration reached. A varlen case without max_seq_len whose rows are all shorter may route differently."""
    rows = cfg.batch * cfg.next_n
    n_env = cfg.npad if cfg.max_seq_len is None else min(cfg.max_seq_len // cfg.cr, cfg.npad)
    if cfg.entry == "run":
        n_env = min(max(cfg.n_valid_choices), cfg.npad)
    plan = (gvr_topk.route(rows, n_env, cfg.npad, cfg.k) if cfg.family is None
            else gvr_topk.plan_for(cfg.family, rows, n_env, cfg.npad, cfg.k))
    return plan.family + ("/coop" if plan.coop else "")


def _draw_configs(rnd: random.Random, count: int, family: Optional[str]) -> List[Config]:
    """``count`` configurations from ``rnd``'s seeds; with ``family``, only those whose widest launch takes it."""
    if family is not None and family not in gvr_topk.FAMILIES:
        raise ValueError(f"GVR_FUZZ_FAMILY: expected one of {gvr_topk.FAMILIES}, got {family!r}")
    cfgs = []
    for _ in range(2000 * count):
        cfg = make_config(rnd.randrange(2 ** 31))
        if family is None or widest_plan(cfg).split("/")[0] == family:
            cfgs.append(cfg)
            if len(cfgs) == count:
                return cfgs
    raise ValueError(f"GVR_FUZZ_FAMILY={family!r}: only {len(cfgs)} of {count} configurations drawn")


def make_config(seed: int) -> Config:
    rnd = random.Random(seed)
    k = rnd.choice(KS)
    npad = rnd.choice([p for p in NPADS if p > k] or [max(NPADS)])
    entry = rnd.choices(("run_varlen", "run", "topk"), weights=(8, 1, 1))[0]
    dtype = rnd.choice(DTYPES)
    if entry == "run":
        next_n, cr = 1, 1
    else:
        next_n, cr = rnd.choice(NEXT_NS), rnd.choice(CRS)
    batch = rnd.choice(BATCHES)
    rows = batch * next_n
    max_seq_len = None
    if entry != "run" and rnd.random() < 0.7:
        # Usually the whole row width; sometimes an envelope inside it (rows are clamped to max_seq_len // cr).
        width = npad if rnd.random() < 0.7 else rnd.randint(min(k + 1, npad), npad)
        max_seq_len = width * cr + rnd.randint(0, cr - 1)
    n_env = npad if max_seq_len is None else min(max_seq_len // cr, npad)
    family = None if entry == "topk" else rnd.choice(_legal_families(rows, n_env, npad, k))
    n_valid_choices = ()
    if entry == "run":
        n_valid_choices = tuple(sorted({rnd.choice((0, 1, k, k + 1, npad // 2, npad, npad + 5))
                                        for _ in range(3)}))
        if family == "reg" and max(max(n_valid_choices), k + 1) > tuning.REG_MAX_N:
            family = None
    return Config(
        seed=seed, entry=entry, k=k, npad=npad,
        stride_extra=rnd.choice((0, 0, 3, 64, 256)),
        out_extra=0 if entry == "topk" else rnd.choice((0, 0, 1, 16)),
        hint_extra=rnd.choice((0, 0, 7, 32)),
        dtype=str(dtype).replace("torch.", ""), family=family, batch=batch, next_n=next_n, cr=cr,
        hinted=rnd.random() < 0.6, values=rnd.random() < 0.6, max_seq_len=max_seq_len,
        caller_workspace=entry == "run_varlen" and rnd.random() < 0.4, n_valid_choices=n_valid_choices)


@dataclass
class Case:
    """One drawn case (inputs on the device) and the call's outputs."""

    seed: int
    logits: torch.Tensor
    kv_lens: Optional[torch.Tensor]
    n_valid: Optional[int]
    pre_idx: Optional[torch.Tensor]
    idx_buf: torch.Tensor
    val_buf: Optional[torch.Tensor]
    dists: List[str]
    hint_kind: Optional[str]
    row_kinds: List[str]


def _dist_rows(kind: str, rows: int, cols: int, g: torch.Generator) -> torch.Tensor:
    """float32 scores [rows, cols] of one distribution, generated on DEV."""
    def randn():
        return torch.randn(rows, cols, generator=g, device=DEV)

    def rand():
        return torch.rand(rows, cols, generator=g, device=DEV)

    ar = torch.arange(cols, device=DEV, dtype=torch.float32).expand(rows, cols)
    if kind == "randn":
        return randn() - 2.0
    if kind == "ramp_up":
        return ar.clone()
    if kind == "ramp_down":
        return -ar
    if kind == "all_equal":
        return torch.full((rows, cols), 1.5, device=DEV)
    if kind == "few_distinct":
        return torch.randint(0, 3, (rows, cols), generator=g, device=DEV).float()
    if kind == "bf16_ties":
        return randn().to(torch.bfloat16).float()
    if kind == "heavy_tail":
        return randn().exp() ** 4
    if kind == "pos_inf":
        return torch.where(rand() < 0.01, float("inf"), randn())
    if kind == "neg_inf":
        return torch.where(rand() < 0.3, float("-inf"), randn())
    if kind == "pm_inf":
        u = rand()
        return torch.where(u < 0.005, float("inf"), torch.where(u > 0.9, float("-inf"), randn()))
    if kind == "neg_inf_tail":
        return torch.where(ar >= max(cols // 10, 1), float("-inf"), randn())
    if kind == "all_neg_inf":
        return torch.full((rows, cols), float("-inf"), device=DEV)
    if kind == "signed_zeros":
        return torch.where(rand() < 0.5, 0.0, -0.0) * torch.ones(rows, cols, device=DEV)
    if kind == "low_bits":
        return 1.0 + torch.randint(0, 256, (rows, cols), generator=g, device=DEV).float() * 2 ** -23
    if kind == "ints_with_spikes":
        x = torch.randint(-2, 3, (rows, cols), generator=g, device=DEV).float()
        return torch.where(rand() < 0.002, 100.0, x)
    raise ValueError(kind)


def _row_target(kind: str, k: int, npad: int, rnd: random.Random) -> int:
    cap = capacity(k)
    table = {
        "zero": 0, "short": rnd.randint(1, max(k - 1, 1)), "eq_k": k, "k_plus_1": k + 1,
        "just_above_k": k + rnd.randint(2, 12), "cap_minus_1": cap - 1, "cap": cap, "cap_plus_1": cap + 1,
        "random": rnd.randint(0, npad), "full": npad,
    }
    return min(table[kind], npad)


def _hint(kind: str, cfg: Config, batch: int, n_req: torch.Tensor, logits: torch.Tensor, kv, n_valid,
          g: torch.Generator, rnd: random.Random) -> torch.Tensor:
    """int32 [batch, k + hint_extra] hint of one kind (any content is legal)."""
    k, width, npad = cfg.k, cfg.k + cfg.hint_extra, cfg.npad
    n_hi = n_req.clamp(min=1).to(torch.int64)[:, None]

    def in_range(cols=width):
        return (torch.rand(batch, cols, generator=g, device=DEV) * n_hi).to(torch.int32)

    def ref_hint(x):
        rows = x.shape[0]
        ref, _ = reference.topk_varlen(x, kv, k, next_n=cfg.next_n, compress_ratio=cfg.cr, n_valid=n_valid)
        step = rows // batch
        h = ref[step - 1::step][:, :k]
        return torch.cat([h, in_range(width - k)], 1) if width > k else h

    if kind == "minus_one":
        return torch.full((batch, width), -1, dtype=torch.int32, device=DEV)
    if kind == "duplicates":
        h = in_range()
        return torch.where(torch.rand(batch, width, generator=g, device=DEV) < 0.7, h[:, :1], h)
    if kind == "out_of_range":
        return torch.randint(npad, 2 ** 31 - 1, (batch, width), generator=g, device=DEV, dtype=torch.int32)
    if kind == "huge":
        return torch.full((batch, width), 2 ** 31 - 1, dtype=torch.int32, device=DEV)
    if kind == "negative":
        return torch.randint(-2 ** 31, 0, (batch, width), generator=g, device=DEV, dtype=torch.int32)
    if kind == "all_equal":
        return torch.full((batch, width), rnd.randint(0, npad - 1), dtype=torch.int32, device=DEV)
    if kind == "partial":
        h = in_range()
        h[:, rnd.randint(0, width):] = -1
        return h
    if kind == "prev_topk":
        noisy = logits.float() + 0.3 * torch.randn(logits.shape, generator=g, device=DEV)
        return ref_hint(noisy)
    if kind == "exact":
        return ref_hint(logits)
    if kind == "random":
        return in_range()
    if kind == "mixed":
        pick = torch.randint(0, 4, (batch, width), generator=g, device=DEV)
        garbage = torch.randint(-2 ** 31, 2 ** 31 - 1, (batch, width), generator=g, device=DEV, dtype=torch.int32)
        return torch.where(pick == 0, -1, torch.where(pick == 1, garbage, in_range())).to(torch.int32)
    raise ValueError(kind)


def make_case(cfg: Config, case_seed: int) -> Case:
    """Draw one case of ``cfg`` (deterministic in (cfg.seed, case_seed))."""
    rnd = random.Random(case_seed * 1000003 + cfg.seed)
    g = torch.Generator(device=DEV).manual_seed(case_seed * 7919 + cfg.seed)
    dtype = getattr(torch, cfg.dtype)
    k, npad, cr, next_n = cfg.k, cfg.npad, cfg.cr, cfg.next_n
    rows = cfg.batch * next_n
    kv, n_valid, row_kinds = None, None, []
    if cfg.entry == "run":
        n_valid = rnd.choice(cfg.n_valid_choices)
        lens = reference.row_lengths(None, rows, npad, n_valid=n_valid).to(DEV)
        n_req = lens
    else:
        # Uncompressed KV length per request, from a target length of its last MTP row.
        kv_list = []
        msl = cfg.max_seq_len
        for b in range(cfg.batch):
            kind = rnd.choice(ROW_KINDS)
            row_kinds.append(kind)
            if kind == "below_next_n":
                kv_list.append(rnd.randint(0, next_n - 1))
                continue
            kvb = _row_target(kind, k, npad, rnd) * cr + rnd.randint(0, cr - 1)
            if kind == "full" and msl is None:
                kvb += rnd.randint(0, 1000)  # beyond the row width: clamped to npad
            if msl is not None:
                kvb = min(kvb, msl)
            kv_list.append(kvb)
        if msl is None:
            # Without max_seq_len the envelope comes from kv_lens.max(): one request always covers the whole row
            # width, so the envelope (and the configuration's compiled kernel) stays the same from case to case.
            kv_list[rnd.randrange(cfg.batch)] = npad * cr + rnd.randint(0, 1000)
        kv = torch.tensor(kv_list, dtype=torch.int32).to(DEV)
        lens = reference.row_lengths(kv, rows, npad, next_n=next_n, compress_ratio=cr).to(DEV)
        n_req = lens[next_n - 1::next_n]
    # Scores: a few distributions mixed row-wise, then poison (NaN / +inf / huge) past every row's length and in
    # the stride gap, so any read past n_r shows up as a wrong selection.
    x = torch.zeros(rows, npad, device=DEV)
    dists = rnd.sample(DISTRIBUTIONS, rnd.randint(1, 3))
    pick = torch.randint(0, len(dists), (rows, 1), generator=g, device=DEV)
    for i, d in enumerate(dists):
        x = torch.where(pick == i, _dist_rows(d, rows, npad, g), x)
    poison = rnd.choice((float("nan"), float("inf"), 3e38))
    cols = torch.arange(npad, device=DEV)
    x = torch.where(cols[None, :] < lens[:, None], x, poison)
    base = torch.full((rows, npad + cfg.stride_extra), poison, device=DEV).to(dtype)  # 3e38 -> inf in float16
    logits = base[:, :npad]
    logits.copy_(x.to(dtype))
    pre_idx, hint_kind = None, None
    if cfg.hinted:
        hint_kind = rnd.choice(HINTS)
        hb = rows if cfg.entry == "run" else cfg.batch
        pre_idx = _hint(hint_kind, cfg, hb, n_req, logits, kv, n_valid, g, rnd)
    idx_buf = torch.full((rows, k + cfg.out_extra), IDX_CANARY, dtype=torch.int32, device=DEV)
    val_buf = torch.full((rows, k + cfg.out_extra), VAL_CANARY, device=DEV) if cfg.values else None
    return Case(case_seed, logits, kv, n_valid, pre_idx, idx_buf, val_buf, dists, hint_kind, row_kinds)


def run_case(cfg: Config, case: Case, workspace: Optional[torch.Tensor]) -> None:
    k = cfg.k
    idx = case.idx_buf[:, :k]
    val = case.val_buf if case.val_buf is not None else None
    if cfg.entry == "run_varlen":
        gvr_topk.run_varlen(case.logits, case.pre_idx, case.kv_lens, idx, next_n=cfg.next_n, compress_ratio=cfg.cr,
                            values=val, max_seq_len=cfg.max_seq_len, workspace=workspace, family=cfg.family)
    elif cfg.entry == "run":
        gvr_topk.run(case.logits, case.pre_idx, case.n_valid, idx, val, family=cfg.family)
    else:
        out_i, out_v = gvr_topk.topk(case.logits, k, kv_lens=case.kv_lens, pre_idx=case.pre_idx,
                                     next_n=cfg.next_n, compress_ratio=cfg.cr, return_values=cfg.values,
                                     max_seq_len=cfg.max_seq_len)
        idx.copy_(out_i)
        if val is not None:
            val[:, :k].copy_(out_v)


def _canon(v: torch.Tensor) -> torch.Tensor:
    """float32 bits with -0.0 == +0.0 and one NaN (what "the same value" means for the values output)."""
    v = v.to(torch.float32) + 0.0
    return torch.where(torch.isnan(v), torch.full_like(v, float("nan")), v).view(torch.int32)


def device_bad_rows(cfg: Config, case: Case) -> torch.Tensor:
    """0-D tensor on DEV: rows that break the contract (computed without a host sync)."""
    k = cfg.k
    logits, idx = case.logits, case.idx_buf[:, :k]
    rows, npad = logits.shape
    ref, _ = reference.topk_varlen(logits, case.kv_lens, k, next_n=cfg.next_n, compress_ratio=cfg.cr,
                                   n_valid=case.n_valid)
    n = reference.row_lengths(case.kv_lens, rows, npad, next_n=cfg.next_n, compress_ratio=cfg.cr,
                              n_valid=case.n_valid).to(DEV)
    same_slots = (idx == ref).all(1)
    same_set = (torch.sort(idx, 1).values == torch.sort(ref, 1).values).all(1)
    ok = torch.where(n <= k, same_slots, same_set)
    ok &= (case.idx_buf[:, k:] == IDX_CANARY).all(1)
    if case.val_buf is not None:
        live = idx >= 0
        got = torch.gather(logits.to(torch.float32), 1, idx.to(torch.int64).clamp(0, npad - 1))
        want = torch.where(live, got, torch.full_like(got, contract.PAD_VALUE))
        ok &= (_canon(case.val_buf[:, :k]) == _canon(want)).all(1)
        ok &= (case.val_buf[:, k:] == VAL_CANARY).all(1)
    return (~ok).sum()


def host_problems(cfg: Config, case: Case) -> List[str]:
    """``check_exact`` (host, against torch.topk's value multiset and the tie rule) plus the canary columns."""
    k = cfg.k
    probs = check_exact(case.logits, case.idx_buf[:, :k], kv_lens=case.kv_lens, next_n=cfg.next_n,
                        compress_ratio=cfg.cr, n_valid=case.n_valid, values=case.val_buf)
    if not bool((case.idx_buf[:, k:] == IDX_CANARY).all()):
        probs.append("indices written past column K")
    if case.val_buf is not None and not bool((case.val_buf[:, k:] == VAL_CANARY).all()):
        probs.append("values written past column K")
    return probs


def describe(cfg: Config, case: Case) -> str:
    return (f"replay: GVR_FUZZ_ONLY={cfg.seed}:{case.seed} (config {asdict(cfg)}; distributions {case.dists}, "
            f"hint {case.hint_kind}, request kinds {case.row_kinds}, "
            f"kv_lens {None if case.kv_lens is None else case.kv_lens.tolist()[:16]}, n_valid {case.n_valid})")


def _caller_workspace(cfg: Config):
    ws = None
    if cfg.caller_workspace:
        ws = torch.zeros(gvr_topk.workspace_bytes(cfg.batch * cfg.next_n, cfg.k), dtype=torch.uint8, device=DEV)
    return ws


def fuzz(num_cases: int, master_seed: int, only: Optional[str] = None, on_config=None) -> dict:
    """Run ``num_cases`` cases over a seeded set of configurations; returns the summary.

    ``on_config(summary)`` runs after every configuration (a time-limited run still leaves its counts behind)."""
    t0 = time.time()
    if only:
        cs, ks = (int(v) for v in only.split(":"))
        plan = [(make_config(cs), [ks])]
    else:
        rnd = random.Random(master_seed)
        # Few enough configurations that compiling their kernels (1-5 s each on a GPU) stays a small part of the
        # run, enough that every family, dtype and K is drawn: 12 for 2000 GPU cases, 24 for 10000.
        if ON_GPU:
            num_cfg = max(6, min(24, num_cases // 250 + 4))
        else:
            num_cfg = max(6, min(24, num_cases // 4))
        num_cfg = max(1, min(num_cfg, num_cases))
        cfgs = _draw_configs(rnd, num_cfg, os.environ.get("GVR_FUZZ_FAMILY") or None)
        per = [num_cases // num_cfg + (i < num_cases % num_cfg) for i in range(num_cfg)]
        plan = [(c, [rnd.randrange(2 ** 31) for _ in range(m)]) for c, m in zip(cfgs, per)]
    summary = dict(device=str(DEV), interpreter=gvr_topk.kernels_interpreted(), master_seed=master_seed,
                   configs=len(plan), cases=0, rows=0, mismatches=0, host_checked=0, failures=[],
                   coverage=dict(k=Counter(), family=Counter(), dtype=Counter(), entry=Counter(),
                                 hint=Counter(), distribution=Counter(), request_kind=Counter(),
                                 widest_plan=Counter()))
    cov = summary["coverage"]
    for cfg, seeds in plan:
        ws = _caller_workspace(cfg)
        pending = []
        for i, s in enumerate(seeds):
            case = make_case(cfg, s)
            run_case(cfg, case, ws)
            summary["cases"] += 1
            summary["rows"] += case.logits.shape[0]
            cov["k"][cfg.k] += 1
            cov["family"][str(cfg.family)] += 1
            cov["widest_plan"][widest_plan(cfg)] += 1
            cov["dtype"][cfg.dtype] += 1
            cov["entry"][cfg.entry] += 1
            cov["hint"][str(case.hint_kind)] += 1
            cov["distribution"].update(case.dists)
            cov["request_kind"].update(case.row_kinds)
            if not ON_GPU or i == 0:
                # Host check on every CPU case and on the first case of every GPU configuration (cross-checks the
                # device oracle against torch.topk's value multiset).
                probs = host_problems(cfg, case)
                summary["host_checked"] += 1
                dev_bad = int(device_bad_rows(cfg, case))
                if probs or dev_bad:
                    summary["mismatches"] += 1
                    summary["failures"].append(dict(replay=describe(cfg, case), problems=probs[:5],
                                                    device_bad_rows=dev_bad))
                continue
            pending.append((s, device_bad_rows(cfg, case)))
        if pending:
            bad = torch.stack([b for _, b in pending]).cpu().tolist()
            for (s, _), nb in zip(pending, bad):
                if nb:
                    case = make_case(cfg, s)
                    run_case(cfg, case, ws)
                    summary["mismatches"] += 1
                    summary["failures"].append(dict(replay=describe(cfg, case), device_bad_rows=nb,
                                                    problems=host_problems(cfg, case)[:5]))
        if on_config is not None:
            summary["seconds"] = round(time.time() - t0, 2)
            on_config(summary)
    summary["seconds"] = round(time.time() - t0, 2)
    summary["coverage"] = {a: {str(k): v for k, v in c.items()} for a, c in cov.items()}
    return summary


def test_fuzz_exact(monkeypatch):
    for name, value in tuning_overrides(os.environ.get("GVR_FUZZ_TUNING"), "GVR_FUZZ_TUNING").items():
        monkeypatch.setattr(tuning, name, value)
    gvr_topk.clear_launch_cache()  # plans and launch arguments rebuilt under the values in force
    default = 2000 if ON_GPU else 240
    n = _env_int("GVR_FUZZ_CASES", default)
    seed = _env_int("GVR_FUZZ_SEED", 20260101)
    report = os.environ.get("GVR_FUZZ_REPORT")

    def progress(partial):
        print(f"gvr fuzz progress: {partial['cases']} cases, {partial['mismatches']} mismatches, "
              f"{partial['seconds']} s", flush=True)
        if report:  # the counts so far, in case the run is cut short
            os.makedirs(os.path.dirname(os.path.abspath(report)), exist_ok=True)
            with open(report, "w") as fh:
                json.dump(dict(partial, complete=False, coverage={}), fh, indent=1)

    summary = fuzz(n, seed, os.environ.get("GVR_FUZZ_ONLY") or None, on_config=progress)
    summary["complete"] = True
    print(f"\ngvr fuzz: {summary['cases']} cases ({summary['rows']} rows) in {summary['configs']} configurations, "
          f"{summary['mismatches']} mismatches, {summary['host_checked']} host-checked, {summary['seconds']} s "
          f"on {summary['device']}")
    for f in summary["failures"][:20]:
        print("FAIL", json.dumps(f))
    if report:
        os.makedirs(os.path.dirname(os.path.abspath(report)), exist_ok=True)
        with open(report, "w") as fh:
            json.dump(summary, fh, indent=1)
    assert summary["cases"] == (1 if os.environ.get("GVR_FUZZ_ONLY") else n)
    assert summary["mismatches"] == 0, "\n".join(json.dumps(f) for f in summary["failures"][:10])


def test_fuzz_tuning_overrides():
    assert tuning_overrides(None) == {} and tuning_overrides("") == {}
    assert tuning_overrides("SPLIT_BALANCE=1, STREAM_STAGE_SPARSE=3") == dict(SPLIT_BALANCE=1, STREAM_STAGE_SPARSE=3)
    for bad in ("SPLIT_BALANCE", "SPLIT_BALANCE=on", "NO_SUCH=1", "SPLIT_COOP=1", "AIM_MAX_FRACTION=1"):
        with pytest.raises(ValueError, match="GVR_FUZZ_TUNING: expected NAME=INT"):
            tuning_overrides(bad, "GVR_FUZZ_TUNING")


def test_fuzz_family_filter_draws_that_family():
    """``GVR_FUZZ_FAMILY`` aims a run at one family: every drawn configuration's widest launch takes it, and an
    unknown family is refused by name."""
    for family in ("stream", "split"):
        cfgs = _draw_configs(random.Random(7), 4, family)
        assert [widest_plan(c).split("/")[0] for c in cfgs] == [family] * 4
    with pytest.raises(ValueError, match="GVR_FUZZ_FAMILY"):
        _draw_configs(random.Random(7), 1, "streaming")


def test_fuzz_generator_covers_its_space():
    """The configuration/case generator reaches every family, dtype, K, entry point, hint kind and distribution
    (host side only: no kernel runs), so a passing fuzz run means the whole space was drawn from."""
    rnd = random.Random(1)
    cfgs = [make_config(rnd.randrange(2 ** 31)) for _ in range(600)]
    assert {c.family for c in cfgs} == {None, *gvr_topk.FAMILIES}
    assert {c.dtype for c in cfgs} == {"float32", "bfloat16", "float16"}
    assert {c.k for c in cfgs} == set(KS)
    assert {c.entry for c in cfgs} == {"run_varlen", "run", "topk"}
    assert any(c.stride_extra for c in cfgs) and any(c.out_extra for c in cfgs) and any(c.hint_extra for c in cfgs)
    assert any(c.max_seq_len is None for c in cfgs) and any(c.max_seq_len for c in cfgs)
    for c in cfgs:
        rows = c.batch * c.next_n
        if c.family == "split":
            assert rows <= tuning.SPLIT_MAX_ROWS
        if c.family is not None:  # forced families are legal for the configuration's envelope
            n_env = c.npad if c.max_seq_len is None else min(c.max_seq_len // c.cr, c.npad)
            gvr_topk.plan_for(c.family, rows, n_env, c.npad, c.k)


def test_fuzz_replay_is_deterministic():
    """A case regenerated from its seeds is bit-identical (what makes a printed failure replayable)."""
    rnd = random.Random(5)
    for _ in range(3):
        cfg = make_config(rnd.randrange(2 ** 31))
        s = rnd.randrange(2 ** 31)
        a, b = make_case(cfg, s), make_case(cfg, s)
        assert torch.equal(a.logits.float().nan_to_num(7.0), b.logits.float().nan_to_num(7.0))
        assert (a.kv_lens is None) == (b.kv_lens is None)
        if a.kv_lens is not None:
            assert torch.equal(a.kv_lens, b.kv_lens)
        if a.pre_idx is not None:
            assert torch.equal(a.pre_idx, b.pre_idx)
