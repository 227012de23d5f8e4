set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
ln -sfn $PWD/plugin /tmp/site/gvr_topk_plugin
T=tests/unittest/_torch/thop/parallel
timeout 400 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/t50,scratch/tw --no-new --reps 25 --jobs 16 --data decode,equal \
  --cells 1x4111x2048,8x4111x2048,64x4111x2048,512x4111x2048,1x4111x512,512x4111x512,512x4600x2048,512x5000x2048,1x6000x2048,512x6000x2048,1x8192x2048,64x8192x2048,512x8192x2048,1x3000x1024,512x3000x1024,512x2100x512 \
  --out $OUT/ab > $OUT/ab.log 2>&1; tail -45 $OUT/ab.log
GVR_FUZZ_FAMILY=reg GVR_FUZZ_CASES=150 GVR_FUZZ_REPORT=$OUT/fuzz_reg.json timeout 60 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz.log 2>&1; tail -3 $OUT/fuzz.log; python3 -c "import json;d=json.load(open('$OUT/fuzz_reg.json'));print({k:v for k,v in d.items() if not isinstance(v,(list,dict))})"
timeout 100 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_selfsampling_topk.py $T/test_gvr_robustness.py $T/test_gvr_trt_plugin.py -k "reg or aot or plugin" > $OUT/tests.log 2>&1; tail -5 $OUT/tests.log
