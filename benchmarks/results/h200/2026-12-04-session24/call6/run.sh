python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
for c in 1x4111x2048 512x4111x2048; do
  timeout 150 ncu --set full --import-source no -k regex:reg --launch-skip 2 --launch-count 1 --page details --print-details all \
    python3 scratch/call6/one.py $c > $OUT/ncu_$c.txt 2>&1
  grep -E "exact|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|Stall|Shared Memory Configuration Size|Dynamic Shared|Static Shared|Local Memory Spilling|Executed Instructions  " $OUT/ncu_$c.txt | head -40
done
timeout 100 ncu --section WarpStateStats --section InstructionStats --section SourceCounters -k regex:reg --launch-skip 2 --launch-count 1 --print-details all python3 scratch/call6/one.py 1x4111x2048 > $OUT/ncu_src_1.txt 2>&1; grep -iE "stall|warning|est" $OUT/ncu_src_1.txt | head -30
