#!/bin/bash
# Session 13, call 5: the staging kernel's register cap (occupancy) at 512 and 64 rows: 128 (default, 16 one-warp
# programs per SM), 96 (21), 80 (25, spills in the loop), and 512-score tiles capped at 64 (32 programs per SM).
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD/scratch/h1:/tmp/site PATH=$PATH:/usr/local/cuda/bin
cd scratch/h1
timeout 420 python3 benchmarks/probe_sample.py --arms l128,l96,l80,i512/l64 --cells 512x131075x2048,64x131075x2048,512x131075x512,512x16387x2048 --reps 25 --jobs 16 --out $OUT/l > $OUT/l.log 2>&1; echo "l rc=$?"
tail -12 $OUT/l.log
