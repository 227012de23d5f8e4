#!/bin/bash
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
CELLS=64x131075x2048,256x131075x2048,512x131075x2048,512x131075x512,512x65536x2048
mkdir -p $OUT/a $OUT/b
timeout 150 python3 benchmarks/probe_sample.py --arms "defaults,L6" --cells $CELLS --reps 40 --jobs 14 --out $OUT/a > $OUT/a/log.txt 2>&1; echo "A rc=$? $(( $(date +%s)-t0 ))s"
timeout 120 python3 benchmarks/probe_sample.py --arms "L6,defaults" --cells $CELLS --reps 40 --jobs 14 --out $OUT/b > $OUT/b/log.txt 2>&1; echo "B rc=$? $(( $(date +%s)-t0 ))s"
timeout 60 python3 scratch/warn_check.py > $OUT/warn.txt 2>&1; echo "W rc=$? $(( $(date +%s)-t0 ))s"
GVR_STEPS=racecheck timeout 240 bash tests/gpu/run_gpu_checks.sh $OUT/checks > $OUT/checks.log 2>&1; echo "R rc=$? $(( $(date +%s)-t0 ))s"
tail -5 $OUT/checks.log
cat $OUT/warn.txt
echo "=== A"; tail -9 $OUT/a/log.txt
echo "=== B"; tail -9 $OUT/b/log.txt
