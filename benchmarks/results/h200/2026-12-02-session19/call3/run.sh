set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=e4017bb PATH=$PATH:/usr/local/cuda/bin
# The quick benchmark's cases that call 2's time limit cut: the 512 x 131075 grid cells, varlen, adversarial.
timeout 330 python3 benchmarks/bench_gvr_topk.py --quick --rows 512 --n 131075 --out $OUT/bench --no-progress --no-plot --jobs 12 2>&1 | tee $OUT/bench.log | tail -30
timeout 60 python3 tests/gpu/sanitize_cases.py --ties-only --family split > $OUT/warm.log 2>&1; tail -1 $OUT/warm.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --ties-only --family split > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE" $OUT/memcheck.log; grep -c "exact" $OUT/memcheck.log
