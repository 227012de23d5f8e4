set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat scratch/h1/COMMIT)+fix PATH=$PATH:/usr/local/cuda/bin
# Old tree (scratch/h1, commit ba342c6) against the working tree (histogram atomics only for scores inside the slot).
A="benchmarks/probe_ab.py --rev scratch/h1 --reps 25 --jobs 16"
timeout 180 python3 $A --data equal --cells 8x131075x2048,1x131075x512 --out $OUT/equal 2>&1 | tee $OUT/equal.log | grep -v '^{' | tail -5
for d in neg_inf_tail few_distinct; do
  timeout 60 python3 $A --data $d --cells 8x131075x2048,1x131075x512 --out $OUT/$d 2>&1 | tee $OUT/$d.log | grep -v '^{' | tail -4
done
timeout 100 python3 $A --cells 1x16387x512,8x16387x2048,1x131075x2048,8x131075x2048 --out $OUT/decode 2>&1 | tee $OUT/decode.log | grep -v '^{' | tail -7
timeout 50 python3 tests/gpu/sanitize_cases.py --ties-only --family split > $OUT/warm.log 2>&1; tail -1 $OUT/warm.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 90 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --ties-only --family split > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE" $OUT/memcheck.log; grep -c "exact" $OUT/memcheck.log
