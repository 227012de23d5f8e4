"""Developer probe, no GPU: sm_90 instruction counts of the streaming and split kernels (NOTES entry 14).

    python benchmarks/sass_counts.py [NAME ...] [CONSTEXPR=VALUE ...] [--by-function]
        (default: every kernel; names: stage stage_dense stage_sparse stage_late split split_long split_balance
        select select_many select_accept2 select_accept3 select_accept2_short
        select_accept2_short_small_bins select_ladder select_looped threshold coop coop_window coop_balance;
        CONSTEXPR=VALUE replaces one of ``gvr_topk.kernels._common``'s module constexprs, e.g. SAMPLE_LEVELS=1,
        for this compile: the tuning values compiled into the kernels at import, which no launch argument sets;
        or one of the launch constexprs below, e.g. SAMPLE_MAXIMA=512; --by-function: also each kernel's
        instructions by the Python function they were compiled from, the innermost one of the inlined calls)

Compiles the staging, split, select and threshold kernels for sm_90 with ``triton.compile`` (constexprs of a
131075-column, K=2048 launch), disassembles them with the ``nvdisasm`` that ships in Triton's wheel, and prints per
kernel: registers, total instructions, the instructions of each staging loop (a loop that both loads from global
memory and does a global atomic: one iteration is one tile) and the counts of the instruction kinds that were costly
before (shuffles, shared-memory traffic, predicate spills). Run it under the Triton the GPU uses to see that GPU's
code (the H200 machine has Triton 3.6; a wheel of that version can be installed in a separate virtualenv).
"""

import ast
import collections
import functools
import os
import re
import subprocess
import sys
import tempfile
import time

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from gvr_topk import tuning
from gvr_topk.kernels import split
from gvr_topk.kernels import stream
from gvr_topk.launch.common import stage_lanes
from gvr_topk.workspace import coop_words

BASE = dict(K=2048, KB=2048, CAP=8192, SAMPLE=2048, SAMPLE_GROUP=tuning.SAMPLE_GROUP, SAMPLE_MAXIMA=0,
            MIN_TILE=tuning.SELECT_MIN_TILE,
            HINT_FREE=True, VARLEN=False, HAS_VALUES=False, TIE_RUNG=tuning.TIE_RUNG, PDL=tuning.STREAM_PDL,
            ROW_WAIT=tuning.STREAM_ROW_WAIT,
            ACCEPT_LARGE_BIN=tuning.STREAM_ACCEPT_LARGE_BIN, LOW_RUNG=tuning.SPLIT_COOP_LOW_RUNG,
            OUTLINE=tuning.SPLIT_COOP_OUTLINE)
_COOP = dict(TILE=tuning.SPLIT_TILE, SPLIT=65, LANES=stage_lanes(tuning.SPLIT_TILE, tuning.SPLIT_WARPS), SLICE=256,
             COOP_WORDS=coop_words(), PHASE=0, REFINE_TILE=tuning.SPLIT_TILE,
             RANK_MAX=tuning.SPLIT_COOP_RANK_MAX, BALANCE=0, ROWS_BLOCK=1)
