set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
timeout 400 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/r16m64,scratch/r8m128,scratch/r8m80 --no-new --reps 25 --jobs 16 --data decode,equal \
  --cells 1x4111x2048,64x4111x2048,256x4111x2048,512x4111x512,512x4111x2048,1x8192x2048,512x8192x2048,512x2500x512,512x6000x2048,512x1500x512 \
  --out $OUT/ab > $OUT/ab.log 2>&1; tail -32 $OUT/ab.log
