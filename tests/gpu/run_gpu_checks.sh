#!/usr/bin/env bash
# The whole GPU verification in one device call (< 10 minutes on 2 x H200; runs on 1 GPU too, slower).
#
#   bash tests/gpu/run_gpu_checks.sh OUT_DIR      (repository root, PYTHONPATH set)
#
# Every step starts at once, each under its own time limit, spread over the visible GPUs (steps are mostly
# compile- and host-bound, so they share a GPU well):
#   core        test_gvr_ops / test_gvr_warmup / test_gvr_selfsampling_topk  (op registration, warmup, capture)
#   rest        every other test file of the suite (dispatch, bench, examples, plugin, configs, arena)
#   robustness  test_gvr_robustness.py without the sanitizer (canaries, streams, 120 graph replays, ties)
#   fuzz0..N-1  test_gvr_fuzz.py in GVR_FUZZ_SHARDS processes with seeds SEED, SEED+1, ... (GVR_FUZZ_CASES in all)
#   memcheck / racecheck   compute-sanitizer over tests/gpu/sanitize_cases.py
#   multi_gpu   test_gvr_multi_gpu.py (cuda:1 while cuda:0 is current; NCCL determinism), when 2 GPUs are visible
# OUT_DIR/summary.txt: one line per step (exit status, seconds, pytest's last line), the fuzz totals and the
# replay / sanitizer lines; OUT_DIR/logs.tar.gz: every log and fuzz JSON. Exit status 0 when every step passed.
set -u
OUT=${1:?usage: bash tests/gpu/run_gpu_checks.sh OUT_DIR}
mkdir -p "$OUT/logs"
cd "$(dirname "$0")/../.."
T=tests/unittest/_torch/thop/parallel
PY=${PYTHON:-python3}
S="$OUT/summary.txt"
L="$OUT/logs"
CASES=${GVR_FUZZ_CASES:-10000}
SHARDS=${GVR_FUZZ_SHARDS:-4}
SEED=${GVR_FUZZ_SEED:-20260101}
NGPU=$($PY -c "import torch; print(torch.cuda.device_count())")
[ "$NGPU" -ge 1 ] || NGPU=1
LAST=$(( NGPU > 1 ? 1 : 0 ))
PYTEST="$PY -m pytest -q -rfE -s -p no:cacheprovider"
for d in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer; do
  [ -x "$d/compute-sanitizer" ] && export PATH="$PATH:$d"
done
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  commit: $(git rev-parse --short HEAD 2>/dev/null)" \
       "($(git status --porcelain 2>/dev/null | wc -l) changed files)"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>&1
  $PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
} > "$S"

step() {  # step NAME GPUS LIMIT_SECONDS COMMAND...  (background; one summary line when done)
  local name=$1 gpus=$2 limit=$3; shift 3
  (
    t0=$(date +%s)
    CUDA_VISIBLE_DEVICES=$gpus timeout --kill-after=10 "$limit" "$@" > "$L/$name.log" 2>&1
    rc=$?
    printf '%-11s rc=%-3s %4ss  %s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" \
      "$(grep -E '(passed|failed|error)' "$L/$name.log" | tail -1)" >> "$L/steps.txt"
  ) &
}

step core 0 520 $PYTEST $T/test_gvr_ops.py $T/test_gvr_warmup.py $T/test_gvr_selfsampling_topk.py
step rest $LAST 520 $PYTEST $T --ignore=$T/test_gvr_ops.py --ignore=$T/test_gvr_warmup.py \
  --ignore=$T/test_gvr_selfsampling_topk.py --ignore=$T/test_gvr_robustness.py --ignore=$T/test_gvr_fuzz.py \
  --ignore=$T/test_gvr_multi_gpu.py
step robustness $LAST 420 $PYTEST $T/test_gvr_robustness.py -k "not compute_sanitizer"
for i in $(seq 0 $(( SHARDS - 1 ))); do
  GVR_FUZZ_CASES=$(( CASES / SHARDS + (i < CASES % SHARDS) )) GVR_FUZZ_SEED=$(( SEED + i )) \
    GVR_FUZZ_REPORT="$L/fuzz$i.json" step fuzz$i $(( i % NGPU )) 480 $PYTEST $T/test_gvr_fuzz.py -k fuzz_exact
done
GVR_SANITIZE=1 GVR_SANITIZE_TIMEOUT=400 step memcheck 0 440 $PYTEST $T/test_gvr_robustness.py -k "compute_sanitizer and memcheck"
GVR_SANITIZE=1 GVR_SANITIZE_TIMEOUT=400 step racecheck $LAST 440 $PYTEST $T/test_gvr_robustness.py -k "compute_sanitizer and racecheck"
[ "$NGPU" -gt 1 ] && step multi_gpu 0,1 300 $PYTEST $T/test_gvr_multi_gpu.py
wait

sort "$L/steps.txt" >> "$S"
$PY - "$L" >> "$S" <<'PYEOF'
import glob, json, sys
runs = [json.load(open(p)) for p in sorted(glob.glob(sys.argv[1] + "/fuzz*.json"))]
print(f"fuzz: {sum(r['cases'] for r in runs)} cases, {sum(r['rows'] for r in runs)} rows, "
      f"{sum(r['configs'] for r in runs)} configurations, {sum(r['mismatches'] for r in runs)} mismatches, "
      f"{sum(bool(r.get('complete')) for r in runs)}/{len(runs)} shards complete, seeds "
      f"{[r['master_seed'] for r in runs]}")
PYEOF
grep -h "CUDA-graph replays exact\|concurrent calls on 2 streams\|NCCL-DETERMINISM\|GVR-SANITIZE-CASES\|SUMMARY:" \
  "$L"/*.log | sort | uniq -c >> "$S"
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$L"
cat "$S"
! grep -q "rc=[1-9]" "$S"
