#!/usr/bin/env bash
# The whole GPU verification on a 2-GPU machine in ~15 minutes (step limits from the 2026-11-30 run, where
# 220/90/150/120/80 s limits cut most steps): two lanes side by side, then the 2-GPU tests.
#
#   bash tests/gpu/run_x2_lanes.sh OUT_DIR      (repository root, PYTHONPATH set)
#
# lane GPU 1: the main suite (every test file except fuzz / multi-GPU / robustness, pytest-xdist when installed),
#             then compute-sanitizer racecheck, then the eager-overhead probe
# lane GPU 0: robustness (graph replays, streams, canaries), fuzz (GVR_FUZZ_CASES, default 10000), memcheck
# then:       test_gvr_multi_gpu.py on both GPUs (cuda:1 while cuda:0 is current, NCCL determinism)
# Logs: OUT_DIR/<name>.log; OUT_DIR/summary.txt has one line per step (exit status, seconds, pytest's last line).
set -u
OUT=${1:?usage: bash tests/gpu/run_x2_lanes.sh OUT_DIR}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
T=tests/unittest/_torch/thop/parallel
PY=${PYTHON:-python3}
S="$OUT/summary.txt"
: > "$S"

step() {  # step NAME GPUS LIMIT COMMAND...
  local name=$1 gpus=$2 limit=$3; shift 3
  local t0=$(date +%s)
  CUDA_VISIBLE_DEVICES=$gpus timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  printf '%-11s rc=%-3s %4ss  %s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" \
    "$(grep -E '(passed|failed|error)' "$OUT/$name.log" | tail -1)" >> "$S"
}

for d in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer; do [ -x "$d/compute-sanitizer" ] && export PATH="$PATH:$d"; done
XDIST=$($PY -c "import xdist" 2>/dev/null && echo "-n 12")
{
  step main_suite 1 420 $PY -m pytest -q -rfE -p no:cacheprovider $XDIST $T --ignore=$T/test_gvr_fuzz.py \
    --ignore=$T/test_gvr_multi_gpu.py --ignore=$T/test_gvr_robustness.py
  GVR_SANITIZE=1 step racecheck 1 200 $PY -m pytest -q -rA -s -p no:cacheprovider $T/test_gvr_robustness.py \
    -k "compute_sanitizer and racecheck"
  step eager 1 60 $PY benchmarks/probe_eager.py --out "$OUT"
} &
{
  step robustness 0 300 $PY -m pytest -q -rA -s -p no:cacheprovider $T/test_gvr_robustness.py -k "not compute_sanitizer"
  GVR_FUZZ_CASES=${GVR_FUZZ_CASES:-10000} GVR_FUZZ_REPORT="$OUT/fuzz.json" \
    step fuzz 0 420 $PY -m pytest -q -rA -s -p no:cacheprovider $T/test_gvr_fuzz.py
  GVR_SANITIZE=1 step memcheck 0 200 $PY -m pytest -q -rA -s -p no:cacheprovider $T/test_gvr_robustness.py \
    -k "compute_sanitizer and memcheck"
} &
wait
step multi_gpu 0,1 240 $PY -m pytest -q -rA -s -p no:cacheprovider $T/test_gvr_multi_gpu.py
grep -h "CUDA-graph replays exact\|concurrent calls on 2 streams\|NCCL-DETERMINISM\|GVR-SANITIZE-CASES\|ERROR SUMMARY\|gvr fuzz" \
  "$OUT"/*.log | sort | uniq -c >> "$S"
cat "$S"
