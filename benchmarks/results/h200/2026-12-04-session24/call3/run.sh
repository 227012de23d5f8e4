set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
timeout 560 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/rb5,scratch/rb6,scratch/rb7,scratch/rb5m --no-new --reps 25 --jobs 16 --data decode,equal \
  --cells 1x4111x2048,64x4111x2048,512x4111x2048,512x4111x512,1x8192x2048,512x8192x2048,512x2500x512,1x131075x2048,8x131075x2048,64x16387x2048,512x16387x2048,64x131075x2048,512x131075x2048 \
  --out $OUT/ab > $OUT/ab.log 2>&1; tail -40 $OUT/ab.log
