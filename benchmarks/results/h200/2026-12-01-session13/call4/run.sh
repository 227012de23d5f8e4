#!/bin/bash
# Session 13, call 4: Nsight Compute on the streaming family's three kernels at 512 rows (where the select and the
# stage kernel set the time), for the next session's plan.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD/scratch/h1:/tmp/site PATH=$PATH:/usr/local/cuda/bin
cd scratch/h1
SECS="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis"
# Compile first, outside ncu.
timeout 120 python3 benchmarks/probe_stream_kernels.py --plain --cells 512x16387x2048,512x131075x2048 > $OUT/warm.log 2>&1; echo "warm rc=$?"
for cell in 512x16387x2048 512x131075x2048; do
  timeout 150 ncu --kernel-name regex:_gvr_.*_kernel --launch-skip 9 --launch-count 3 $SECS \
     python3 benchmarks/probe_stream_kernels.py --plain --cells $cell > $OUT/ncu_$cell.txt 2>&1; echo "ncu $cell rc=$?"
done
for f in $OUT/ncu_*.txt; do echo "== $f"; grep -E "^  _gvr|Duration|Executed Ipc Active|Issue Slots Busy|Memory Throughput|DRAM Throughput|Executed Instructions  |Achieved Occupancy|Registers Per|No Eligible|Warp Cycles Per Issued" $f; done
