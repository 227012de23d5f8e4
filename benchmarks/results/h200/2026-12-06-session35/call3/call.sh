python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer PYTHONUNBUFFERED=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=tests/gpu/sanitize_cases.py
t0=$(date +%s)
timeout 200 python3 $S --family split --ties-only > $OUT/pre_ties.log 2>&1 &
i=0
for o in "k=64 hinted=False" "k=64 hinted=True" "k=512 hinted=False" "k=512 hinted=True" "varlen next_n=2" "varlen next_n=3" "cooperative K=2048 varlen hinted=False" "cooperative K=2048 varlen hinted=True" "long staging tile K=512" "long staging tile K=2048"; do
  i=$((i+1)); timeout 200 python3 $S --family split --only "$o" > $OUT/pre_$i.log 2>&1 &
done
wait
echo "pre-runs time $(( $(date +%s) - t0 ))"; grep -h "GVR-SANITIZE" $OUT/pre_*.log | sort | uniq -c
t0=$(date +%s)
timeout 300 compute-sanitizer --tool memcheck --print-limit 20 python3 $S --family split > $OUT/memcheck_split.log 2>&1
echo "memcheck rc $? time $(( $(date +%s) - t0 ))"; grep -c exact $OUT/memcheck_split.log; tail -n 4 $OUT/memcheck_split.log
