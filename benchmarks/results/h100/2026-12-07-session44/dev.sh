#!/bin/bash
# usage: bash scratch/dev.sh MODE   (MODE: auto | bench | tests | fuzz)
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
export GVR_TOPK_GIT_COMMIT=$(git rev-parse --short HEAD 2>/dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
MODE=${1:-auto}
T=tests/unittest/_torch/thop/parallel
if [ "$MODE" = auto ]; then
  if nvidia-smi | grep -q H100; then MODE=tests; LIMIT=${HLIMIT:-240}; SEL="$T/test_gvr_robustness.py $T/test_gvr_warmup.py $T/test_gvr_policy.py"; else MODE=bench; fi
fi
echo "mode: $MODE"
T=tests/unittest/_torch/thop/parallel
case $MODE in
bench)
  mkdir -p scratch/bench
  timeout --kill-after=5 ${LIMIT:-560} python3 benchmarks/bench_gvr_topk.py --quick --out scratch/bench --no-plot \
    --no-progress --resume --markdown scratch/bench/BENCHMARKS.md > scratch/bench/stdout.txt 2>&1
  echo "rc=$?"
  tail -60 scratch/bench/stdout.txt
  cp -r scratch/bench $OUT/
  ;;
tests)
  timeout --kill-after=5 ${LIMIT:-540} python3 -m pytest -q -rfE -p no:cacheprovider -n ${NW:-12} ${SEL:-$T/test_gvr_selfsampling_topk.py $T/test_gvr_staging.py $T/test_gvr_launch.py $T/test_gvr_direct_launch.py $T/test_gvr_ops.py} > $OUT/tests.log 2>&1
  echo "rc=$?"; tail -25 $OUT/tests.log
  ;;
fuzz)
  GVR_STEPS=fuzz GVR_FUZZ_SEED=${SEED:-20261207} GVR_FUZZ_CASES=${CASES:-6000} GVR_FUZZ_SHARDS=${SHARDS:-6} \
    bash tests/gpu/run_gpu_checks.sh $OUT/fuzz
  cat $OUT/fuzz/summary.txt
  ;;
esac
