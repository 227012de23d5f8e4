"""Tuning constants as data, with where each value came from.

Every number that steers dispatch or launch geometry lives here, so a re-tune is a data change reviewed in one
place. ``PROVENANCE`` says how the current values were obtained; update it with the GPU, date and command whenever
a value is re-measured (see ``benchmarks/NOTES.md`` for the measurements themselves).
"""

PROVENANCE = {
    "source": "register family: initial values derived from the reference design (GVR V2 on B200) re-scaled for 132 "
              "SMs; streaming families (capacity, aim, tiles, warps, split, chunk): measured on the H200 with "
              "benchmarks/probe_stream2.py (since removed; in git history) on the benchmark's decode data "
              "(benchmarks/NOTES.md, entries 4-6); "
              "sample group and aim margin: host simulation of the sample threshold on the benchmark's decode rows, "
              "then benchmarks/probe_sample.py and the quick benchmark on the H200 (NOTES entry 8); sample size cap, "
              "smallest select tile and select warps: benchmarks/probe_sample.py on the H200 (two runs, one process "
              "each, NOTES entry 10); staging programs, warps and tile re-checked the same way (entry 11); split "
              "programs and warps, one-warp staging, the select's register cap past one wave and the split family "
              "at 64 short rows: probe_sample.py in four device calls (entry 12); the streaming chunk of 512 rows: "
              "probe_sample.py (entry 13); the staging kernel's register cap and short-row tile: "
              "benchmarks/probe_stage.py and probe_sample.py (entry 14); the tie rung: probe_sample.py --data "
              "(entry 15); the sample and select histogram shapes: benchmarks/probe_ab.py over exported revisions and "
              "benchmarks/sim_survivors.py --levels (entry 16); the streaming family's programmatic dependent "
              "launch and the split family's cap of 128 programs per row: probe_ab.py over exported revisions "
              "(entry 17); the split family's cooperative form and its routing rule: probe_ab.py over exported trees "
              "(entry 18); the split family's tile look-ahead (entry 19) and long staging tile: probe_sample.py, "
              "then probe_ab.py over exported trees (entry 20); the streaming family's per-row waits (entry 23) and "
              "the split family's cooperative sample window and aim bound (entry 24): probe_sample.py; the "
              "cooperative row histogram's bits and the finisher's rank bound (entry 27): probe_ab.py over exported "
              "trees; the streaming select's geometry past one wave on short rows (entry 28): probe_sample.py, then "
              "probe_ab.py; the register family's routing edge, warps, register cap and radix bits (entries 30-31): "
              "probe_families.py --families, then probe_ab.py over exported trees; the register family's tail tile "
              "(entry 32): probe_ab.py over exported trees; its hint-free bracket from group maxima, its tail-tile "
              "warps within one wave and its ignored hint (entry 33): probe_ab.py over exported trees, then "
              "gvr-topk bench --suites grid --n 4111,8192 on two trees",
    "gpu": "NVIDIA H200 (132 SMs, 60 MB L2), driver 580.159.04, torch 2.11, Triton 3.6",
    "date": "2026-12-04",
    "command": "python benchmarks/probe_stream2.py --quick; python benchmarks/probe_primitives.py; "
               "python benchmarks/probe_sample.py --arms ... --cells ... (the arms and cells of NOTES entries 10-12); "
               "python benchmarks/probe_stage.py; python benchmarks/probe_ab.py --rev DIR,... --no-new --cells ...; "
               "python benchmarks/probe_families.py --families reg,stream,split --cells ...; "
               "python benchmarks/bench_gvr_topk.py --quick",
}

#: SM count the thresholds are written for (H200). ``route`` scales by the real count when it is given.
DEFAULT_NUM_SMS = 132

