#!/bin/bash
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv > $OUT/gpu.txt; cat $OUT/gpu.txt; cp scratch/sha $OUT/
timeout 130 python3 benchmarks/probe_sample.py --arms "l128,l96,p2816,l96/p2816" --cells 512x131075x2048,512x131075x512,256x131075x2048,128x131075x2048 --reps 25 --jobs 14 --out $OUT/sample > $OUT/sample.log 2>&1; echo "sample rc=$?"
timeout 170 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/s8,scratch/s16 --no-new --reps 25 --jobs 14 --data decode,pm_inf,bf16_ties,heavy_tail --cells 8x131075x2048,64x131075x2048,512x131075x2048 --out $OUT/ab > $OUT/ab.log 2>&1; echo "ab rc=$?"
echo "=== sample"; tail -12 $OUT/sample.log
echo "=== ab"; tail -22 $OUT/ab.log
