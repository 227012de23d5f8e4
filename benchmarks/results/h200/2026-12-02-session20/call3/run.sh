set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
# The fused kernel's tests the first call's limit cut (the rank / radix select, the tie rung, the long tile).
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_split_coop.py -k "rank or tie or long_staging or varlen or hinted or plain" 2>&1 | tee $OUT/tests.log | tail -3
GVR_FUZZ_FAMILY=split GVR_FUZZ_CASES=300 GVR_FUZZ_REPORT=$OUT/fuzz.json timeout 150 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_fuzz.py -k fuzz_exact 2>&1 | tee $OUT/fuzz.log | tail -3
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 130 compute-sanitizer --tool memcheck python3 tests/gpu/sanitize_cases.py --ties-only --family split 2>&1 | tee $OUT/memcheck.log | tail -4
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 90 compute-sanitizer --tool racecheck python3 tests/gpu/sanitize_cases.py --ties-only --family split 2>&1 | tee $OUT/racecheck.log | tail -4
