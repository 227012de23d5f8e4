set -x
cd scratch/h1
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site
timeout 540 python3 benchmarks/probe_sample.py --arms x2048,x1024,x2048/v4/n128,x1024/v4/n128 \
  --cells 512x131075x2048,512x131075x512,512x16387x2048,512x16387x512,256x131075x2048,64x131075x2048,64x131075x512,8x131075x2048,1x131075x2048 \
  --reps 25 --jobs 16 --out $OUT/x 2>&1 | tee $OUT/x.log | grep -v '^{' | tail -30