#: The split kernels with the staging shared out by row length (``tuning.SPLIT_BALANCE``; varlen launches only), at
#: the benchmark's varlen batch of 16 rows (8 programs per row).
_BALANCED = dict(VARLEN=True, BALANCE=1, ROWS_BLOCK=16, SPLIT=8)
#: (name, kernel, extra constexprs, warps, maxnreg)
_STAGE = dict(TILE=tuning.STREAM_TILE, LANES=stage_lanes(tuning.STREAM_TILE, tuning.STREAM_WARPS))
KERNELS = [
    ("stage", stream._gvr_stage_kernel, dict(_STAGE, STAGE_SPARSE=tuning.STREAM_STAGE_SPARSE), tuning.STREAM_WARPS,
     tuning.STREAM_STAGE_MAXNREG),
    # The other staging loops of ``tuning.STREAM_STAGE_SPARSE``: dense (every row on the short tile takes it), and
    # survivors-only without the look-ahead.
    ("stage_dense", stream._gvr_stage_kernel, dict(_STAGE, STAGE_SPARSE=0), tuning.STREAM_WARPS,
     tuning.STREAM_STAGE_MAXNREG),
    ("stage_sparse", stream._gvr_stage_kernel, dict(_STAGE, STAGE_SPARSE=1), tuning.STREAM_WARPS,
     tuning.STREAM_STAGE_MAXNREG),
    # Survivors-only with the look-ahead and each tile's reservation read a tile later (STREAM_STAGE_SPARSE 3).
    ("stage_late", stream._gvr_stage_kernel, dict(_STAGE, STAGE_SPARSE=3), tuning.STREAM_WARPS,
     tuning.STREAM_STAGE_MAXNREG),
    ("split", split._gvr_split_kernel,
     dict(TILE=tuning.SPLIT_TILE, SPLIT=16, LANES=stage_lanes(tuning.SPLIT_TILE, tuning.SPLIT_WARPS),
          REFINE_TILE=tuning.SPLIT_TILE, BALANCE=0, ROWS_BLOCK=1),
     tuning.SPLIT_WARPS, 0),
    # Shares of two or more short tiles stage through the long tile (``dispatch``; 8 x 131075: 16 programs).
    ("split_long", split._gvr_split_kernel,
     dict(TILE=tuning.SPLIT_TILE_LONG, SPLIT=16, LANES=stage_lanes(tuning.SPLIT_TILE_LONG, tuning.SPLIT_WARPS),
          REFINE_TILE=tuning.SPLIT_TILE, BALANCE=0, ROWS_BLOCK=1),
     tuning.SPLIT_WARPS, 0),
    ("split_balance", split._gvr_split_kernel,
     dict(TILE=tuning.SPLIT_TILE_LONG, LANES=stage_lanes(tuning.SPLIT_TILE_LONG, tuning.SPLIT_WARPS),
          REFINE_TILE=tuning.SPLIT_TILE, **_BALANCED),
     tuning.SPLIT_WARPS, 0),
    ("select", stream._gvr_select_kernel,
     dict(REFINE_TILE=tuning.REFINE_TILE, REFINE_LANES=stage_lanes(tuning.REFINE_TILE, tuning.SELECT_WARPS),
          SELECT_CHUNK=tuning.SELECT_CHUNK, SELECT_PART=tuning.STREAM_SELECT_APART),
     tuning.SELECT_WARPS, 0),
    # The select of a 512-row chunk (8 warps, 128 registers) in one launch, and as ``tuning.STREAM_SELECT_APART``'s
    # accept launches (2: the MIN_TILE and CAP/2 tiles, 3: the CAP/2 tile alone; 2 also as rows on the short staging
    # tile run it past one wave, 4 warps) and its ladder launch.
    *((name, stream._gvr_select_kernel,
       dict(REFINE_TILE=tuning.REFINE_TILE, REFINE_LANES=stage_lanes(tuning.REFINE_TILE, warps),
            SELECT_CHUNK=tuning.SELECT_CHUNK, SELECT_PART=part), warps, maxnreg)
      for name, part, warps, maxnreg in (
          ("select_many", 0, tuning.SELECT_MANY_WARPS, tuning.SELECT_MANY_MAXNREG),
          ("select_accept2", 2, tuning.SELECT_MANY_WARPS, tuning.SELECT_MANY_MAXNREG),
          ("select_accept3", 3, tuning.SELECT_MANY_WARPS, tuning.SELECT_MANY_MAXNREG),
          ("select_accept2_short", 2, tuning.SELECT_MANY_SHORT_WARPS, tuning.SELECT_MANY_SHORT_MAXNREG),
          ("select_ladder", 1, tuning.SELECT_WARPS, 0))),
    # The short-row accept launch without the large crossing bin's refinement (``tuning.STREAM_ACCEPT_LARGE_BIN`` 0).
    ("select_accept2_short_small_bins", stream._gvr_select_kernel,
     dict(REFINE_TILE=tuning.REFINE_TILE, REFINE_LANES=stage_lanes(tuning.REFINE_TILE, tuning.SELECT_MANY_SHORT_WARPS),
          SELECT_CHUNK=tuning.SELECT_CHUNK, SELECT_PART=2, ACCEPT_LARGE_BIN=0),
     tuning.SELECT_MANY_SHORT_WARPS, tuning.SELECT_MANY_SHORT_MAXNREG),
    # The select in loops over 1024-candidate chunks (``tuning.SELECT_CHUNK``), as it runs past one wave.
    ("select_looped", stream._gvr_select_kernel,
     dict(REFINE_TILE=tuning.REFINE_TILE, REFINE_LANES=stage_lanes(tuning.REFINE_TILE, tuning.SELECT_MANY_WARPS),
          SELECT_CHUNK=1024, SELECT_PART=0),
     tuning.SELECT_MANY_WARPS, tuning.SELECT_MANY_MAXNREG),
    ("threshold", stream._gvr_threshold_kernel, {}, tuning.THRESHOLD_WARPS, 0),
    # The split family's cooperative form at 1 x 131075 (65 programs, 256-lane slices), its single launch: with the
    # two barriers of the admitted span's window, and with the row histogram counted while staging
    # (``tuning.SPLIT_COOP_WINDOW``, the default).
    ("coop", split._gvr_split_coop_kernel, dict(_COOP, WINDOW=0), tuning.SPLIT_WARPS, 0),
    ("coop_window", split._gvr_split_coop_kernel, dict(_COOP, WINDOW=1), tuning.SPLIT_WARPS, 0),
    ("coop_balance", split._gvr_split_coop_kernel,
     dict(_COOP, WINDOW=1, TILE=tuning.SPLIT_TILE_LONG, LANES=stage_lanes(tuning.SPLIT_TILE_LONG, tuning.SPLIT_WARPS),
          SLICE=1024, **_BALANCED), tuning.SPLIT_WARPS, 0),
]
WATCH = ("SHFL", "LDS", "STS", "BAR", "P2R", "LDG", "STG", "ATOMG", "LDL", "STL", "LDGSTS", "SYNCS")
_INSN = re.compile(r"\s+/\*[0-9a-f]+\*/\s*(.*?)\s*;")
_LABEL = re.compile(r"\.(L_x_\d+):")


