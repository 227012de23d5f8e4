set -x -o pipefail
cd scratch/h3
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site
timeout 500 python3 benchmarks/probe_ab.py --rev ../h71,../hA,../hB,../hC,../hD --no-new --jobs 16 --reps 25 \
  --cells 512x131075x2048,512x131075x512,256x131075x2048,64x131075x2048,64x131075x512,512x16387x2048,128x65536x2048 \
  --out $OUT/ab 2>&1 | tee $OUT/ab.log | grep -v '^{' | tail -20