# --- register-resident family ("reg") -------------------------------------------------------------
#: Largest row (columns) held in one program's registers: the limit of ``family="reg"`` (forced launches, the
#: TensorRT plugin's register tactic).
REG_MAX_N = 16384
#: Longest row ``route`` gives the register family. 8192 (was REG_MAX_N): the 16384-column tile lost to the other
#: families at every row count from 10000 columns on (H200, probe_families.py, NOTES entry 30: 1 / 8 / 64 x 10000
#: K=2048 reg 37.5 / 46.8 / 47.1 us, split 32.3 / 32.2 / 37.2; 256 / 512 x 10000 reg 100.2 / 186.2, stream 67.8 /
#: 82.7; 512 x 16384 reg 189.9, stream 82.4), while the 8192 tile beat them at every row count measured
#: (NOTES entry 31: 8 - 512 x 4111 and 128 - 512 x 8192, stream 1.5-2x slower, split slower still).
REG_ROUTE_MAX_N = 8192
#: Smallest register tile (a power of two); shorter rows are padded up to it.
REG_MIN_BLOCK = 1024
#: Smallest tail tile of the register family. A row of n columns, T / 2 < n <= 3 T / 4 (T the power-of-two tile it
#: would need), is held in a T / 2 tile plus a tail tile of pow2_ceil(n - T / 2) lanes (at least this many), at most
#: T / 4: fewer lanes for every radix level, for one more reduction and histogram per level on the small tile. H200,
#: probe_ab.py, NOTES entry 32, hint-free against the single tile: 512 x 4111 K=2048 70.7 -> 45.2 us, 1 x 4111 20.3
#: -> 15.9, 512 x 6000 (tail 2048) 73.9 -> 63.8, 512 x 2100 K=512 38.7 -> 24.5; one loss, 1 x 3000 K=1024 13.5 ->
#: 14.4 (its 2048 tile runs 4 warps where the 4096 tile ran 8).
REG_TAIL_MIN = 16
#: num_warps by register tile size: tile <= key -> warps. The 8192 tile: 8 warps (was 16) with REG_MAXNREG, so two
#: programs share an SM (NOTES entry 31: with RADIX_BIN_BITS 5, 512 x 4111 K=2048 86.4 -> 71.0 us, K=512 85.8 ->
#: 65.8, 512 x 8192 92.2 -> 74.2; 1 and 64 rows within +-2.6 us). 4 warps measured 1.3-4.9x slower. With a tail
#: tile (REG_TAIL_MIN) a launch of at most one program per SM looks up the main tile plus the tail, past that the
#: main tile alone: H200, probe_ab.py, NOTES entry 33, hint-free, 2048 + 1024 lanes at 8 instead of 4 warps: 1 x 3000
#: K=1024 14.5 -> 12.4 us, 1 x 2100 K=512 12.7 -> 11.1, but 512 x 2100 K=512 24.6 -> 34.9, 512 x 3000 33.5 -> 34.1.
REG_WARPS = ((2048, 4), (4096, 8), (8192, 8), (16384, 16))
#: Whether the register family reads the hint (``pre_idx``) at all. False: every launch of the family compiles
#: HINT_FREE, its bracket the smallest of the tile's group maxima, and a hint is accepted and ignored (the contract
#: lets a hint change speed only). The hint costs K index loads, K scattered score loads and a count, and with the
#: group-maxima bracket it no longer pays. H200, NOTES entry 33, the benchmark's grid at 4111 and 8192 columns, the
#: hint read (commit 4d00c3b) against ignored, one process each: hint-free at least as fast as hinted in 23 of 24
#: cells (1 x 8192 K=512 18.0 / 21.7 us, 512 x 4111 K=2048 44.7 / 47.6; the exception 64 x 8192 K=512, 24.7 /
#: 22.6), hinted geomean over torch.topk 1.865x -> 1.952x. True: the hinted bracket (``kernels/reg.py``).
REG_USE_HINT = False
#: Register cap per thread of the register family's programs (Triton ``maxnreg``): 128 lets two 8-warp programs
#: (or one of 16 warps) reside per SM. H200, probe_ab.py, NOTES entry 31 (measured together with REG_WARPS above).
REG_MAXNREG = 128

# --- streaming families ("stream", "split") -------------------------------------------------------
#: Candidate capacity (survivors staged per row) by K: the smallest entry whose k_max >= K.
#: 8192 for every K: chosen when the sample read groups of 8 adjacent scores, whose survivor counts spread 0.36x-2x
#: around the aim on the benchmark's decode rows (runs of related tokens), so the slot had to hold ~4x K at K=2048.
#: Single-score groups (SAMPLE_GROUP) spread far less; a smaller capacity has not been measured.
CAP_BY_K = ((2048, 8192),)
#: Survivors the sample threshold aims for: K + AIM_MARGIN, at most AIM_MAX_FRACTION of the capacity.
#: 1024 with single-score sample groups: simulated on the benchmark's decode rows (768 rows: 64 per cell, n 16K-256K,
#: K 512-2048) the survivor count stays within 0.83-1.22x of its aim, so K + 1024 keeps every row above K and within
#: half the capacity (the half-tile select). With 8-score groups it spread 0.48-1.82x and needed K + 2048.
AIM_MARGIN = 1024
AIM_MAX_FRACTION = 0.5
#: Sampled scores above the aimed threshold (sets the sample size; relative error ~ 1/sqrt of it).
SAMPLE_ABOVE = 64
#: Sample size bounds (powers of two). SAMPLE_MAX 2048 (was 4096): measured on the H200 (NOTES entry 10) faster in
#: all 8 probed cells (-2 to -11 us; 1-row cells -2 to -4 us, 512 x 131075 -21 to -26 us) with every output exact;
#: simulated on 64 decode rows per cell (n 16K-256K), no row under K and none past half the capacity at K=2048.
#: 1024 measured again with the re-aimed retry rung (NOTES entry 21, probe_sample.py ``x1024``): -7 to -10% at 1-8
#: rows and 512 x 131075 K=512, but some K=2048 rows fall under K and restage (64 x 131075 K=2048 59 -> 122 us).
SAMPLE_MIN, SAMPLE_MAX = 512, 2048
#: Adjacent scores per sample group (a power of two <= SAMPLE_MIN). Groups of 8 read one 32-byte sector per 8
#: samples but see correlated runs of tokens; single scores cost 8x the sample's sectors (128 KB at 4096 samples)
#: and estimate the row's quantile far better (see AIM_MARGIN).
SAMPLE_GROUP = 1

