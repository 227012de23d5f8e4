#!/bin/bash
# Session 13, call 1: staging test on the GPU, then A/B of STREAM_STAGE_STAGES and SPLIT_TILE.
set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/scratch/h0/plugin /tmp/pp/gvr_topk_plugin
export PYTHONPATH=$PWD/scratch/h0:/tmp/pp:/tmp/site GVR_TOPK_GIT_COMMIT=0bce03f PATH=$PATH:/usr/local/cuda/bin
cd scratch/h0
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 150 python3 -m pytest -q -x tests/unittest/_torch/thop/parallel/test_gvr_staging.py > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
tail -3 $OUT/tests.log
timeout 220 python3 benchmarks/probe_sample.py --arms z1,z3 --cells 64x131075x2048,512x131075x2048,512x16387x2048,64x131075x512,512x131075x512 --reps 25 --jobs 16 --out $OUT/z > $OUT/z.log 2>&1
echo "z rc=$?"
timeout 180 python3 benchmarks/probe_sample.py --arms d2048,d4096 --cells 8x131075x2048,64x16387x2048,1x131075x2048,8x131075x512,64x16387x512 --reps 25 --jobs 16 --out $OUT/d > $OUT/d.log 2>&1
echo "d rc=$?"
tail -25 $OUT/z.log
tail -25 $OUT/d.log
