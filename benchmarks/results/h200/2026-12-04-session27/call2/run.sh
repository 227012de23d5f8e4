set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
T=tests/unittest/_torch/thop/parallel
cat scratch/sha
timeout 70 python3 benchmarks/probe_stream_kernels.py --out $OUT/sk --cells 64x131075x2048,512x131075x2048,64x131075x512 > $OUT/stream_kernels.log 2>&1; echo "sk rc=$?"; tail -n 20 $OUT/stream_kernels.log
timeout 60 python3 -m pytest -v -rfE --tb=short -p no:cacheprovider -p no:benchmark $T/test_gvr_direct_launch.py -k programmatic > $OUT/direct_launch.log 2>&1; echo "dl rc=$?"; tail -n 3 $OUT/direct_launch.log
timeout 110 python3 -m pytest -v -rfE --tb=short -p no:cacheprovider -p no:benchmark -n 8 $T/test_gvr_examples.py > $OUT/examples.log 2>&1; echo "ex rc=$?"; tail -n 3 $OUT/examples.log
timeout 320 python3 -m pytest -v -rfE --tb=short -p no:cacheprovider -p no:benchmark -n 15 $T/test_gvr_robustness.py -k "not compute_sanitizer" > $OUT/robustness.log 2>&1; echo "rb rc=$?"; grep -E "FAILED|ERROR" $OUT/robustness.log | head; tail -n 3 $OUT/robustness.log
