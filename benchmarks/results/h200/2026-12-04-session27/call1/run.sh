set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
T=tests/unittest/_torch/thop/parallel
cat scratch/sha
for f in robustness ops direct_launch arena examples policy; do
  timeout 170 python3 -m pytest -v -rfE --tb=short -p no:cacheprovider -p no:benchmark -n 14 $T/test_gvr_$f.py -k "not compute_sanitizer" > $OUT/$f.log 2>&1; echo "$f rc=$?"; grep -E "FAILED|ERROR|passed|failed" $OUT/$f.log | tail -5
done
