set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
git log -1 --format=%h 2>/dev/null
# 1. The 512-row decode cells (call 2 was cut before them): h0 = 22e190a against the working tree (de03532).
timeout 110 python3 benchmarks/probe_ab.py --rev scratch/h0 --reps 25 --jobs 16 \
  --cells 512x16387x512,512x16387x2048,512x131075x2048 --out $OUT/ab_decode 2>&1 \
  | tee $OUT/ab_decode.log | grep -v "^{" | tail -7
# 2. memcheck over the streaming family's tie-rung rows and repeated direct calls (the new restage, the turns).
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 100 compute-sanitizer --tool memcheck python3 tests/gpu/sanitize_cases.py --ties-only \
  --family stream > $OUT/memcheck.log 2>&1; echo rc=$?; tail -3 $OUT/memcheck.log
