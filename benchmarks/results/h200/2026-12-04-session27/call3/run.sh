set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
T=tests/unittest/_torch/thop/parallel
cat scratch/sha
timeout 200 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/t2,scratch/t8 --no-new --reps 25 --jobs 14 --data decode --cells 64x131075x2048,64x131075x512,512x131075x2048,512x16387x2048,128x65536x1024 --out $OUT/ab > $OUT/ab.log 2>&1; echo "ab rc=$?"; tail -n 14 $OUT/ab.log
timeout 260 python3 -m pytest -v -rfE --tb=short -p no:cacheprovider -p no:benchmark -n 4 --durations=8 $T/test_gvr_robustness.py -k "families_and_modes and (1024-131072 or 2048-16384 or 2048-262144) or concurrently and None-1024-default" > $OUT/robustness_rest.log 2>&1; echo "rb rc=$?"; grep -E "FAILED|ERROR|passed|failed|s call" $OUT/robustness_rest.log | tail -14
