#!/bin/bash
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v "already exists" | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$GPU"; nvidia-smi --query-gpu=driver_version --format=csv,noheader
t0=$(date +%s)
tests() { timeout $1 python3 -m pytest -q -rfE -n 2 -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_warmup.py -k "warmup_then_capture or cold_capture" > $OUT/pytest_warn.txt 2>&1; echo "T rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/pytest_warn.txt; }
case "$GPU" in *H200*) ;; *) echo "not an H200: the GPU suite instead"; exec bash scratch/suite.sh;; esac
CELLS=512x131075x2048,512x131075x512,512x65536x2048  # the plan at 64-256 rows is the same under both arms
mkdir -p $OUT/a $OUT/b
timeout 100 python3 benchmarks/probe_sample.py --arms "defaults,L6" --cells $CELLS --reps 30 --jobs 14 --out $OUT/a > $OUT/a/log.txt 2>&1; echo "A rc=$? $(( $(date +%s)-t0 ))s"
timeout 70 python3 benchmarks/probe_sample.py --arms "L6,defaults" --cells $CELLS --reps 30 --jobs 14 --out $OUT/b > $OUT/b/log.txt 2>&1; echo "B rc=$? $(( $(date +%s)-t0 ))s"
echo "=== A"; tail -8 $OUT/a/log.txt; echo "=== B"; tail -8 $OUT/b/log.txt
COMMIT=$(cat scratch/HEAD)
if python3 scratch/decide_l6.py $OUT/a/probe_sample.json $OUT/b/probe_sample.json > $OUT/decide.txt; then
  sed -i 's/^STREAM_MIN_SPLIT = 0$/STREAM_MIN_SPLIT = 6/' gvr_topk/tuning.py; COMMIT="$COMMIT+L6"
fi
cat $OUT/decide.txt; grep -n "^STREAM_MIN_SPLIT" gvr_topk/tuning.py
left=$(( 585 - ($(date +%s)-t0) )); echo "bench limit ${left}s"
GVR_TOPK_GIT_COMMIT=$COMMIT timeout $left python3 benchmarks/bench_gvr_topk.py --quick --out $OUT/bench > $OUT/bench.log 2>&1; echo "Q rc=$? $(( $(date +%s)-t0 ))s"
tail -32 $OUT/bench.log
left=$(( 590 - ($(date +%s)-t0) )); [ $left -gt 40 ] && tests $left
