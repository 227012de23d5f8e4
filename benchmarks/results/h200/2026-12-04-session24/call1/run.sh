set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv
timeout 280 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/hw8,scratch/hw4 --no-new --reps 25 --jobs 16 --data decode,equal \
  --cells 1x4111x2048,8x4111x2048,64x4111x2048,512x4111x512,512x4111x2048,1x8192x2048,64x8192x2048,512x8192x2048,512x2500x512,512x6000x2048 \
  --out $OUT/ab > $OUT/ab.log 2>&1; tail -40 $OUT/ab.log
timeout 250 python3 benchmarks/probe_families.py --families reg,stream,split \
  --cells 8x4111x2048,64x4111x2048,128x4111x2048,256x4111x2048,512x4111x512,512x4111x2048,128x8192x2048,256x8192x2048,512x8192x2048,512x6000x2048,256x10000x2048,128x10000x2048 \
  --out $OUT/fam > $OUT/fam.log 2>&1; tail -45 $OUT/fam.log
