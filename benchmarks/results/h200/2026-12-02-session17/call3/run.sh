set -x -o pipefail
cd scratch/h3
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat COMMIT) PATH=$PATH:/usr/local/cuda/bin
timeout 180 python3 benchmarks/probe_sample.py --arms H0/M2048,H1/M0 \
  --cells 1x16387x512,1x16387x2048,8x16387x512,8x16387x2048,1x131075x512,1x131075x2048,8x131075x512,8x131075x2048 \
  --reps 25 --jobs 16 --out $OUT/p 2>&1 | tee $OUT/p.log | grep -v '^{' | tail -13
T=tests/unittest/_torch/thop/parallel
timeout 90 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_robustness.py -k "two_streams" 2>&1 | tee $OUT/tests.log | tail -3
for c in cooperative "long staging"; do timeout 45 python3 tests/gpu/sanitize_cases.py --family split --only "$c" >> $OUT/warm.log 2>&1; done; tail -2 $OUT/warm.log
for c in cooperative "long staging"; do PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 70 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --family split --only "$c" >> $OUT/memcheck.log 2>&1; done; grep -E "ERROR SUMMARY|GVR-SANITIZE" $OUT/memcheck.log
