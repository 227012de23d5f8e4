#!/bin/bash
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt; cat $OUT/gpu.txt
cp scratch/sha $OUT/
CELLS=1x131075x2048,8x131075x2048,64x131075x2048,128x131075x2048,512x131075x2048,512x131075x512,64x131075x512,256x65536x2048,512x16387x2048,64x16387x2048,1x16387x512
timeout 200 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/s8 --reps 25 --jobs 14 --data decode --cells $CELLS --out $OUT/ab > $OUT/ab.log 2>&1; echo "ab rc=$?"
timeout 90 python3 benchmarks/probe_sample.py --arms ",l96/p2816,i512/l64/p4096" --cells 512x131075x2048,128x131075x2048,512x131075x512 --reps 25 --jobs 14 --out $OUT/sample > $OUT/sample.log 2>&1; echo "sample rc=$?"
timeout 75 ncu --kernel-name _gvr_stage_kernel --launch-skip 3 --launch-count 1 --section WarpStateStats --section SourceCounters -o $OUT/stage python3 benchmarks/probe_stream_kernels.py --plain --cells 512x131075x2048 > $OUT/ncu.log 2>&1; echo "ncu rc=$?"
ncu --import $OUT/stage.ncu-rep --page source --csv --print-source sass > $OUT/stage_sass.csv 2>>$OUT/ncu.log && python3 benchmarks/ncu_stalls.py $OUT/stage_sass.csv --top 30 > $OUT/stalls.txt 2>&1; echo "stalls rc=$?"
for t in h0 s8; do
  PYTHONPATH=$PWD/scratch/$t:/tmp/site timeout 50 python3 -c "import gvr_topk, gvr_topk.tuning as t; print(gvr_topk.__file__, t.SAMPLE_STOP_DIV, t.SAMPLE_LOW_GROUPS)" > $OUT/kern_$t.log 2>&1
  PYTHONPATH=$PWD/scratch/$t:/tmp/site timeout 50 python3 benchmarks/probe_stream_kernels.py --arms ",P0/W0" --out $OUT/kern/$t >> $OUT/kern_$t.log 2>&1; echo "kern $t rc=$?"
done
timeout 120 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/s8 --reps 25 --jobs 14 --data heavy_tail,bf16_ties,pm_inf,few_distinct --cells 64x131075x2048,8x131075x2048,512x131075x2048 --out $OUT/adv > $OUT/adv.log 2>&1; echo "adv rc=$?"
for f in ab sample ncu; do echo "=== $f"; tail -25 $OUT/$f.log; done
echo "=== stalls"; head -45 $OUT/stalls.txt
for t in h0 s8; do echo "=== kern $t"; tail -14 $OUT/kern_$t.log; done
echo "=== adv"; tail -30 $OUT/adv.log
