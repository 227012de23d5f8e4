set -x -o pipefail
cd scratch/h2
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat COMMIT) PATH=$PATH:/usr/local/cuda/bin
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 125 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --family stream --only "k=2048" > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE|^\[" $OUT/memcheck.log | cut -c1-90
