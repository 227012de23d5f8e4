set -x -o pipefail
cd scratch/h1
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat COMMIT) PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 260 python3 benchmarks/probe_sample.py --arms W0,W1 \
  --cells 512x131075x2048,512x131075x1024,512x131075x512,512x16387x2048,512x16387x512,256x131075x2048,128x65536x2048,64x131075x2048,64x131075x512,200x20000x1024 \
  --reps 25 --jobs 16 --out $OUT/p 2>&1 | tee $OUT/p.log | grep -v '^{' | tail -16
# Everything below with the per-row waits on by default.
sed -i 's/^STREAM_ROW_WAIT = 0$/STREAM_ROW_WAIT = 1/' gvr_topk/tuning.py; grep -n '^STREAM_ROW_WAIT' gvr_topk/tuning.py
T=tests/unittest/_torch/thop/parallel
GVR_FUZZ_FAMILY=stream GVR_FUZZ_CASES=300 GVR_FUZZ_REPORT=$OUT/fuzz.json timeout 100 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz.log 2>&1; tail -3 $OUT/fuzz.log
timeout 130 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_selfsampling_topk.py $T/test_gvr_direct_launch.py $T/test_gvr_launch.py \
  -k "staging_outcomes or ladder or tie or direct or graph or capture" 2>&1 | tee $OUT/tests.log | tail -4
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 60 compute-sanitizer --tool memcheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --only "stream long rows" > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|GVR-SANITIZE" $OUT/memcheck.log
