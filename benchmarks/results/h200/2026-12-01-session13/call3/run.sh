#!/bin/bash
# Session 13, call 3: memcheck of the split family (look-ahead staging, long tile), then a fuzz run.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/scratch/h1/plugin /tmp/pp/gvr_topk_plugin
export PYTHONPATH=$PWD/scratch/h1:/tmp/pp:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat scratch/h1/COMMIT) PATH=$PATH:/usr/local/cuda/bin
cd scratch/h1
t0=$SECONDS
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 python3 tests/gpu/sanitize_cases.py --family split > $OUT/warm.log 2>&1; echo "warm rc=$? $((SECONDS-t0))s" | tee -a $OUT/steps.txt
t0=$SECONDS
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 250 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --family split > $OUT/memcheck.log 2>&1; echo "memcheck rc=$? $((SECONDS-t0))s" | tee -a $OUT/steps.txt
t0=$SECONDS
GVR_FUZZ_CASES=400 GVR_FUZZ_REPORT=$OUT/fuzz.json timeout 150 python3 -m pytest -q tests/unittest/_torch/thop/parallel/test_gvr_fuzz.py > $OUT/fuzz.log 2>&1; echo "fuzz rc=$? $((SECONDS-t0))s" | tee -a $OUT/steps.txt
tail -4 $OUT/warm.log; grep -E "ERROR SUMMARY|Invalid|GVR-SANITIZE" $OUT/memcheck.log | head; tail -3 $OUT/memcheck.log; tail -3 $OUT/fuzz.log
