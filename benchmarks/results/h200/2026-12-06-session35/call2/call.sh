python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer PYTHONUNBUFFERED=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
stamp() { while IFS= read -r l; do echo "$(date +%H:%M:%S) $l"; done; }
t0=$(date +%s)
timeout -s ABRT 270 python3 -X faulthandler tests/gpu/sanitize_cases.py --family split 2>&1 | stamp > $OUT/pre_b1.log &
timeout -s ABRT 270 python3 -X faulthandler tests/gpu/sanitize_cases.py --family split --tuning SPLIT_BALANCE=0 2>&1 | stamp > $OUT/pre_b0.log &
wait
echo "pre-runs time $(( $(date +%s) - t0 ))"
echo "== b1"; tail -n 25 $OUT/pre_b1.log
echo "== b0"; tail -n 6 $OUT/pre_b0.log
if grep -q "GVR-SANITIZE-CASES OK" $OUT/pre_b1.log; then
  t0=$(date +%s)
  timeout 240 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --family split > $OUT/memcheck_b1.log 2>&1
  echo "memcheck rc $? time $(( $(date +%s) - t0 ))"; tail -n 4 $OUT/memcheck_b1.log
fi
