set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
git log -1 --format=%h 2>/dev/null
# 1. The streaming family's select launch geometry past one wave (SELECT_MANY_*), its threshold warps and the staging
#    program count, on the streaming cells of the quick grid (W1 = the defaults).
timeout 250 python3 benchmarks/probe_sample.py --reps 20 --jobs 16 \
  --arms W1,v4/n0,v8/n0,v4/n128,v16/n0,b8,p4096/o2048,w8 \
  --cells 512x16387x512,512x16387x2048,512x131075x2048,64x131075x2048 --out $OUT/sweep 2>&1 | tee $OUT/sweep.log | grep -v '^{' | tail -14
# 2. Split-family fuzz on the current kernels (d124922's bin 0 from the count had none on the GPU).
GVR_FUZZ_FAMILY=split GVR_FUZZ_CASES=300 GVR_FUZZ_REPORT=$OUT/fuzz.json timeout 150 python3 -m pytest -q -p no:cacheprovider \
  tests/unittest/_torch/thop/parallel/test_gvr_fuzz.py -k fuzz_exact 2>&1 | tee $OUT/fuzz.log | tail -3
# 3. racecheck over the split family's tie and cooperative cases.
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool racecheck python3 tests/gpu/sanitize_cases.py --ties-only --family split \
  > $OUT/racecheck.log 2>&1; echo rc=$?; tail -4 $OUT/racecheck.log
