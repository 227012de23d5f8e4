set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
T=tests/unittest/_torch/thop/parallel
cat scratch/sha3
timeout 290 python3 -m pytest -q -rfE -p no:cacheprovider -n 12 $T/test_gvr_robustness.py $T/test_gvr_ops.py $T/test_gvr_direct_launch.py $T/test_gvr_arena.py $T/test_gvr_examples.py $T/test_gvr_policy.py -k "not compute_sanitizer" > $OUT/tests.log 2>&1; echo rc=$?; tail -8 $OUT/tests.log
