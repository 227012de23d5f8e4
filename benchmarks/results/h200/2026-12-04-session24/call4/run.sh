set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
T=tests/unittest/_torch/thop/parallel
timeout 230 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/new --no-new --reps 25 --jobs 16 --data decode,equal \
  --cells 1x4111x2048,64x4111x2048,256x4111x2048,512x4111x512,512x4111x2048,1x8192x2048,512x8192x2048,512x6000x2048,8x10000x2048,512x10000x2048,512x16384x2048,1x131075x2048,512x131075x2048 \
  --out $OUT/ab > $OUT/ab.log 2>&1; tail -22 $OUT/ab.log
GVR_FUZZ_FAMILY=reg GVR_FUZZ_CASES=150 GVR_FUZZ_REPORT=$OUT/fuzz_reg.json timeout 80 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz.log 2>&1; tail -3 $OUT/fuzz.log
timeout 130 python3 -m pytest -q -p no:cacheprovider -x $T/test_gvr_selfsampling_topk.py $T/test_gvr_robustness.py $T/test_gvr_trt_plugin.py $T/test_gvr_dispatch.py -k "reg or aot or dispatch" > $OUT/tests.log 2>&1; tail -5 $OUT/tests.log
