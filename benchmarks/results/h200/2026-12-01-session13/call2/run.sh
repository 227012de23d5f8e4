#!/bin/bash
# Session 13, call 2: the split family's long staging tile (h1) against HEAD of session 12 (h0), decode and
# adversarial rows; the streaming family's per-kernel times.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/scratch/h1/plugin /tmp/pp/gvr_topk_plugin
export PYTHONPATH=$PWD/scratch/h1:/tmp/pp:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat scratch/h1/COMMIT) PATH=$PATH:/usr/local/cuda/bin
H0=$PWD/scratch/h0; H1=$PWD/scratch/h1
cd scratch/h1
timeout 90 python3 -m pytest -q tests/unittest/_torch/thop/parallel/test_gvr_split_coop.py tests/unittest/_torch/thop/parallel/test_gvr_staging.py > $OUT/tests.log 2>&1; echo "tests rc=$?" | tee -a $OUT/tests.log; tail -2 $OUT/tests.log
timeout 260 python3 benchmarks/probe_ab.py --rev $H0,$H1 --no-new --cells 8x131075x2048,8x131075x512,64x16387x2048,64x16387x512,32x131075x2048,16x65536x2048,1x131075x2048 --reps 30 --jobs 16 --out $OUT/ab > $OUT/ab.log 2>&1; echo "ab rc=$?"
for d in heavy_tail equal; do
  timeout 60 python3 benchmarks/probe_ab.py --rev $H0,$H1 --no-new --data $d --cells 8x131075x2048 --reps 20 --jobs 4 --out $OUT/ab_$d > $OUT/ab_$d.log 2>&1; echo "ab $d rc=$?"
done
timeout 90 python3 benchmarks/probe_stream_kernels.py --cells 64x131075x2048,512x131075x2048,512x16387x2048 --out $OUT/sk > $OUT/sk.log 2>&1; echo "sk rc=$?"
tail -14 $OUT/ab.log; tail -4 $OUT/ab_heavy_tail.log; tail -4 $OUT/ab_equal.log; tail -12 $OUT/sk.log
