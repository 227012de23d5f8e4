"""Reporting: the per-case table, the target summary (PASS / MISS), the JSON file and the heatmap.

Everything here is pure Python over the runner's records (plain dicts), so it is unit-tested on CPU.
"""

import datetime as _dt
import json
import math
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable
from typing import Dict
from typing import Iterable
from typing import List
from typing import Optional
from typing import Sequence
from typing import Tuple

SCHEMA_VERSION = 1


# ---------------------------------------------------------------------------------------------- small math
def geomean(xs: Iterable[float]) -> Optional[float]:
    """Geometric mean of positive numbers; None when there are none."""
    xs = [float(x) for x in xs if x is not None and x > 0 and math.isfinite(x)]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def median_us(rec: dict, arm: str) -> Optional[float]:
    """Median time of ``arm`` in a case record, or None when the arm did not run / failed."""
    a = rec.get("arms", {}).get(arm)
    if not a or a.get("error") or a.get("skipped"):
        return None
    return a.get("median_us")


def clock(rec: dict, arm: str) -> Optional[str]:
    a = rec.get("arms", {}).get(arm)
    return a.get("clock") if a else None


def ratio(rec: dict, num: str, den: str) -> Optional[float]:
    """``median(num) / median(den)`` of one case, or None."""
    a, b = median_us(rec, num), median_us(rec, den)
    if a is None or b is None or b <= 0:
        return None
    return a / b


def _grid(results: Sequence[dict]) -> List[dict]:
    return [r for r in results if r.get("suite") == "grid"]


def _graph_timed(results: Sequence[dict], *arms: str) -> bool:
    """True when every case that has these arms timed them with CUDA-graph replay (not a CPU smoke run)."""
    seen = [clock(r, a) for r in results for a in arms if median_us(r, a) is not None]
    return bool(seen) and all(c == "graph" for c in seen)


# ---------------------------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class Target:
    """One target of performance.md.

    Attributes
    ----------
    key : str
        Stable identifier (JSON key).
    label : str
        What is measured.
    goal : str
        The goal as printed.
    lo, hi : float, optional
        PASS when ``lo <= measured <= hi`` (a missing bound is open).
    unit : str
        ``"x"`` (a ratio), ``"us"`` or ``""``.
    """

    key: str
    label: str
    goal: str
    lo: Optional[float] = None
    hi: Optional[float] = None
    unit: str = ""

    def status(self, measured: Optional[float]) -> str:
        if measured is None:
            return "n/a"
        # A relative 1e-9 of slack: a geomean computed through logs lands a few ulps off an exact goal.
        eps = 1e-9 * abs(measured)
        ok = (self.lo is None or measured >= self.lo - eps) and (self.hi is None or measured <= self.hi + eps)
        return "PASS" if ok else "MISS"


TARGETS: Tuple[Target, ...] = (
    Target("exact", "every timed output exact (all suites, all checked arms)", "all", lo=1.0, unit=""),
    Target("speedup_geomean", "speed-up over torch.topk, geomean over the grid", ">= 5x", lo=5.0, unit="x"),
    Target("speedup_min", "speed-up over torch.topk, lowest grid cell", ">= 1.5x", lo=1.5, unit="x"),
    Target("floor_geomean", "time / read floor, geomean over the grid", "<= 1.8x", hi=1.8, unit="x"),
    Target("free_geomean", "hint-free / hinted, geomean over the grid", "0.97-1.01", lo=0.97, hi=1.01, unit="x"),
    Target("free_max", "hint-free / hinted, max over the grid", "<= 1.15", hi=1.15, unit="x"),
    Target("invalid_geomean", "invalid hints / hinted, geomean over the grid", "<= 1.05", hi=1.05, unit="x"),
    Target("invalid_max", "invalid hints / hinted, max over the grid", "<= 1.3", hi=1.3, unit="x"),
    Target("t_1x131075", "1 x 131075, K=2048 (hinted, graph)", "<= 12 us", hi=12.0, unit="us"),
    Target("t_64x131075", "64 x 131075, K=2048 (hinted, graph)", "<= 30 us", hi=30.0, unit="us"),
    Target("t_512x131075", "512 x 131075, K=2048 (hinted, graph)", "<= 110 us", hi=110.0, unit="us"),
    Target("eager_overhead", "eager call - graph replay at 1 row, worst grid cell", "<= +15 us", hi=15.0,
           unit="us"),
)


