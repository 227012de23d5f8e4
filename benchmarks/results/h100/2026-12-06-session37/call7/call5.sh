#!/bin/bash
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader)
case "$GPU" in *H200*) exec bash scratch/call3.sh;; esac
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v "already exists" | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
echo "$GPU"; t0=$(date +%s)
REPS=30 timeout 100 python3 scratch/l2gran.py 8x131075x2048,64x131075x2048,512x131075x2048,512x131075x512 > $OUT/l2gran.txt 2>&1; echo "G rc=$? $(( $(date +%s)-t0 ))s"
tail -8 $OUT/l2gran.txt
