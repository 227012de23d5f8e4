#!/bin/bash
# Session 13, call 7: the threshold kernel's L2 prefetch of the staging shares' first lines (STREAM_PREFETCH_L2, MB
# per launch chunk): off, 16 MB, 32 MB.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD/scratch/h2:/tmp/site PATH=$PATH:/usr/local/cuda/bin
cd scratch/h2
timeout 200 python3 benchmarks/probe_sample.py --arms L0,L16,L32 --cells 512x131075x2048,64x131075x2048,512x16387x2048,512x131075x512 --reps 25 --jobs 16 --out $OUT/pf > $OUT/pf.log 2>&1; echo "pf rc=$?"
tail -9 $OUT/pf.log
