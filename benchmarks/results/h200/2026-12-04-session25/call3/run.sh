set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
ln -sfn $PWD/plugin /tmp/site/gvr_topk_plugin
T=tests/unittest/_torch/thop/parallel
timeout 280 python3 benchmarks/probe_ab.py --rev scratch/n0,scratch/s256,scratch/s512 --no-new --reps 25 --jobs 16 --data decode,equal \
  --cells 1x4111x512,1x4111x1024,1x4111x2048,64x4111x512,64x4111x2048,512x4111x512,512x4111x2048,1x8192x512,1x8192x2048,512x8192x512,512x2100x512,1x3000x1024,1x6000x512 \
  --out $OUT/ab > $OUT/ab.log 2>&1; tail -36 $OUT/ab.log
timeout 280 python3 -m pytest -q -rf -p no:cacheprovider $T/test_gvr_selfsampling_topk.py $T/test_gvr_robustness.py $T/test_gvr_trt_plugin.py $T/test_gvr_dispatch.py -k "reg or aot or plugin or dispatch or tail" > $OUT/tests.log 2>&1; tail -8 $OUT/tests.log
