set -x -o pipefail
cd scratch/h2
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat COMMIT) PATH=$PATH:/usr/local/cuda/bin
T=tests/unittest/_torch/thop/parallel
GVR_FUZZ_FAMILY=stream GVR_FUZZ_CASES=300 GVR_FUZZ_REPORT=$OUT/fuzz.json timeout 120 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz.log 2>&1; tail -n 3 $OUT/fuzz.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --family stream > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE" $OUT/memcheck.log
timeout 150 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_ops.py $T/test_gvr_selfsampling_topk.py -k "torch_compile or cuda_graph or staging_outcomes" 2>&1 | tee $OUT/tests.log | tail -n 3
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool racecheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --quick --family stream > $OUT/racecheck.log 2>&1; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|GVR-SANITIZE" $OUT/racecheck.log
