#!/bin/bash
# On an H100: the GPU test files not run on this code since session 27-32 (fuzz, multi-GPU, warmup and the sanitizer runs aside).
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s); T=tests/unittest/_torch/thop/parallel
timeout -s INT -k 20 520 python3 -m pytest -q -rfE -n 14 -p no:cacheprovider --durations=15 $T \
  --ignore=$T/test_gvr_fuzz.py --ignore=$T/test_gvr_multi_gpu.py --ignore=$T/test_gvr_warmup.py \
  -k "not compute_sanitizer" > $OUT/suite.txt 2>&1; echo "S rc=$? $(( $(date +%s)-t0 ))s"
grep -E "passed|failed|FAILED|ERROR" $OUT/suite.txt | tail -25
