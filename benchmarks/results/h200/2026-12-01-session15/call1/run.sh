set -x -o pipefail
cd scratch/h1
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site
timeout 150 python3 benchmarks/probe_select_phases.py --out $OUT/sp 2>&1 | tee $OUT/sp.log | grep -v '^{' | tail -8
timeout 400 python3 benchmarks/probe_sample.py --arms j0,j1024,j512 \
  --cells 512x16387x2048,512x16387x512,512x131075x2048,512x131075x512,256x131075x2048,64x131075x2048,64x131075x512 \
  --reps 25 --jobs 16 --out $OUT/j 2>&1 | tee $OUT/j.log | grep -v '^{' | tail -14
