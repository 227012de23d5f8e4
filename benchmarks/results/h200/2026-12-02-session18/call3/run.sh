set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=50702ee PATH=$PATH:/usr/local/cuda/bin
T=tests/unittest/_torch/thop/parallel
GVR_FUZZ_FAMILY=split GVR_FUZZ_CASES=300 GVR_FUZZ_REPORT=$OUT/fuzz.json timeout 130 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz.log 2>&1; tail -n 3 $OUT/fuzz.log
timeout 120 python3 tests/gpu/sanitize_cases.py --family split > $OUT/warm.log 2>&1; tail -1 $OUT/warm.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 170 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --family split > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE" $OUT/memcheck.log; grep -c "exact" $OUT/memcheck.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 130 compute-sanitizer --tool racecheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --quick --family split > $OUT/racecheck.log 2>&1; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|GVR-SANITIZE" $OUT/racecheck.log; grep -c "exact" $OUT/racecheck.log