#: Histogram levels of the sample threshold and bits per level (2**bits bins). Triton lowers ``tl.histogram`` to a
#: ballot per bit of the bin index plus, per bin a thread owns (bins / 32), a mask and a popcount, for every score:
#: ~46 sm_90 instructions per score at 256 bins (NOTES entry 14), so fewer bins per level cost less per score.
#: These three values are compiled into the kernels when ``gvr_topk.kernels`` is imported (module constexprs), so
#: changing them at run time changes only the host mirror (``reference.sample_threshold``): edit them here.
#: 2 levels of 256 bins. 128 bins per level: host simulation (``sim_survivors.py --levels``) keeps the survivor
#: spread (64 x 131075 K=2048: 0.89-1.15x the aim either way) and probe_ab.py on the H200 (NOTES entry 16) measured
#: it level with 256 on decode rows (5 cells, geomean over torch.topk 3.01x / 2.99x, with SELECT_BIN_BITS 7) but 1.8x
#: slower on the benchmark's Cauchy rows (8 x 131075 K=2048 35.0 -> 64.6 us; cause not found, the host mirror agrees
#: with the GPU's thresholds on Cauchy rows). 3 levels of 64 and 4 of 32 bins measured slower on decode rows.
SAMPLE_LEVELS = 2
SAMPLE_BIN_BITS = 8
#: The sample threshold stops after a level whose crossing bin holds at most ``rank / SAMPLE_STOP_DIV`` sampled keys
#: (0: every level runs). The threshold is then that bin's lower edge: at most that many more sampled keys reach it
#: than the rank asks for, so the aimed survivor count rises by at most ~1 / SAMPLE_STOP_DIV and never falls (no row
#: is pushed under K), for one dependent histogram, scan and reduction less per row where the first level already
#: resolves the rank (most of the threshold kernel's instructions, NOTES entry 34). Compiled into the kernels like
#: the two values above. Alone it rarely fires: host simulation on 64 decode rows per cell, D = 8, stops 0-3% of
#: rows at 131075 columns (the first window spans the whole sample); with SAMPLE_LOW_GROUPS = 128 below, 92-100%,
#: survivor spread within a few hundredths of today's (NOTES entry 35). 0 until measured on the GPU.
SAMPLE_STOP_DIV = 0
#: The sample threshold's first window starts at the smallest of SAMPLE_LOW_GROUPS group maxima of the sample
#: (group j: sampled keys j, j + G, j + 2 G, ...) instead of the sample's minimum, when the rank is at most G: G
#: disjoint groups' maxima are G distinct keys, so the smallest is at most the G-th largest, at most the rank-th.
#: 0: the minimum. Compiled in like the values above; 0 until measured on the GPU (NOTES entry 35).
SAMPLE_LOW_GROUPS = 0
#: Group maxima the sample threshold's histogram levels run over where SAMPLE_MAXIMA_MAX_ROWS below applies them
#: (group j: sampled keys j, j + G, ...; spread over the whole row), at the rank among them that stands for the
#: sample's rank (``reference.maxima_rank``), instead of every sampled key: the levels' ballot-lowered histograms,
#: most of the threshold kernel's instructions (NOTES entry 34), then count G keys instead of SAMPLE, while the
#: sample's loads, and so its information about the row's upper tail, stay the same. 0 or a power of two; a launch
#: parameter (``Plan.maxima``), not compiled in. Offline sm_90 code of the threshold kernel (Triton 3.6): 2688 ->
#: 1120 / 1440 instructions at 256 / 512 maxima. H100, probe_ab.py, hint-free (NOTES entry 48), 512 maxima against
#: every key: -10% at 1 x 131075 K=2048, -4 to -6% at 8-128 rows of 65536-131075 columns, -1% at 512 rows, +3% at
#: 1 x 16387 K=2048, +2 to +3% on three adversarial kinds at 512 x 131075; 256 maxima smaller gains and one
#: adversarial cell 3.5x slower. The threshold kernel alone at 512 x 131075 took 44.7 -> 40.8 us at 256: its
#: sample loads, not its histograms, set its time there.
SAMPLE_MAXIMA = 512
#: Launches (the streaming family's chunk) of at most this many rows run the sample threshold over SAMPLE_MAXIMA
#: group maxima, larger ones over every sampled key (``dispatch.sample_maxima``); 0: never. 128: the rows where
#: the maxima gain. probe_ab.py in one process, 128 against 0 (NOTES entry 50), on the H200: 0.890-0.977 on 8
#: decode cells of 1-128 rows (1 x 131075 K=2048 -9%, 128 x 65536 K=1024 -7%, 64 x 131075 K=2048 -5%), 0.93-0.99
#: on four adversarial kinds at 8 and 128 x 131075, 0.994 at 1 x 16387 (a 512-key sample: the same keys either
#: way), 512 rows unchanged (0.996; there the maxima measured +2 to +3% on adversarial rows, entry 48). The H100:
#: 0.911-0.982, 0.95-0.99.
SAMPLE_MAXIMA_MAX_ROWS = 128
#: Bits of the staged select's first histogram over the candidates' key window. 7 (was 8): the crossing bin roughly
#: doubles (host replay of the benchmark's decode rows: at most 332 candidates at 64 x 131075 K=2048, under
#: CROSS_CAP) and is refined on the small compacted tile, while the histogram over 2048-8192 lanes costs less.
#: Measured on the H200 (probe_ab.py, NOTES entry 16): with 7-bit sample levels faster than 8 in 10 of 10 cells
#: (geomean over torch.topk 2.87x -> 3.04x); with 8-bit sample levels level with that on 5 cells (2.99x / 3.01x).
#: 6 bits (crossing bins up to ~600, CROSS_CAP 1024) measured slower than 7.
SELECT_BIN_BITS = 7
#: Bits per level of the exact radix select on a register tile (``_common._radix_kth_tiles``: the ``reg`` family's whole
#: row, the streaming families' crossing-bin refines). Each level histograms the whole tile, masked lanes included.
#: 5 (was 8): fewer bins per thread, more levels. H200, probe_ab.py, 13 cells x decode / all-equal rows (NOTES
#: entry 31): level with 8 alone (geomean over torch.topk 1.94x -> 1.98x; 6 and 7 bits 1.97x / 1.98x), and with the
#: 8-warp capped register tile (REG_WARPS, REG_MAXNREG) 2.08x, where 8 warps and the cap alone gave ~-10% at 512
#: rows against -18 to -23% with 5 bits. Streaming and split cells moved -1.6 to +0.5 us.
RADIX_BIN_BITS = 5