def _exact_stats(results: Sequence[dict]) -> Tuple[int, int, List[str]]:
    """(checked outputs, exact outputs, failure descriptions) over every case and arm."""
    checked = exact = 0
    fails: List[str] = []
    for r in results:
        if r.get("error"):
            checked += 1
            fails.append(f"{r['name']}: {r['error']}")
            continue
        for arm, a in r.get("arms", {}).items():
            if a.get("skipped"):
                continue
            if a.get("error"):
                checked += 1
                fails.append(f"{r['name']} [{arm}]: {a['error']}")
            elif a.get("exact") is not None:
                checked += 1
                if a["exact"]:
                    exact += 1
                else:
                    fails.append(f"{r['name']} [{arm}]: {(a.get('problems') or ['inexact'])[0]}")
    return checked, exact, fails


def _cell(results: Sequence[dict], rows: int, n: int, k: int) -> Optional[dict]:
    for r in _grid(results):
        if r["rows"] == rows and r["n"] == n and r["k"] == k:
            return r
    return None


def _measure(results: Sequence[dict]) -> Dict[str, Tuple[Optional[float], str]]:
    """Measured value and a short text for every target key (value None: not measurable in this run)."""
    grid = _grid(results)
    m: Dict[str, Tuple[Optional[float], str]] = {}
    checked, exact, fails = _exact_stats(results)
    m["exact"] = ((exact / checked) if checked else None, f"{exact}/{checked} outputs exact")

    def ratios(num, den):
        if not _graph_timed(grid, num, den):
            return []
        return [x for x in (ratio(r, num, den) for r in grid) if x is not None]

    def worst(num, den, pick):
        vals = [(ratio(r, num, den), r["name"]) for r in grid]
        vals = [v for v in vals if v[0] is not None]
        return pick(vals) if vals and _graph_timed(grid, num, den) else (None, "")

    sp = ratios("torch", "hinted")
    g = geomean(sp)
    m["speedup_geomean"] = (g, f"{g:.2f}x over {len(sp)} cells" if g else "no graph-timed grid cells")
    lo, name = worst("torch", "hinted", min)
    m["speedup_min"] = (lo, f"{lo:.2f}x at {name}" if lo is not None else "-")
    for key, num, den in (("floor_geomean", "hinted", "floor"), ("free_geomean", "free", "hinted"),
                          ("invalid_geomean", "invalid", "hinted")):
        rs = ratios(num, den)
        g = geomean(rs)
        m[key] = (g, f"{g:.3f}x over {len(rs)} cells" if g else "-")
    for key, num in (("free_max", "free"), ("invalid_max", "invalid")):
        hi, name = worst(num, "hinted", max)
        m[key] = (hi, f"{hi:.3f}x at {name}" if hi is not None else "-")
    for key, rows in (("t_1x131075", 1), ("t_64x131075", 64), ("t_512x131075", 512)):
        c = _cell(results, rows, 131075, 2048)
        t = median_us(c, "hinted") if c is not None and clock(c, "hinted") == "graph" else None
        m[key] = (t, f"{t:.1f} us" if t is not None else "-")
    over = []
    for r in grid:
        if r["rows"] == 1 and clock(r, "eager") == "eager" and clock(r, "hinted") == "graph":
            e, gr = median_us(r, "eager"), median_us(r, "hinted")
            if e is not None and gr is not None:
                over.append((e - gr, r["name"]))
    if over:
        worst_over = max(over)
        med = sorted(o for o, _ in over)[len(over) // 2]
        m["eager_overhead"] = (worst_over[0], f"+{worst_over[0]:.1f} us at {worst_over[1]} (median +{med:.1f})")
    else:
        m["eager_overhead"] = (None, "-")
    return m


def evaluate_targets(results: Sequence[dict]) -> List[dict]:
    """Every target with its measured value and PASS / MISS / n/a.

    Returns
    -------
    list of dict
        ``key``, ``label``, ``goal``, ``measured`` (float or None), ``text`` and ``status``.
    """
    meas = _measure(results)
    out = []
    for t in TARGETS:
        value, text = meas[t.key]
        status = t.status(value)
        if t.key == "exact" and value is not None:
            status = "PASS" if value >= 1.0 else "MISS"
        out.append(dict(key=t.key, label=t.label, goal=t.goal, measured=value, text=text, status=status))
    return out


# ---------------------------------------------------------------------------------------------- text
def _fmt(x: Optional[float], spec: str = ".1f") -> str:
    return "-" if x is None else format(x, spec)


def _exact_flag(rec: dict) -> str:
    if rec.get("error"):
        return "ERR"
    flags = []
    for arm, a in rec.get("arms", {}).items():
        if a.get("error"):
            flags.append(f"{arm}:ERR")
        elif a.get("exact") is False:
            flags.append(f"{arm}:NO")
    return "ok" if not flags else ",".join(flags)


TABLE_COLUMNS = ("case", "plan", "hinted", "free", "invalid", "eager", "torch", "floor", "x torch", "/floor",
                 "free/h", "inv/h", "GB/s", "recall", "exact")


def format_table(results: Sequence[dict]) -> str:
    """Fixed-width table, one line per case (times are medians in microseconds)."""
    lines = []
    header = (f"{'case':<34} {'plan':<10} {'hinted':>8} {'free':>8} {'invalid':>8} {'eager':>8} {'torch':>8} "
              f"{'floor':>7} {'x torch':>7} {'/floor':>6} {'free/h':>6} {'inv/h':>6} {'GB/s':>6} {'recall':>6} "
              f"exact")
    lines.append(header)
    lines.append("-" * len(header))
    for r in results:
        plan = r.get("plan") or {}
        p = plan.get("family", "?") + (f"/{plan['split']}" if plan.get("family") == "split" else "")
        h = median_us(r, "hinted")
        gbps = (r.get("read_bytes", 0) / (h * 1e3)) if h else None
        lines.append(
            f"{r['name']:<34} {p:<10} {_fmt(h):>8} {_fmt(median_us(r, 'free')):>8} "
            f"{_fmt(median_us(r, 'invalid')):>8} {_fmt(median_us(r, 'eager')):>8} "
            f"{_fmt(median_us(r, 'torch')):>8} {_fmt(median_us(r, 'floor')):>7} "
            f"{_fmt(ratio(r, 'torch', 'hinted'), '.2f'):>7} {_fmt(ratio(r, 'hinted', 'floor'), '.2f'):>6} "
            f"{_fmt(ratio(r, 'free', 'hinted'), '.3f'):>6} {_fmt(ratio(r, 'invalid', 'hinted'), '.3f'):>6} "
            f"{_fmt(gbps, '.0f'):>6} {_fmt(r.get('hint_recall'), '.2f'):>6} {_exact_flag(r)}")
    return "\n".join(lines)


def format_summary(results: Sequence[dict], targets: Sequence[dict], notes: Sequence[str] = ()) -> str:
    """Geomean lines per suite, then every target with its measured number and PASS / MISS."""
    lines = ["", "Summary (medians; graph replay with cold L2 unless noted)"]
    for suite in ("grid", "varlen", "adversarial"):
        rs = [r for r in results if r.get("suite") == suite]
        if not rs:
            continue
        parts = []
        for label, num, den in (("x torch", "torch", "hinted"), ("/floor", "hinted", "floor"),
                                ("free/h", "free", "hinted"), ("inv/h", "invalid", "hinted")):
            g = geomean(ratio(r, num, den) for r in rs)
            parts.append(f"{label} {_fmt(g, '.3f')}")
        lines.append(f"  {suite:<12} ({len(rs):>3} cases) geomean: " + ", ".join(parts))
    checked, exact, fails = _exact_stats(results)
    for f in fails[:10]:
        lines.append(f"  INEXACT/ERROR {f}")
    if len(fails) > 10:
        lines.append(f"  ... and {len(fails) - 10} more")
    for note in notes:
        lines.append(f"  note: {note}")
    lines.append("")
    lines.append(f"Targets (H200, fp32)  {'goal':>10}  {'status':<6} measured")
    for t in targets:
        lines.append(f"  {t['label']:<56} {t['goal']:>10}  {t['status']:<6} {t['text']}")
    n_pass = sum(t["status"] == "PASS" for t in targets)
    n_miss = sum(t["status"] == "MISS" for t in targets)
    lines.append(f"  {n_pass} PASS, {n_miss} MISS, {len(targets) - n_pass - n_miss} n/a")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- files
def _git(args: Sequence[str]) -> Optional[str]:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        out = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _driver() -> Optional[str]:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def provenance(device, argv: Optional[Sequence[str]] = None) -> dict:
    """Where and with what the numbers were measured: GPU, driver, versions, commit, date.

    The commit comes from the environment variable ``GVR_TOPK_GIT_COMMIT`` when it is set (copies of the tree
    whose ``.git`` is missing or stale, as on a remote GPU host), else from ``git`` next to the package.
    """
    import torch

    import gvr_topk

    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    info = dict(
        date=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        device=str(device), torch=torch.__version__, triton=triton_version, cuda=torch.version.cuda,
        python=platform.python_version(), gvr_topk=gvr_topk.__version__,
        argv=list(sys.argv if argv is None else argv),
    )
    given = os.environ.get("GVR_TOPK_GIT_COMMIT")
    commit = None if given else _git(["rev-parse", "HEAD"])
    info["git_commit"] = given or commit
    status = _git(["status", "--porcelain", "--untracked-files=no"]) if commit else None
    info["git_dirty"] = bool(status) if status is not None else None
    if getattr(device, "type", str(device)) == "cuda":
        p = torch.cuda.get_device_properties(device)
        info.update(gpu=p.name, sms=p.multi_processor_count, l2_bytes=getattr(p, "L2_cache_size", None),
                    memory_bytes=p.total_memory, driver=_driver())
    else:
        info.update(gpu=None, driver=None, cpu=platform.processor() or platform.machine())
    return info


def _clean(x):
    """JSON-safe copy: non-finite floats become None (JSON has no NaN / inf)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def write_json(path: str, prov: dict, results: Sequence[dict], targets: Sequence[dict], config: dict,
               notes: Sequence[str] = ()) -> None:
    """Write the run: provenance, config, targets and one record per case (medians + p20/p80 per arm)."""
    doc = dict(schema_version=SCHEMA_VERSION, provenance=prov, config=config, targets=list(targets),
               notes=list(notes), cases=list(results))
    with open(path, "w") as f:
        json.dump(_clean(doc), f, indent=1)
        f.write("\n")


#: Provenance fields two runs must share for one to resume the other (same code, same machine and software).
RESUME_PROVENANCE = ("git_commit", "gpu", "driver", "device", "torch", "triton", "cuda", "gvr_topk")
#: Config fields they must share (same arms, repetitions, data and flush); the case selection may differ.
RESUME_CONFIG = ("arms", "reps", "seed", "flush_bytes")


def resumable(path: str, prov: dict, config: dict, names: Sequence[str]) -> Tuple[List[dict], Optional[str]]:
    """The case records of the saved run at ``path`` that a new run may keep instead of timing again.

    A run cut short by a time limit has left its finished cases in its JSON (rewritten after every input group);
    resuming it times only the others. Kept: the saved records whose case is among ``names`` (the new run's
    selection, so a resume may also add cases a first run did not select) and that hold no error.

    Parameters
    ----------
    path : str
        The saved run (``gvr_topk_bench.json``); a missing file keeps nothing.
    prov, config : dict
        The new run's provenance (:func:`provenance`) and config.
    names : sequence of str
        The new run's case names.

    Returns
    -------
    (list of dict, str or None)
        The kept records, and the saved run's date (None when there was no file).

    Raises
    ------
    ValueError
        The saved run is not comparable: a provenance field of ``RESUME_PROVENANCE`` or a config field of
        ``RESUME_CONFIG`` differs (the message names it, with the saved and the new value), the commit is unknown,
        or either tree had uncommitted changes.
    """
    if not os.path.exists(path):
        return [], None
    with open(path) as f:
        doc = json.load(f)
    old_prov, old_cfg = doc.get("provenance", {}), doc.get("config", {})
    # Compared as the JSON file holds them (tuples become lists).
    prov, config = json.loads(json.dumps(_clean(prov))), json.loads(json.dumps(_clean(config)))
    for key in RESUME_PROVENANCE:
        if old_prov.get(key) != prov.get(key):
            raise ValueError(f"--resume: provenance field {key!r} of {path} is {old_prov.get(key)!r}, this run's is "
                             f"{prov.get(key)!r}")
    if not prov.get("git_commit"):
        raise ValueError("--resume: the commit is unknown (set GVR_TOPK_GIT_COMMIT), so the saved run's code cannot "
                         "be matched")
    if old_prov.get("git_dirty") or prov.get("git_dirty"):
        raise ValueError("--resume: the saved run or this one has uncommitted changes; expected a clean tree on both")
    for key in RESUME_CONFIG:
        if old_cfg.get(key) != config.get(key):
            raise ValueError(f"--resume: config field {key!r} of {path} is {old_cfg.get(key)!r}, this run's is "
                             f"{config.get(key)!r}")
    wanted = set(names)
    kept = [r for r in doc.get("cases", []) if r.get("name") in wanted and not r.get("error")]
    return kept, old_prov.get("date")


def heatmap_matrix(results: Sequence[dict]) -> Tuple[List[int], List[int], List[List[Optional[float]]]]:
    """(rows axis, N axis, speed-up over torch.topk per rows x N: geomean over K; None where not measured)."""
    grid = _grid(results)
    rows = sorted({r["rows"] for r in grid})
    ns = sorted({r["n"] for r in grid})
    mat = [[geomean(ratio(r, "torch", "hinted") for r in grid if r["rows"] == b and r["n"] == n) for n in ns]
           for b in rows]
    return rows, ns, mat


def write_heatmap(path: str, results: Sequence[dict], title: str, note: Callable[[str], None] = print) -> bool:
    """PNG heatmap of the speed-up over torch.topk per rows x N. Returns False (after ``note``) when matplotlib
    is missing or there is nothing to plot."""
    rows, ns, mat = heatmap_matrix(results)
    if not rows or all(v is None for line in mat for v in line):
        note("no grid cells with both torch and hinted timings: heatmap skipped")
        return False
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        note("matplotlib is not installed (pip install 'gvr-topk[bench]'): heatmap skipped")
        return False
    vals = [[(v if v is not None else float("nan")) for v in line] for line in mat]
    finite = [v for line in vals for v in line if v == v]
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(ns), 1.2 + 0.8 * len(rows)), dpi=120)
    im = ax.imshow(vals, cmap="viridis", aspect="auto", vmin=min(1.0, min(finite)), vmax=max(finite))
    ax.set_xticks(range(len(ns)), [str(n) for n in ns])
    ax.set_yticks(range(len(rows)), [str(b) for b in rows])
    ax.set_xlabel("N (columns per row)")
    ax.set_ylabel("rows")
    mid = (min(finite) + max(finite)) / 2
    for i, line in enumerate(vals):
        for j, v in enumerate(line):
            txt = "-" if v != v else f"{v:.1f}x"
            ax.text(j, i, txt, ha="center", va="center", fontsize=9, color="black" if v == v and v > mid else "white")
    ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, label="speed-up over torch.topk (geomean over K)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def benchmarks_markdown(doc: dict, json_name: str = "gvr_topk_bench.json", png_name: str = "gvr_topk_bench.png"
                        ) -> str:
    """A short BENCHMARKS.md for a saved run: provenance, command, targets with PASS / MISS, suite geomeans.

    Parameters
    ----------
    doc : dict
        The document :func:`write_json` wrote (``json.load``-ed).
    json_name, png_name : str
        File names to link, relative to the markdown file.
    """
    prov = doc.get("provenance", {})
    results = doc.get("cases", [])
    targets = evaluate_targets(results)
    cfg = doc.get("config", {})
    commit = prov.get("git_commit") or "unknown"
    dirty = " (working tree modified)" if prov.get("git_dirty") else ""
    lines = [
        "# gvr-topk benchmark results",
        "",
        f"- GPU: {prov.get('gpu')} ({prov.get('sms')} SMs, L2 {(prov.get('l2_bytes') or 0) / 2**20:.0f} MB), "
        f"driver {prov.get('driver')}",
        f"- Software: torch {prov.get('torch')} (CUDA {prov.get('cuda')}), triton {prov.get('triton')}, "
        f"gvr-topk {prov.get('gvr_topk')}, Python {prov.get('python')}",
        f"- Commit: `{commit}`{dirty}",
        f"- Date: {prov.get('date')}",
        f"- Command: `{' '.join(prov.get('argv') or [])}` ({len(results)} cases, {cfg.get('reps')} timed reps per "
        f"arm, {cfg.get('elapsed_s') or 0:.0f} s)",
        f"- Data: [{json_name}]({json_name}) (every case, every arm: median, p20, p80, exactness); protocol and "
        "columns: `benchmarks/README.md`, method and measurement log: `benchmarks/NOTES.md`",
        "",
        "## Targets (fp32, CUDA-graph replay, L2 flushed before each replay)",
        "",
        "| target | goal | measured | status |",
        "|---|---|---|---|",
    ]
    for t in targets:
        lines.append(f"| {t['label']} | {t['goal']} | {t['text']} | {t['status']} |")
    lines += ["", "## Geomeans by suite", "", "| suite | cases | x torch.topk | / read floor | hint-free / hinted | "
              "invalid / hinted |", "|---|---|---|---|---|---|"]
    for suite in ("grid", "varlen", "adversarial"):
        rs = [r for r in results if r.get("suite") == suite]
        if rs:
            g = [geomean(ratio(r, a, b) for r in rs) for a, b in (("torch", "hinted"), ("hinted", "floor"),
                                                                  ("free", "hinted"), ("invalid", "hinted"))]
            lines.append(f"| {suite} | {len(rs)} | " + " | ".join(_fmt(x, ".2f") + "x" if x else "-" for x in g)
                         + " |")
    lines += ["", f"![speed-up over torch.topk per rows x N]({png_name})", ""]
    return "\n".join(lines)
