#!/bin/bash
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
mkdir -p $OUT/a $OUT/b $OUT/m
CELLS=8x131075x2048,64x131075x2048,256x131075x2048,512x131075x2048,512x131075x512,512x65536x2048
timeout 240 python3 benchmarks/probe_sample.py --arms "defaults,z3,z2,L6" --cells $CELLS --reps 40 --jobs 14 --out $OUT/a > $OUT/a/log.txt 2>&1; echo "A rc=$? $(( $(date +%s)-t0 ))s"
timeout 120 python3 benchmarks/probe_sample.py --arms "L6,z2,z3,defaults" --cells $CELLS --reps 40 --jobs 14 --out $OUT/b > $OUT/b/log.txt 2>&1; echo "B rc=$? $(( $(date +%s)-t0 ))s"
(cd $OUT/m && timeout 120 python3 $OLDPWD/scratch/memset_cost.py) > $OUT/m/log.txt 2>&1; echo "M rc=$? $(( $(date +%s)-t0 ))s"
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_warmup.py > $OUT/pytest_warmup.txt 2>&1; echo "T rc=$? $(( $(date +%s)-t0 ))s"
tail -3 $OUT/pytest_warmup.txt
echo "=== A"; tail -12 $OUT/a/log.txt
echo "=== B"; tail -12 $OUT/b/log.txt
echo "=== M"; tail -7 $OUT/m/log.txt
