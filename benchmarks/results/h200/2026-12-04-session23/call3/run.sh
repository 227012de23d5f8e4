set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
T=tests/unittest/_torch/thop/parallel
# h0 = HEAD 74dd186; new = the working tree (ballot staging with the row pointer's alignment hidden; split rows cap).
# 1. GPU tests: staging (ballot ranks, column order, compiled layout), forced split after a streaming launch.
timeout 200 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_staging.py $T/test_gvr_dispatch.py "$T/test_gvr_robustness.py::test_forced_split_beyond_split_max_rows" 2>&1 | tail -4
# 2. A/B in one process, exactness checked.
timeout 200 python3 benchmarks/probe_ab.py --rev scratch/h0 --reps 25 --jobs 16 --data decode,equal,few_distinct \
  --cells 512x16387x2048,512x16387x512,512x32768x2048,200x20000x1024,64x16387x2048 \
  --out $OUT/ab 2>&1 | tee $OUT/ab.log | grep -v '^{' | tail -22
# 3. Streaming-family fuzz on the new staging.
GVR_FUZZ_FAMILY=stream GVR_FUZZ_CASES=300 GVR_FUZZ_REPORT=$OUT/fuzz_stream.json timeout 90 python3 -m pytest -q -p no:cacheprovider \
  $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz_stream.log 2>&1; tail -2 $OUT/fuzz_stream.log
# 4. Families on rows of 8K-16K columns (where REG_MAX_N draws the line).
timeout 150 python3 benchmarks/probe_families.py --families reg,stream,split \
  --cells 1x16384x2048,8x16384x2048,64x16384x2048,1x12000x2048,8x12000x2048,64x12000x2048,256x12000x2048,8x8192x512 \
  --out $OUT/fam 2>&1 | tee $OUT/fam.log | grep -v '^{' | tail -26
cp $OUT/ab/*.json $OUT/ab.json 2>/dev/null; cp $OUT/fam/probe.json $OUT/fam.json 2>/dev/null; true
