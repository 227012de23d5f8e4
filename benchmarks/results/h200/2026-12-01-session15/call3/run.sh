set -x -o pipefail
cd scratch/h3
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat COMMIT) PATH=$PATH:/usr/local/cuda/bin
timeout 230 python3 benchmarks/probe_sample.py --arms A0/z0,A2/z2,A3/z2 \
  --cells 512x131075x2048,512x131075x1024,512x131075x512,512x16387x2048,512x16387x512,256x131075x2048,128x65536x2048,64x131075x2048,64x131075x1024,64x131075x512 \
  --reps 25 --jobs 16 --out $OUT/p 2>&1 | tee $OUT/p.log | grep -v '^{' | tail -14
T=tests/unittest/_torch/thop/parallel
timeout 130 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_launch.py $T/test_gvr_staging.py $T/test_gvr_selfsampling_topk.py \
  -k "survivors or apart or staging_outcomes or stream" 2>&1 | tee $OUT/tests.log | tail -3
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 50 python3 tests/gpu/sanitize_cases.py --only "stream long rows" > $OUT/warm.log 2>&1; tail -1 $OUT/warm.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 60 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --only "stream long rows" > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE" $OUT/memcheck.log
GVR_FUZZ_CASES=150 GVR_FUZZ_REPORT=$OUT/fuzz.json timeout 60 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_fuzz.py > $OUT/fuzz.log 2>&1; tail -2 $OUT/fuzz.log
