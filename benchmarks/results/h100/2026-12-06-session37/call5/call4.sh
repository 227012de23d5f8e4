#!/bin/bash
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader)
case "$GPU" in *H200*) exec bash scratch/call3.sh;; esac
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v "already exists" | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
echo "$GPU"; t0=$(date +%s)
CELLS=64x131075x2048,256x131075x2048,512x131075x2048,512x131075x512,512x65536x2048
mkdir -p $OUT/c $OUT/d
timeout 200 python3 benchmarks/probe_sample.py --arms "defaults,L6,s2/i2048,s2/i2048/p1024,s2/i2048/L6" --cells $CELLS --reps 40 --jobs 14 --out $OUT/c > $OUT/c/log.txt 2>&1; echo "C rc=$? $(( $(date +%s)-t0 ))s"
timeout 120 python3 benchmarks/probe_sample.py --arms "s2/i2048/L6,s2/i2048/p1024,s2/i2048,L6,defaults" --cells $CELLS --reps 40 --jobs 14 --out $OUT/d > $OUT/d/log.txt 2>&1; echo "D rc=$? $(( $(date +%s)-t0 ))s"
echo "=== C"; tail -11 $OUT/c/log.txt; echo "=== D"; tail -11 $OUT/d/log.txt
