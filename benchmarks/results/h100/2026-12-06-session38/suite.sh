#!/bin/bash
# On an H100: the TensorRT plugin file and the robustness file (whose long tests were the ones session 37's suite did not reach).
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
python3 -c "import gvr_topk_plugin" 2>/dev/null || ln -sfn $PWD/plugin /tmp/site/gvr_topk_plugin
t0=$(date +%s); T=tests/unittest/_torch/thop/parallel
timeout -s INT -k 20 500 python3 -m pytest -q -rfEs -n 14 -p no:cacheprovider --durations=15 $T/test_gvr_trt_plugin.py $T/test_gvr_robustness.py \
  -k "not compute_sanitizer" > $OUT/suite.txt 2>&1; echo "S rc=$? $(( $(date +%s)-t0 ))s"
grep -E "passed|failed|FAILED|ERROR|SKIP" $OUT/suite.txt | tail -25
