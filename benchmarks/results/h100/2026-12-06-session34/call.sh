python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T=tests/unittest/_torch/thop/parallel
t0=$(date +%s)
timeout 260 python3 benchmarks/probe_sample.py --arms "defaults,D1" --cells varlen/b4xnn4/cr4/131072/k2048,varlen/b32xnn2/cr4/131072/k2048,1x131075x2048,8x131075x2048,8x16387x512,16x65536x2048 --reps 25 --jobs 14 --out $OUT/d1 2>&1 | tail -30
echo "probe rc/time $? $(( $(date +%s) - t0 ))"; t0=$(date +%s)
timeout 150 python3 -m pytest -q -x -p no:cacheprovider $T/test_gvr_split_coop.py -k balance 2>&1 | tail -4
echo "balance tests time $(( $(date +%s) - t0 ))"; t0=$(date +%s)
GVR_FUZZ_TUNING=SPLIT_BALANCE=1 GVR_FUZZ_FAMILY=split GVR_FUZZ_CASES=200 GVR_FUZZ_SEED=3401 GVR_FUZZ_REPORT=$OUT/fuzz_d1.json timeout 130 python3 -m pytest -q -x -p no:cacheprovider $T/test_gvr_fuzz.py 2>&1 | tail -4
echo "fuzz time $(( $(date +%s) - t0 ))"