# --- streaming family (three kernels: threshold, stage, select) -------------------------------------
#: Scores per loop iteration of the staging kernel, and its warps. One warp per program (was 4 warps, 2048-score
#: tiles): the per-tile block reduction, atomic and scan then need no barrier across warps, so the many resident
#: one-warp programs drift apart and hide each other's load latency. Measured on the H200 (probe_sample.py arm
#: ``s1/i1024/p2048``, NOTES entry 12): 512 x 131075 K=2048 445 -> 320 us, K=512 308 -> 258, 64 x 131075 86.5 ->
#: 68.6, 512 x 16387 148.6 -> 139.4; 2-warp programs and 512-score tiles were slower at 131075 columns.
STREAM_TILE = 1024
STREAM_WARPS = 1
#: Staging tile for rows of at most STREAM_TILE_SHORT_MAX_N columns: a program's share there is a few tiles, and
#: 512-score tiles (80 registers) beat 1024 (NOTES entry 14, H200: 512 x 16387 K=2048 94.2 -> 89.7 us, K=512 70.8
#: -> 65.2; 256 x 65536 equal, 512 x 131075 slower).
STREAM_TILE_SHORT = 512
STREAM_TILE_SHORT_MAX_N = 32768
#: Register cap per thread of the staging kernel (0: none). The 2-D staging tile (NOTES entry 14) compiles to 168
#: registers on Triton 3.6; capped at 128 (no spills) more one-warp programs stay resident per SM. Measured on the
#: H200 (probe_sample.py arm ``l128``): 512 x 131075 K=2048 228.1 -> 186.3 us, K=512 205.9 -> 164.4, 64 x 131075
#: K=2048 61.4 -> 56.6, 128 x 131075 82.7 -> 72.2.
STREAM_STAGE_MAXNREG = 128
#: Warps of the per-row threshold and selection kernels. SELECT_WARPS 16 (was 8): faster or equal in every streaming
#: cell of two probe runs on the H200 (NOTES entry 10; 64 x 131075 -4 to -8%, 512 x 131075 -1%); the select then
#: compiles to 128 registers per thread instead of 255, one 512-thread program per SM either way.
#: THRESHOLD_WARPS 4: against 2 and 8 on the H200 (probe_ab.py, NOTES entry 34; five streaming cells, 64-512 rows):
#: 2 warps +19 to +24% on the 64- and 128-row cells (64 x 131075 K=2048 45.2 -> 53.9 us), 8 warps level (-0.6 to
#: +1.7%).
THRESHOLD_WARPS = 4
SELECT_WARPS = 16
#: Select kernel of a chunk with more rows than SMs (two waves of one program per SM otherwise): 8 warps capped at
#: 128 registers per thread (spilling), so two programs share an SM. Measured on the H200 (arm ``w8/n128``, entry
#: 12): 512 x 16387 K=2048 147.0 -> 126.6 us, K=512 110.9 -> 94.7, 512 x 131075 K=2048 443 -> 423; at 64 rows
#: (one wave) it lost 86.1 -> 91.1, hence only past the SM count. 4 warps uncapped lost.
SELECT_MANY_WARPS = 8
SELECT_MANY_MAXNREG = 128
#: The same select past the SM count for rows on the short staging tile (n <= STREAM_TILE_SHORT_MAX_N): 4 warps
#: capped at 128 registers, four programs per SM, so a 512-row chunk's selects fit the GPU in one wave. Measured on the
#: H200 (NOTES entry 28, us): probe_sample.py arm ``v4/n128`` against the defaults, 512 x 16387 K=512 59.5 -> 54.3,
#: K=2048 68.2 -> 65.8, but 512 x 131075 K=2048 152.8 -> 158.2 (hence short rows only; 4 warps uncapped lost at both
#: lengths, +16% at 16387 K=2048, +8% at 131075); the rule in probe_ab.py against 428955f, 512 x 16387 K=512 60.1 ->
#: 55.2, K=2048 68.5 -> 65.2, the 131075-column cells unchanged. Its cost: rows of a few distinct values at 512 x
#: 16387 got slower (K=2048 135.3 -> 150.8, K=512 138.6 -> 162.3; torch.topk 176-180), read (not timed by phase) as
#: their crossing bin past CROSS_CAP refined on the CAP/2-lane tile by 4 warps instead of 8; all-equal rows, which
#: overflow CAP/2 and go to the ladder launch (SELECT_WARPS), did not move.
SELECT_MANY_SHORT_WARPS = 4
SELECT_MANY_SHORT_MAXNREG = 128
#: Scores per loop iteration of the single-program passes of the retry ladder (restaging, the exact whole-row path)
#: in the select kernel, and the warps of the TensorRT plugin's one-program-per-row exact kernel: the staging tile
#: and warps these were measured with (entry 6) before the staging pass went to one-warp programs.
REFINE_TILE = 2048
#: The retry ladder's tie rung (``_common._refine_row``): a staging that overflowed the slot on ties at its threshold
#: (all-equal rows, a few distinct values, -inf padding) restages above the tied key and scans for the lowest-column
#: ties, instead of the exact whole-row path's min/max, radix and emission passes. Measured on the H200 (NOTES entry
#: 15, probe_sample.py arms h0/h1, 8 x 131075 K=2048 / 1 x 131075 K=512): all equal 206.0 -> 86.0 / 183.6 -> 76.4 us,
#: four distinct values 496.5 -> 96.7 / 475.0 -> 87.5, -inf tails 781.9 -> 91.2 / 756.9 -> 92.8; decode rows never
#: take it.
TIE_RUNG = True
EXACT_ROW_WARPS = 4
#: Staging programs the family aims to launch per chunk (split per row = ceil(this / rows)), and the fewest
#: scores each should stream. 2048 one-warp programs (entry 12; with 4-warp programs 512 was best, entry 11).
STREAM_TARGET_PROGRAMS = 2048
STREAM_MIN_CHUNK = 4096
STREAM_SPLIT_MAX = 64
#: Fewest staging programs per row (0: no floor beyond one), still bounded by STREAM_MIN_CHUNK and STREAM_SPLIT_MAX.
#: At the target of 2048 programs a 512-row chunk gets 4 per row; 6 (``probe_sample.py`` arm ``L6``) raises only
#: chunks of more than 409 rows. Measured on an H100 (NOTES entry 39, as STREAM_TARGET_PROGRAMS 3072): 512 x 131075
#: K=2048 180.7 -> 177.3 us, K=512 167.2 -> 163.0, 512 x 65536 132.1 -> 129.6, while more programs at 128-256 rows
#: cost +1 to +2 us (which this floor leaves alone). Off: on the H200 (NOTES entry 47, efd6366, interleaved both
#: ways) the same cells came out level, 148.9 -> 149.1 us, 135.0 -> 134.2, 114.6 -> 115.4.
STREAM_MIN_SPLIT = 0
#: Rows per launch chunk: bounds the workspace (CHUNK x CAP staging slots, 32 MB at CAP 8192) whatever the batch.
#: 512 (was 256): measured on the H200 (probe_sample.py arm ``r512``, NOTES entry 13) 512 x 16387 K=2048 119.8 ->
#: 100.0 us, K=512 96.2 -> 81.7, 512 x 131075 K=2048 294.9 -> 273.3, K=512 239.1 -> 227.6; 64 and 256 rows
#: unchanged (one chunk either way). Each chunk is three dependent launches whose ramps and tails do not overlap.
STREAM_CHUNK_ROWS = 512

