#!/bin/bash
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CELLS=8x131075x2048,64x131075x2048,512x131075x2048,512x131075x512
t0=$(date +%s)
mkdir -p $OUT/a $OUT/b
timeout 330 python3 benchmarks/probe_sample.py --arms "defaults,z3,z2,L6" --cells $CELLS --reps 40 --jobs 14 --out $OUT/a > $OUT/a/log.txt 2>&1; echo "A rc=$? $(( $(date +%s)-t0 ))s"
timeout 200 python3 benchmarks/probe_sample.py --arms "L6,z2,z3,defaults" --cells $CELLS --reps 40 --jobs 14 --out $OUT/b > $OUT/b/log.txt 2>&1; echo "B rc=$? $(( $(date +%s)-t0 ))s"
echo "=== A"; tail -25 $OUT/a/log.txt
echo "=== B"; tail -25 $OUT/b/log.txt
