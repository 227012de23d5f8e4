set -x -o pipefail
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
timeout 130 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_split_coop.py -k "every_path or tie" 2>&1 | tee $OUT/tests.log | tail -3
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 110 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --ties-only --family split > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE" $OUT/memcheck.log; grep -c "exact" $OUT/memcheck.log
