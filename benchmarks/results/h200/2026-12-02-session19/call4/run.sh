set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=e4017bb PATH=$PATH:/usr/local/cuda/bin
GVR_FUZZ_FAMILY=split GVR_FUZZ_CASES=300 GVR_FUZZ_REPORT=$OUT/fuzz.json timeout 150 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_fuzz.py -k fuzz_exact 2>&1 | tee $OUT/fuzz.log | tail -3
for o in "split cooperative" "split varlen"; do
  f=$(echo $o | tr ' ' _)
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 100 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --only "$o" > $OUT/memcheck_$f.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE" $OUT/memcheck_$f.log
done
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool racecheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --ties-only --family split > $OUT/racecheck.log 2>&1; grep -E "HAZARD|RACECHECK SUMMARY|GVR-SANITIZE" $OUT/racecheck.log | tail -3
