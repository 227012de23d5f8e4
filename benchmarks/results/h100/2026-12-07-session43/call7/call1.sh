set -u
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $OUT/gpu.txt
cp scratch/sha scratch/call1.sh $OUT/
T=scratch/r0,scratch/r128
CELLS=1x131075x2048,1x131075x512,1x16387x2048,8x131075x2048,32x131075x2048,64x131075x2048,64x131075x512,128x65536x1024,128x131075x2048,512x131075x2048
timeout ${AB:-250} python3 benchmarks/probe_ab.py --rev $T --no-new --reps 25 --jobs 14 --data decode --cells $CELLS --out $OUT/ab > $OUT/ab.log 2>&1; echo "ab rc=$?"
tail -24 $OUT/ab.log
timeout ${ADV:-130} python3 benchmarks/probe_ab.py --rev $T --no-new --reps 25 --jobs 14 --data heavy_tail,bf16_ties,pm_inf,few_distinct --cells 8x131075x2048,128x131075x2048 --out $OUT/adv > $OUT/adv.log 2>&1; echo "adv rc=$?"
tail -16 $OUT/adv.log
