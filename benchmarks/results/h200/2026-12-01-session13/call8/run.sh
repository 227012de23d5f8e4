#!/bin/bash
# Session 13, call 8: Nsight Compute's per-instruction warp stall sampling (SourceCounters) on the streaming family's
# stage and select kernels at 512 x 131075 K=2048, exported per SASS line for reading offline.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD/scratch/h1:/tmp/site PATH=$PATH:/usr/local/cuda/bin
cd scratch/h1
for k in stage select; do
  timeout 75 ncu --kernel-name _gvr_${k}_kernel --launch-skip 3 --launch-count 1 --section WarpStateStats \
    --section SourceCounters -o $OUT/$k python3 benchmarks/probe_stream_kernels.py --plain --cells 512x131075x2048 \
    > $OUT/ncu_$k.log 2>&1; echo "ncu $k rc=$?"
  timeout 20 ncu --import $OUT/$k.ncu-rep --page source --csv --print-source sass > $OUT/${k}_sass.csv 2> $OUT/${k}_sass.err
  echo "export $k rc=$? $(wc -l < $OUT/${k}_sass.csv) lines"
done
ls -la $OUT; head -3 $OUT/stage_sass.csv | cut -c1-400
