set -x
cd scratch/h3
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site
timeout 420 python3 benchmarks/probe_sample.py --arms x2048,x1024 \
  --cells 64x131075x2048,512x131075x2048,512x131075x512,256x131075x2048,256x131075x512,128x131075x2048,64x131075x512,512x65536x2048,8x131075x2048,1x131075x2048,1x131075x512 \
  --reps 25 --jobs 16 --out $OUT/x 2>&1 | tee $OUT/x.log | grep -v '^{' | tail -20
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_selfsampling_topk.py \
  -k "retry_ladder or first_rung or tied" 2>&1 | tee $OUT/tests.log | tail -4
