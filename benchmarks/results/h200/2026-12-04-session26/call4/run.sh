set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
ln -sfn $PWD/plugin /tmp/site/gvr_topk_plugin
T=tests/unittest/_torch/thop/parallel
git log --oneline -1 2>/dev/null; cat scratch/sha2
timeout 330 python3 -m pytest -q -rfE -p no:cacheprovider -n 10 $T/test_gvr_selfsampling_topk.py $T/test_gvr_trt_plugin.py $T/test_gvr_dispatch.py $T/test_gvr_warmup.py \
  -k "reg or aot or plugin or route or degenerate or high_anchor or hinted_matches or warmup or group_bracket or capture" > $OUT/tests.log 2>&1; echo rc=$?; tail -6 $OUT/tests.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 110 compute-sanitizer --tool memcheck python3 tests/gpu/sanitize_cases.py --family reg > $OUT/memcheck_reg.log 2>&1; echo rc=$?; grep -v "^\[" $OUT/memcheck_reg.log | tail -4; grep -c exact $OUT/memcheck_reg.log
