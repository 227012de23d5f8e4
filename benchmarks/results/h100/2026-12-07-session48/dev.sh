#!/bin/bash
# usage: bash scratch/dev.sh MODE   (MODE: loop | tests); session 48's calls, trimmed to the modes they used
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
export GVR_TOPK_GIT_COMMIT=$(git rev-parse --short HEAD 2>/dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
MODE=${1:?usage: dev.sh loop|tests}
echo "mode: $MODE"
T=tests/unittest/_torch/thop/parallel
case $MODE in
loop)
  # runtime-loop sample levels (X1, variant tree scratch/vt) against the defaults (X0)
  export PYTHONPATH=$PWD/scratch/vt:$PYTHONPATH
  (cd /tmp && python3 -c "import gvr_topk; print(gvr_topk.__file__)")
  timeout --kill-after=5 ${PLIM:-300} python3 scratch/vt/probe_sample.py --out $OUT/probe_loop --reps 25 \
    --arms X0,X1 --cells ${OCELLS:-1x131075x2048,1x131075x512,8x131075x2048,4x65536x1024,1x16387x2048,varlen/b4xnn4/cr4/131072/k2048,64x131075x2048,512x131075x2048} > $OUT/probe_loop.txt 2>&1
  echo "probe rc=$?"; tail -16 $OUT/probe_loop.txt
  echo "elapsed $SECONDS s"
  ;;
tests)
  timeout --kill-after=5 ${LIMIT:-540} python3 -m pytest -q -rfE -p no:cacheprovider -n ${NW:-12} ${SEL:-$T/test_gvr_robustness.py $T/test_gvr_warmup.py $T/test_gvr_policy.py} > $OUT/tests.log 2>&1
  echo "rc=$?"; tail -25 $OUT/tests.log
  ;;
esac
