set -x -o pipefail
export PYTHONPATH=$PWD GVR_TOPK_GIT_COMMIT=50702ee PATH=$PATH:/usr/local/cuda/bin
# The split family's main memcheck cases 9-14 (call 3's memcheck ran out of time after case 8), compiled first.
i=0
for t in "split varlen" "split cooperative" "split long"; do
  i=$((i+1)); timeout 70 python3 tests/gpu/sanitize_cases.py --only "$t" > $OUT/warm$i.log 2>&1; tail -1 $OUT/warm$i.log
done
i=0
for t in "split varlen" "split cooperative" "split long"; do
  i=$((i+1)); PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 60 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --only "$t" > $OUT/memcheck$i.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE|exact|WRONG" $OUT/memcheck$i.log
done
