set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
R=$PWD
T=tests/unittest/_torch/thop/parallel
# hint read (4d00c3b) against hint ignored (working tree), the benchmark's grid at 4111 and 8192 columns
(cd /tmp && PYTHONPATH=$R/scratch/h1:/tmp/site GVR_TOPK_GIT_COMMIT=4d00c3b timeout 100 python3 -m gvr_topk bench --suites grid --n 4111,8192 --out $OUT/b_h1 --no-progress --no-plot --jobs 14 > $OUT/b_h1.log 2>&1)
(cd /tmp && PYTHONPATH=$R:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat $R/scratch/sha)+ timeout 100 python3 -m gvr_topk bench --suites grid --n 4111,8192 --out $OUT/b_new --no-progress --no-plot --jobs 14 > $OUT/b_new.log 2>&1)
grep -E "^grid/|geomean|hint-free|eager" $OUT/b_h1.log $OUT/b_new.log | cut -c1-175
export PYTHONPATH=$R:/tmp/site
ln -sfn $PWD/plugin /tmp/site/gvr_topk_plugin
GVR_FUZZ_FAMILY=reg GVR_FUZZ_CASES=150 GVR_FUZZ_REPORT=$OUT/fuzz_reg.json timeout 40 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz.log 2>&1; tail -1 $OUT/fuzz.log
timeout 170 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_selfsampling_topk.py $T/test_gvr_trt_plugin.py $T/test_gvr_dispatch.py -k "reg or aot or plugin or route or degenerate or high_anchor or hinted_matches" > $OUT/tests.log 2>&1; tail -3 $OUT/tests.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 70 compute-sanitizer --tool memcheck python3 tests/gpu/sanitize_cases.py --family split --only "long staging tile K=2048" > $OUT/memcheck_split.log 2>&1; echo rc=$?
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool memcheck python3 tests/gpu/sanitize_cases.py --family split --ties-only >> $OUT/memcheck_split.log 2>&1; echo rc=$?; grep -v "^\[" $OUT/memcheck_split.log | tail -5; grep -c exact $OUT/memcheck_split.log
