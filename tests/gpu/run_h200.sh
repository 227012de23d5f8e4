#!/usr/bin/env bash
# GPU robustness run: robustness tests, fuzz (10000 cases), multi-GPU + NCCL, compute-sanitizer.
#
#   bash tests/gpu/run_h200.sh OUT_DIR        (from the repository root, PYTHONPATH set, 1-2 GPUs)
#
# Writes OUT_DIR/<step>.log, OUT_DIR/fuzz.json (the fuzz summary) and OUT_DIR/summary.txt (one line per step:
# name, exit status, seconds, pytest's last line). Each step has its own time limit so the whole run stays under
# ~8 minutes on 2 x H200; a step that hits its limit is reported with status 124. Exit status: 0 when every step
# passed (a skipped step counts as passed; its log says why it skipped).
set -u
OUT=${1:?usage: bash tests/gpu/run_h200.sh OUT_DIR}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
T=tests/unittest/_torch/thop/parallel
PY=${PYTHON:-python}
SUMMARY="$OUT/summary${GVR_STEPS:+-${GVR_STEPS// /-}}.txt"
: > "$SUMMARY"
FAILED=0

# GVR_STEPS picks steps (default: all), e.g. GVR_STEPS="robustness fuzz" to run the one-GPU steps alone.
STEPS=" ${GVR_STEPS:-robustness fuzz multi_gpu sanitizer} "

step() {  # step NAME LIMIT_SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  case "$STEPS" in *" $name "*) ;; *) return 0 ;; esac
  local t0=$(date +%s)
  echo "=== $name: $*" | tee -a "$OUT/$name.log"
  timeout --signal=TERM --kill-after=15 "$limit" "$@" >> "$OUT/$name.log" 2>&1
  local rc=$?
  local dt=$(( $(date +%s) - t0 ))
  local last
  last=$(grep -E "(passed|failed|skipped|error)" "$OUT/$name.log" | tail -1)
  printf '%-12s rc=%-3s %4ss  %s\n' "$name" "$rc" "$dt" "$last" | tee -a "$SUMMARY"
  [ "$rc" -eq 0 ] || FAILED=1
}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l) changed files"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1
  $PY -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())"
  echo "compute-sanitizer: $(command -v compute-sanitizer || echo 'not on PATH')"
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

# Sanitizer: on PATH, or the CUDA toolkit's usual places.
if ! command -v compute-sanitizer >/dev/null; then
  for d in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer /opt/nvidia/compute-sanitizer; do
    [ -x "$d/compute-sanitizer" ] && export PATH="$d:$PATH" && break
  done
fi

step robustness 120 $PY -m pytest -q -rA -p no:cacheprovider "$T/test_gvr_robustness.py" -k "not compute_sanitizer"
GVR_FUZZ_CASES=${GVR_FUZZ_CASES:-10000} GVR_FUZZ_REPORT="$OUT/fuzz.json" \
  step fuzz 180 $PY -m pytest -q -rA -s -p no:cacheprovider "$T/test_gvr_fuzz.py"
step multi_gpu 90 $PY -m pytest -q -rA -s -p no:cacheprovider "$T/test_gvr_multi_gpu.py"
GVR_SANITIZE=1 GVR_SANITIZE_TIMEOUT=140 \
  step sanitizer 300 $PY -m pytest -q -rA -s -p no:cacheprovider "$T/test_gvr_robustness.py" -k compute_sanitizer

if [ -f "$OUT/fuzz.json" ]; then
  $PY - "$OUT/fuzz.json" <<'PYEOF' | tee -a "$SUMMARY"
import json, sys
s = json.load(open(sys.argv[1]))
print(f"fuzz: {s['cases']} cases, {s['rows']} rows, {s['configs']} configurations, {s['mismatches']} mismatches, "
      f"{s['seconds']} s on {s['device']}")
PYEOF
fi
grep -h "CUDA-graph replays exact\|concurrent calls on 2 streams\|NCCL-DETERMINISM\|GVR-SANITIZE-CASES\|ERROR SUMMARY" \
  "$OUT"/*.log | sort | uniq -c | tee -a "$SUMMARY"
echo "overall: $([ $FAILED -eq 0 ] && echo PASS || echo FAIL)" | tee -a "$SUMMARY"
exit $FAILED
