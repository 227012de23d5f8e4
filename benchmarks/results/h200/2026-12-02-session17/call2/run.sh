set -x -o pipefail
cd scratch/h2
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat COMMIT) PATH=$PATH:/usr/local/cuda/bin
timeout 260 python3 benchmarks/probe_sample.py --arms H0,H1,H1/M0,H1/M0/S2 \
  --cells 1x131075x2048,1x16387x512,1x131075x512,8x16387x512,8x131075x512,1x65536x1024,64x16387x512,64x16387x2048,32x131075x2048 \
  --reps 25 --jobs 16 --out $OUT/p 2>&1 | tee $OUT/p.log | grep -v '^{' | tail -16
# Below: the sample window on (the arm H1).
sed -i 's/^SPLIT_COOP_WINDOW = 0$/SPLIT_COOP_WINDOW = 1/' gvr_topk/tuning.py; grep -n '^SPLIT_COOP_WINDOW' gvr_topk/tuning.py
timeout 90 python3 tests/gpu/sanitize_cases.py --family split > $OUT/warm.log 2>&1; tail -1 $OUT/warm.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool racecheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --quick --family split > $OUT/racecheck.log 2>&1; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|GVR-SANITIZE" $OUT/racecheck.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 110 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --family split > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE" $OUT/memcheck.log; grep -c "exact" $OUT/memcheck.log