def _bin(name: str) -> str:
    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)


def _opcode(insn: str) -> str:
    return re.sub(r"^@!?U?P\w+\s+", "", insn).split()[0].split(".")[0]


def compile_sass(kernel, constexprs: dict, warps: int, maxnreg: int, line_info: bool = False):
    """(sass text, registers) of ``kernel`` for sm_90; with ``line_info`` the text carries nvdisasm's source-line
    comments (``//## File "...", line N``) from the line table Triton compiles in."""
    names = list(kernel.arg_names)
    const = {k: v for k, v in constexprs.items() if k in names}
    sig = {}
    for n in names:
        if n in const:
            sig[n] = "constexpr"
        elif n.isupper():
            raise ValueError(f"sass_counts: no value for constexpr {n} of {kernel.fn.__name__}")
        elif n.endswith("_ptr"):
            sig[n] = "*fp32" if n in ("logits_ptr", "values_ptr") else "*i32"
        else:
            sig[n] = "i32"
    options = {"num_warps": warps}
    if maxnreg:
        options["maxnreg"] = maxnreg
    compiled = triton.compile(ASTSource(fn=kernel, signature=sig, constexprs=const),
                              target=GPUTarget("cuda", 90, 32), options=options)
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as fh:
        fh.write(compiled.asm["cubin"])
    try:
        flags = ["-c", "-g"] if line_info else ["-c"]
        sass = subprocess.run([_bin("nvdisasm"), *flags, fh.name], capture_output=True, text=True, check=True).stdout
        usage = subprocess.run([_bin("cuobjdump"), "-res-usage", fh.name], capture_output=True, text=True).stdout
    finally:
        os.unlink(fh.name)
    regs = re.search(r"REG:(\d+)", usage)
    return sass, int(regs.group(1)) if regs else -1


