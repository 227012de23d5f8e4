set -x -o pipefail
cd scratch/h3
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site
timeout 400 python3 benchmarks/probe_sample.py --arms v8/n128,v16/n64,v8/n80,v8/n96 \
  --cells 512x16387x2048,512x16387x512,512x131075x2048,512x131075x512,256x131075x2048 \
  --reps 25 --jobs 16 --out $OUT/v 2>&1 | tee $OUT/v.log | grep -v '^{' | tail -14