#: Programmatic dependent launch of the stage and select kernels (Hopper and later, compiled kernels only): each is
#: scheduled while the kernel before it drains and waits for it at its start (``kernels/stream.py``), so a chunk's
#: three launches keep stream order without a full launch gap between them. Measured on the H200 (probe_ab.py, NOTES
#: entry 17; arms with and without it in one process): 512 x 16387 K=2048 87.7 -> 85.6 us, 64 x 131075 K=2048 52.7 ->
#: 51.7, K=512 43.6 -> 42.9, 512 x 131075 level: small (the gaps it hides are ~1-2 us), kept as faster or level in
#: every cell it changes.
STREAM_PDL = True

# --- split family ---------------------------------------------------------------------------------
#: Split a row over several programs only up to this many rows (beyond, one program per row saturates the GPU),
#: and up to SPLIT_MAX_ROWS_SHORT rows of at most SPLIT_SHORT_MAX_N columns (at two programs per row, 64 rows fill
#: the SMs once). Measured on the H200 (arm ``u64``, entry 12): 64 x 16387 K=2048 45.4 -> 35.7 us, K=512 33.1 ->
#: 30.4, 64 x 32771 50.7 -> 48.0, but 64 x 65536 60.5 -> 67.1 and 128 x 16387 (two waves) 51.6 -> 64.0; the bound
#: on N lies between the measured gain and loss.
SPLIT_MAX_ROWS = 32
SPLIT_MAX_ROWS_SHORT = 64
SPLIT_SHORT_MAX_N = 49152
#: Programs the split family aims to launch in total (all rows together).
#: One per SM (was 2 per SM): a split program compiles to 128 registers x 16 warps or 255 x 8, so one program fills
#: an SM and every program past the SM count waits for a first-wave program to finish. Measured on the H200
#: (probe_sample.py arm ``q132``, NOTES entry 12): 8 x 131075 K=2048 57.1 -> 42.6 us, 16 rows 65.4 -> 53.7, 32 rows
#: 96.2 -> 77.6; 1 row and n = 16387 unchanged.
SPLIT_TARGET_PROGRAMS = DEFAULT_NUM_SMS
#: Bounds on programs per row, and the fewest scores each program should stream. SPLIT_MIN_CHUNK 2048 (was 4096):
#: one tile per program where the SMs allow it; measured with ``q132/k2048`` (entry 12) 1 x 131075 K=2048 33.7 ->
#: 32.2 us, 8 x 16387 K=2048 27.9 -> 25.8 us, the other split cells within 0.4 us.
#: SPLIT_MAX 128 (was 64): a row of 131075 columns is 65 tiles, so 64 programs streamed two tiles each in 33 of them
#: while 31 had nothing to stream; 65 programs stream one each. Measured on the H200 (probe_ab.py, NOTES entry 17):
#: 1 x 131075 K=512 20.3 -> 19.7 us, K=2048 29.8 -> 29.3 (inside the 1-row cells' +-4% noise; the other cells do
#: not change plan).
SPLIT_MIN, SPLIT_MAX = 2, 128
SPLIT_MIN_CHUNK = 2048
#: Scores per staging loop iteration of a split program (also the tile of its retry ladder), and the larger tile its
#: staging takes when the program's share holds at least SPLIT_TILE_LONG columns (``dispatch``; shares are whole
#: SPLIT_TILE tiles). Each staged tile reserves its slot positions with one atomic whose result returns from L2
#: before the tile's stores, so a share of several tiles pays fewer round trips in larger tiles. 4096 for every
#: share (probe_sample.py ``d4096``, NOTES entry 20) lost at 1 x 131075 K=2048 (33 programs of one long tile instead
#: of 65 of one short tile: 20.67 -> 21.12 us), hence the rule on the share. The rule measured on the H200
#: (probe_ab.py, entry 20, hint-free, us, same process, 14/14 outputs exact): 8 x 131075 K=2048 27.6 -> 27.3,
#: K=512 24.9 -> 24.5, 64 x 16387 K=2048 31.7 -> 30.9, K=512 level (24.5), 32 x 131075 K=2048 46.8 -> 43.3,
#: 16 x 65536 K=2048 32.1 -> 29.6, 1 x 131075 (short tile either way) level; heavy-tailed rows 27.8 -> 27.5,
#: all-equal rows (the tie rung) 87.0 -> 90.6.
SPLIT_TILE = 2048
SPLIT_TILE_LONG = 4096
#: Warps per split program, every row length. Was 16 for rows past 65536 columns (measured better at 33 programs of
#: two tiles per row, NOTES entry 6); with one program per SM and per tile, 8 warps won at every probed split cell
#: (arm ``l8``, entry 12): 1 x 131075 K=512 30.1 -> 26.0 us, K=2048 34.4 -> 33.3, 8 x 131075 39.8 -> 33.4 and
#: 43.4 -> 40.1, 32 x 131075 K=2048 80.8 -> 67.6.
SPLIT_WARPS = 8
#: 1: a varlen launch shares its staging out by row length instead of SPLIT programs per row: of the grid's
#: SPLIT x rows programs each long row gets 1 + (programs - long rows) x its tiles / all tiles (at most its tiles),
#: so a batch of rows of equal length keeps SPLIT per row and a batch of mixed lengths gives its longest rows more
#: (``kernels/_common._balanced_shares``, host mirror ``reference.balanced_shares``). The split family's time is
#: set by its longest row's share: the benchmark's varlen batch of 4 requests x next_n 4 (16 rows of up to 131072
#: columns, 46,541 on average; 4 rows of at most K) streams 16,384 scores per program of its longest rows at 8 per
#: row, 12,288 with the shares (14 programs for each of those rows). Measured on an H100 80GB HBM3 (no H200 was
#: lent; NOTES entry 41, 2026-12-06, `probe_sample.py --arms defaults,D1 --reps 25`, hint-free, cold L2, us, off -> on):
#: varlen/b4xnn4/cr4 K=2048 37.0 -> 28.6; 1 x 131075 K=2048 18.4 -> 18.1, 8 x 131075 K=2048 24.8 -> 25.1, 8 x 16387
#: K=512 17.7 -> 17.7, 16 x 65536 K=2048 29.2 -> 29.5 (rows of one length: the same shares); all exact.
SPLIT_BALANCE = 1
#: The split family's cooperative form (``kernels/split.py``): "fused" (one cooperative launch whose programs meet
#: at spin barriers and share the selection; Triton's interpreter runs it as two or three launches), "phased"
#: (those launches on the GPU too), "off" (the last program of a row selects alone). ``dispatch`` uses it for rows
#: whose sample aims past SPLIT_COOP_AIM_ABOVE survivors with at least SPLIT_COOP_MIN_SPLIT programs, every program
#: of the grid resident at once. Measured with two barriers (before SPLIT_COOP_WINDOW) on the H200 (probe_ab.py,
#: NOTES entry 18, hint-free, us, plain -> fused, rows aiming past SELECT_MIN_TILE): 1 x 16387 K=2048 24.7 -> 19.5,
#: 1 x 131075 K=2048 28.6 -> 21.0, 8 x 16387 K=2048 25.7 -> 21.6, 8 x 131075 K=2048 33.5 -> 32.3. Without the rule
#: it lost then: 1 x 16387 K=512 18.4 -> 19.7, 1 x 131075 K=512 19.6 -> 21.2, 8 x 131075 K=512 26.2 -> 31.3, 64 x 16387
#: K=2048 (2 programs per row) 31.6 -> 36.8; 1 x 65536 K=1024 level (19.9 -> 19.5). Three launches ("phased")
#: lost to one in 7 of 8 cells.
SPLIT_COOP = "fused"
SPLIT_COOP_MIN_SPLIT = 8
#: The rule's bound on the aim: the cooperative form only for rows that aim at more survivors than this. Was 2048,
#: the smallest select tile (SELECT_MIN_TILE: a row aiming within it was selected faster by its lone finisher on
#: that tile, see above). 0 (every aim) since the form needs one barrier (SPLIT_COOP_WINDOW). Measured on the H200
#: (probe_sample.py ``H1`` / ``H1/M0``, NOTES entry 24, hint-free, us): 1 x 16387 K=512 17.7 -> 16.6, 1 x 131075
#: K=512 21.0 -> 19.0, 1 x 65536 K=1024 20.0 -> 17.4, 8 x 16387 K=512 18.1 -> 17.9, 8 x 131075 K=512 level (24.7).
SPLIT_COOP_AIM_ABOVE = 0
#: The cooperative form's row histogram over a window from the row's sample (its threshold to its largest key),
#: counted while staging (one relaxed atomic per admitted score), instead of over the admitted scores' own span
#: after a first barrier (each program histograms its slice of the staged candidates, then a second barrier):
#: 1 on, 0 off. Every program computes the same sample, so the window needs no communication, and one barrier,
#: two scratch round trips and the slice histograms leave the critical path. Measured on the H200 (probe_sample.py
#: ``H0`` / ``H1``, NOTES entry 24, two calls, hint-free, us): 1 x 16387 K=2048 17.5 -> 16.1, 1 x 131075 K=2048
#: 20.4 -> 19.1 and 21.2 -> 19.3, 8 x 16387 K=2048 20.6 -> 17.9, 8 x 131075 K=2048 26.6 -> 25.5; the cells that do
#: not take the cooperative form moved -1.5 to +1.0 (the probe's noise).
SPLIT_COOP_WINDOW = 1
#: The retry ladder's first rung (a lower sample rank) shared by the cooperative form's programs, for a staging
#: that admitted fewer than K scores: every program restages its share and the programs meet at a second row
#: barrier (``kernels/split.py``, ``_coop_low_rung``), instead of the finisher's single-program pass over the whole
#: row (about 72 us for one 131075-column row on an H100, NOTES entry 49). 1 on, 0 off. On an H100 (NOTES entry
#: 52, ``probe_sample.py``, interleaved) it took entry 49's heavy_tail cell (8 x 131075 K=2048, 256 maxima) from
#: 100.5 to 69.2 us but cost +1.6 to +2.1 us on the 1-row decode cells where no row takes the rung, so it stayed
#: off. With the rare paths outlined (SPLIT_COOP_OUTLINE) that cost is gone: on the H100 decode cells as fast as
#: without the rung and that cell 100.8 -> 64.7 us (entry 53); on the H200 (entry 54, interleaved, us, off / on)
#: 1 x 131075 K=2048 16.3 / 16.5, K=512 16.2 / 16.3, 8 x 131075 K=2048 23.2 / 23.1, 16 x 131075 K=1024 28.5 /
#: 28.7, the varlen batch of 16 rows 26.9 / 27.0. A launch-wide constexpr: off, the kernel compiles without it.
SPLIT_COOP_LOW_RUNG = 1
#: The cooperative form's rare paths (the shared tie rung, the shared first rung, the finisher's retry ladder and its
#: radix select of a crossing bin past SPLIT_COOP_RANK_MAX, a row no longer than K) as calls (``noinline``) instead of
#: inlined: 1 on, 0 off. They run only on rows whose first staging failed, whose crossing bin is large, or that are
#: short, but inlined they lie between the pieces of the main path. sm_90 code (Triton 3.6, ``sass_counts.py
#: coop_window``, NOTES entries 53-54): 255 registers with 50 spill loads and 11 spill stores, and 486 instructions in
#: the staging loop, against 231 registers, no spills and 457 outlined (229 registers and no spills with
#: SPLIT_COOP_LOW_RUNG on). Not the spills alone: with the tie rung inlined and the others outlined (218 registers, no
#: spills) the decode cells were as slow as with all inlined, and ncu counted instruction-fetch stalls there that the
#: outlined kernel does not have (H200, entry 54). Measured on the H200 (NOTES entry 54, ``probe_sample.py``,
#: interleaved, every output exact; inlined / the three ladder paths outlined (session 46) / all five outlined, us): 1 x
#: 131075 K=2048 19.8 / 17.5 / 16.2, 8 x 131075 K=2048 27.5 / 24.1 / 23.0, 4 x 65536 K=1024 22.7 / 18.8 / 18.7, 1 x
#: 16387 K=2048 16.4 / 15.6 / 15.3; the varlen batch of 16 rows 29.1 -> 26.9 and 2 x 131075 18.8 -> 17.4 from three to
#: five. Rows that take the tie rung are slower outlined (one all-equal 131075-column row 20.0 / 26.5 / 25.1 us; on an
#: H100 at 8 rows 10-18%, entry 53), still faster than ``torch.topk`` (62-75 us).
SPLIT_COOP_OUTLINE = 1
#: Bits (2**bits bins) of the cooperative form's row histogram. Counted by atomics while staging (WINDOW), so more
#: bins cost no more per staged score (the atomics spread over more addresses) and only a few more words per thread
#: after the row barrier (load, suffix scan, the finisher's reset), while the crossing bin shrinks with each bit:
#: 10 (was SELECT_BIN_BITS, 7) leaves its finisher a crossing bin of a few candidates on decode rows (host replay of
#: the benchmark's rows, ``benchmarks/sim_crossing_bin.py``, 64 per cell, n 16387 / 131075, K 512 / 2048: median
#: 4-18 candidates, at most 41, against 25-134 and 332 at 7 bits), which the all-pairs rank (SPLIT_COOP_RANK_MAX)
#: selects. The lone finisher's select keeps SELECT_BIN_BITS: there the histogram is a ``tl.histogram`` over the
#: staged tile, whose cost grows with the bins. Measured on the H200 (probe_ab.py, NOTES entry 27, hint-free, us,
#: 7 bits / 10 bits, both without the rank): 1 x 131075 K=2048 18.9 / 18.5, 8 x 131075 K=2048 27.4 / 27.1, but
#: 1 x 16387 K=2048 15.9 / 16.6 and 8 x 16387 K=512 17.0 / 18.2: adopted only together with the rank (below).
SPLIT_COOP_BIN_BITS = 10
#: The cooperative finisher selects a compacted crossing bin of at most this many candidates by one all-pairs rank
#: (``_common._rank_select``: a [M, M] compare and one reduction) instead of radix levels on the CROSS_CAP-lane tile
#: (a dozen block operations on its latency chain); a power of two, 0 for never. Measured on the H200 (NOTES entry
#: 27, with 10 bits, us, 0 / 64): 1 x 16387 K=512 17.9 / 17.4, K=2048 16.6 / 15.6, 1 x 131075 K=2048 18.5 / 17.7,
#: 8 x 131075 K=2048 27.1 / 25.5, 8 x 16387 K=512 18.2 / 16.6.
SPLIT_COOP_RANK_MAX = 64
#: Smallest tile (lanes) the staged-candidate select runs on: candidates that fit MIN_TILE lanes (and K <= MIN_TILE)
#: are selected on it; a value >= CAP/2 leaves the two tiles CAP/2 and CAP. 2048 adds a third tile for rows with
#: at most 2048 candidates (K=512 rows aim at 1536). Measured on the H200 (NOTES entry 10): 1 x 16387 K=512 31.9 ->
#: 22.9 us, 64 x 131075 K=512 83.7 -> 75.3 us; K=2048 cells unchanged within noise (they never fit the tile).
SELECT_MIN_TILE = 2048
#: The streaming family's select in loops over chunks of this many staged candidates (``_common.
#: _select_staged_looped``: key window, histogram, then winners out and the crossing bin compacted, each a pass over
#: the slot), for rows whose candidates fit CAP/2; 0 keeps the select on one CAP/2-lane (or SELECT_MIN_TILE-lane)
#: tile. Built for NOTES entry 21's first "next" item (a quarter of the 512-row select's stall samples wait for
#: instruction fetch on its ~4,700-instruction straight-line path). Measured level on the H200 (NOTES entry 22,
#: ``probe_sample.py --arms j0,j1024,j512``: 512 x 131075 K=2048 182.2 / 183.8 / 187.3 us), so off.
SELECT_CHUNK = 0
#: One-warp staging tiles (the streaming family's stage kernel, STREAM_WARPS = 1) place their survivors in column
#: order, ranked across the warp by a ballot (``_common._lane_rank``), instead of lane by lane: each store then
#: writes consecutive slot entries, not one 32-byte sector per lane. 1 on, 0 off. Measured on the H200 (NOTES
#: entry 30, ``probe_ab.py`` and ``probe_stream_kernels.py``): 512 x 16387 K=2048 all equal 156.5 -> 78.1 us, its
#: stage kernel 106 -> 26 us (warm L2); decode rows 66.5 -> 65.3 us (stage kernel 35 -> 26, level with no stores).
STAGE_BALLOT = 1
#: The streaming stage kernel stores only each tile's survivors (``_common._stage_tile_sparse``: a pass-flag bit
#: mask per thread, then one turn per survivor of the fullest thread) instead of two predicated stores per score:
#: 0 off, 1 on, 2 on with each tile's successor requested before the tile is staged. Only rows staged on the long
#: tile (STREAM_TILE, rows longer than STREAM_TILE_SHORT_MAX_N) take it: their tiles admit a few percent of their
#: scores. Measured on the H200 (NOTES entry 22, ``probe_sample.py --arms z0,z1,z2``, us, off / 1 / 2): 512 x
#: 131075 K=2048 187.5 / 180.7 / 178.4, 128 x 65536 K=2048 67.8 / 54.5 / 54.5, 64 x 131075 K=2048 52.3 / 49.8 /
#: 50.1; on the short tile it lost (512 x 16387 K=512 64.3 / 76.7 / 76.9: a fifth of those scores survive).
#: 3: as 2, each tile's slot reservation read one tile later (``_common._reserve_late``), so the warp does not wait
#: for the atomic's round trip per tile, where ncu placed 57% of the 512-row stage kernel's stall samples (NOTES
#: entry 39, on an H100). Built and tested, not yet measured: 2 stays until it is.
STREAM_STAGE_SPARSE = 2
#: The streaming family's select as two launches of its kernel (``kernels.stream._gvr_select_kernel``'s
#: SELECT_PART): an accept launch that selects the rows whose staging holds K to CAP/2 candidates (2: on the
#: SELECT_MIN_TILE- or CAP/2-lane tile; 3: on the CAP/2-lane tile alone), then a ladder launch that refines the
#: others (the CAP-lane tile, the retry ladder); 0 keeps one launch. The accept launch compiles without the ladder
#: and the CAP-lane tile (sm_90, 8 warps, K=2048: 8,888 instructions and 7 spill loads against 37,296 and 226).
#: Measured on the H200 (NOTES entry 22, ``probe_sample.py``, us, one launch / 2): 512 x 131075 K=2048 187.5 /
#: 172.8, 512 x 16387 K=2048 86.1 / 77.5, 64 x 131075 K=2048 52.3 / 46.3, K=512 cells level; accepting up to CAP
#: (the ladder alone apart) measured level with one launch.
STREAM_SELECT_APART = 2
#: The streaming family's stage and select programs wait for their own row (a per-row flag in the workspace that
#: the row's threshold and staging programs count up) instead of the whole grid before them
#: (``kernels/stream.py``): 1 on, 0 off (grid-wide waits, programmatic dependent launch's ``gdc_wait``). With PDL a
#: row's staging then overlaps other rows' sampling, and its select other rows' staging. Measured on the H200
#: (NOTES entry 23, ``probe_sample.py --arms W0,W1``, us, off / on): 512 x 131075 K=2048 163.8 / 154.3, K=512
#: 145.9 / 142.2, 512 x 16387 K=2048 79.2 / 68.9, 200 x 20000 K=1024 77.0 / 70.1, 64 x 131075 K=2048 45.2 / 44.9.
STREAM_ROW_WAIT = 1
#: Whether the streaming family's accept launch (STREAM_SELECT_APART) refines a crossing bin of more than CROSS_CAP
#: candidates itself, by radix levels over its CAP/2-lane tile (1), or marks such rows for the ladder launch, whose
#: uncapped SELECT_WARPS program then selects them (0; the accept kernel then compiles without those levels). Only
#: rows of a few distinct values take that path. Built after NOTES entry 28 measured such rows at 512 x 16387 17%
#: slower under the 4-warp short-row select (SELECT_MANY_SHORT_WARPS). Measured on the H200 (NOTES entry 29,
#: ``probe_sample.py --arms W1,B0``, us, 1 / 0): few distinct values at 512 x 16387 K=2048 153.1 / 163.3, K=512
#: 165.1 / 165.4; decode rows 512 x 16387 K=512 54.9 / 54.1, K=2048 66.7 / 65.6, 512 x 131075 K=2048 150.5 / 156.6,
#: 64 x 131075 K=2048 45.3 / 45.2. The rows it was built for got slower, so it stays 1.
STREAM_ACCEPT_LARGE_BIN = 1
#: Largest crossing bin (candidates sharing the K-th score's histogram bin) refined on a compacted small tile.
#: Decode-like rows put a few dozen candidates there; larger bins are refined in place on the staged tile.
CROSS_CAP = 512
