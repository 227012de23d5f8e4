"""Tuning constants as data, with where each value came from.

Every number that steers dispatch or launch geometry lives here, so a re-tune is a data change reviewed in one
place. ``PROVENANCE`` says how the current values were obtained; update it with the GPU, date and command whenever
a value is re-measured (see ``benchmarks/NOTES.md`` for the measurements themselves).
"""

PROVENANCE = {
    "source": "initial values derived from the reference design (GVR V2 on B200) and re-scaled for 132 SMs; "
              "see benchmarks/NOTES.md for the H200 measurements that confirm or replace them",
    "gpu": "NVIDIA H200 (132 SMs, 60 MB L2)",
    "date": "2026-11-30",
    "command": "python -m benchmarks.bench_gvr_topk",
}

#: SM count the thresholds are written for (H200). ``route`` scales by the real count when it is given.
DEFAULT_NUM_SMS = 132

# --- register-resident family ("reg") -------------------------------------------------------------
#: Largest row (columns) held in one program's registers.
REG_MAX_N = 16384
#: Smallest register tile (a power of two); shorter rows are padded up to it.
REG_MIN_BLOCK = 1024
#: num_warps by register tile size: tile <= key -> warps.
REG_WARPS = ((2048, 4), (4096, 8), (8192, 16), (16384, 16))

# --- streaming families ("stream", "split") -------------------------------------------------------
#: Candidate capacity (survivors staged per row) by K: the smallest entry whose k_max >= K.
#: Capacity is 4 K (at least 4096) so a sample that misjudges the survivor count by 2x still fits.
CAP_BY_K = ((1024, 4096), (2048, 8192))
#: Survivors the sample threshold aims for, as a fraction of the capacity.
AIM_FRACTION = 0.5
#: Sampled scores above the aimed threshold (sets the sample size; relative error ~ 1/sqrt of it).
SAMPLE_ABOVE = 64
#: Sample size bounds (powers of two; sampled in groups of 8 adjacent scores = one 32-byte sector).
SAMPLE_MIN, SAMPLE_MAX = 512, 4096
#: Scores streamed per loop iteration, and warps, for one-program-per-row streaming.
STREAM_TILE = 2048
STREAM_WARPS = 8
#: Most programs the streaming family launches (grid-stride over rows beyond it); bounds its workspace.
STREAM_MAX_PROGRAMS = 4 * DEFAULT_NUM_SMS

# --- split family ---------------------------------------------------------------------------------
#: Split a row over several programs only up to this many rows (beyond, one program per row saturates the GPU).
SPLIT_MAX_ROWS = 32
#: Programs the split family aims to launch in total (all rows together).
SPLIT_TARGET_PROGRAMS = 2 * DEFAULT_NUM_SMS
#: Bounds on programs per row, and the fewest scores each program should stream.
SPLIT_MIN, SPLIT_MAX = 2, 64
SPLIT_MIN_CHUNK = 4096
SPLIT_TILE = 2048
SPLIT_WARPS = 8
#: Largest crossing bin (candidates sharing the K-th score's histogram bin) refined on a compacted small tile.
#: Decode-like rows put a few dozen candidates there; larger bins are refined in place on the staged tile.
CROSS_CAP = 512