def staging_loops(sass: str) -> list:
    """Instruction counts of the loops that load from global memory (to registers, or to shared memory when Triton
    pipelines the loop) and do a global atomic (one per tile), each with its local-memory (spill) loads and stores
    when it has any, e.g. ``309+4LDL/STL``."""
    insns, labels = [], {}
    for line in sass.splitlines():
        m = _LABEL.match(line.strip())
        if m:
            labels[m.group(1)] = len(insns)
        m = _INSN.match(line)
        if m:
            insns.append(m.group(1))
    loops = []
    for i, insn in enumerate(insns):
        m = re.search(r"BRA\s+`?\(?\.(L_x_\d+)", insn)
        if m and labels.get(m.group(1), i + 1) <= i:
            body = insns[labels[m.group(1)]:i + 1]
            if any("ATOMG" in b for b in body) and any(_opcode(b) in ("LDG", "LDGSTS") for b in body):
                spills = sum(_opcode(b) in ("LDL", "STL") for b in body)
                loops.append(f"{len(body)}" + (f"+{spills}LDL/STL" if spills else ""))
    return loops


@functools.lru_cache(maxsize=None)
def _functions(path: str) -> tuple:
    """(first line, last line, name) of every function defined in the Python file at ``path``."""
    try:
        tree = ast.parse(open(path).read())
    except (OSError, SyntaxError):
        return ()
    return tuple((f.lineno, f.end_lineno, f.name) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef))


def _function_at(path: str, line: int) -> str:
    """Name of the innermost function of ``path`` that holds ``line`` ("?" outside any)."""
    inside = [(first, name) for first, last, name in _functions(path) if first <= line <= last]
    return max(inside)[1] if inside else "?"


_LINE = re.compile(r'//## File "([^"]+)", line (\d+)')


def by_function(sass: str) -> collections.Counter:
    """Instructions of ``sass`` (from ``compile_sass(..., line_info=True)``) per Python function they were compiled
    from: each instruction goes to the function holding the source line last named before it. Inlined helpers count
    as themselves (the line is the innermost call's), and Triton's own functions (``cumsum``, the combine functions
    of its reductions) by their names in Triton's sources."""
    counts = collections.Counter()
    where = "?"
    for line in sass.splitlines():
        m = _LINE.search(line)
        if m:
            where = _function_at(m.group(1), int(m.group(2)))
        elif _INSN.match(line):
            counts[where] += 1
    return counts


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    per_function = "--by-function" in args
    args = [a for a in args if a != "--by-function"]
    wanted = {a for a in args if "=" not in a}
    overrides = dict(a.split("=", 1) for a in args if "=" in a)
    launch = {k: int(v) for k, v in overrides.items() if k in BASE}
    if len(launch) < len(overrides):
        from gvr_topk.kernels import _common

        for name, value in overrides.items():
            if name in launch:
                continue
            if not isinstance(getattr(_common, name, None), triton.language.constexpr):
                raise SystemExit(f"sass_counts: {name} is not a module constexpr of gvr_topk.kernels._common")
            setattr(_common, name, triton.language.constexpr(int(value)))
        # A fresh compile cache: under Triton 3.6, compiles with other values of these constexprs in a shared cache
        # returned the first value's code (seen in session 28), so every run of this probe compiles anew.
        os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="sass_counts_")
    print(f"Triton {triton.__version__}, sm_90" + "".join(f", {k}={v}" for k, v in overrides.items()))
    for name, kernel, extra, warps, maxnreg in KERNELS:
        if wanted and name not in wanted:
            continue
        t0 = time.perf_counter()
        sass, regs = compile_sass(kernel, dict(BASE, **extra, **launch), warps, maxnreg, line_info=per_function)
        print(f"{name:10s} compiled in {time.perf_counter() - t0:.1f} s")
        ops = collections.Counter(_opcode(m.group(1)) for m in map(_INSN.match, sass.splitlines()) if m)
        watch = " ".join(f"{k} {ops[k]}" for k in WATCH)
        print(f"{name:10s} warps {warps:2d} regs {regs:3d} instructions {sum(ops.values()):6d} "
              f"staging loop(s) [{', '.join(staging_loops(sass))}]  [{watch}]")
        if per_function:
            counts = by_function(sass)
            total = max(sum(counts.values()), 1)
            print("  " + ", ".join(f"{f} {v} ({100 * v / total:.0f}%)" for f, v in counts.most_common(12)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
