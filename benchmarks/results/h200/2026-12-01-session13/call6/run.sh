#!/bin/bash
# Session 13, call 6: racecheck of the split family's quick sanitizer cases (look-ahead staging, long tile,
# cooperative form), after an unsanitized warm-up that compiles them.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD/scratch/h1:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTORCH_NO_CUDA_MEMORY_CACHING=1
cd scratch/h1
t0=$SECONDS
timeout 120 python3 tests/gpu/sanitize_cases.py --quick --family split > $OUT/warm.log 2>&1; echo "warm rc=$? $((SECONDS-t0))s" | tee -a $OUT/steps.txt
t0=$SECONDS
timeout 260 compute-sanitizer --tool racecheck --print-limit 20 python3 tests/gpu/sanitize_cases.py --quick --family split > $OUT/racecheck.log 2>&1; echo "racecheck rc=$? $((SECONDS-t0))s" | tee -a $OUT/steps.txt
tail -3 $OUT/warm.log; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" $OUT/racecheck.log | head -5; tail -4 $OUT/racecheck.log
