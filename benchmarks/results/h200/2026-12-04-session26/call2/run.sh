set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
ln -sfn $PWD/plugin /tmp/site/gvr_topk_plugin
T=tests/unittest/_torch/thop/parallel
timeout 170 python3 benchmarks/probe_ab.py --rev scratch/h0 --reps 25 --jobs 16 --data decode,equal \
  --cells 1x4111x512,1x4111x2048,64x4111x512,512x4111x512,1x8192x512,1x8192x2048,512x8192x512,1x6000x1024,1x3000x1024,64x3000x1024,132x3000x1024,133x3000x1024,512x3000x1024,1x2100x512,132x2100x512,512x2100x512 \
  --out $OUT/ab > $OUT/ab.log 2>&1; tail -22 $OUT/ab.log
GVR_TOPK_GIT_COMMIT=$(cat scratch/sha) timeout 130 python3 benchmarks/bench_gvr_topk.py --suites grid --n 4111 --out $OUT/g4111 --no-progress --no-plot --jobs 14 > $OUT/g4111.log 2>&1; grep -E "hint-free|geomean|exact|eager" $OUT/g4111.log | head -12
GVR_FUZZ_FAMILY=reg GVR_FUZZ_CASES=150 GVR_FUZZ_REPORT=$OUT/fuzz_reg.json timeout 45 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz.log 2>&1; tail -1 $OUT/fuzz.log
timeout 90 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_selfsampling_topk.py $T/test_gvr_trt_plugin.py $T/test_gvr_dispatch.py -k "reg or aot or plugin or route" > $OUT/tests.log 2>&1; tail -3 $OUT/tests.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 130 compute-sanitizer --tool memcheck python3 tests/gpu/sanitize_cases.py --family split --only varlen > $OUT/memcheck_split.log 2>&1; echo rc=$?; tail -8 $OUT/memcheck_split.log
