#!/bin/bash
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt; cat $OUT/gpu.txt
cp scratch/sha $OUT/; git diff --stat > $OUT/tree_diff.txt
T=tests/unittest/_torch/thop/parallel
timeout 150 python3 benchmarks/probe_ab.py --rev scratch/p0,scratch/h0,scratch/s8 --no-new --reps 25 --jobs 14 --data decode --cells 64x131075x2048,512x131075x2048,512x16387x2048,1x16387x512 --out $OUT/ab > $OUT/ab.log 2>&1; echo "ab rc=$?"
timeout 80 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/s8 --no-new --reps 25 --jobs 14 --data pm_inf,bf16_ties,heavy_tail --cells 8x131075x2048,512x131075x2048 --out $OUT/adv > $OUT/adv.log 2>&1; echo "adv rc=$?"
timeout 75 python3 benchmarks/probe_sample.py --arms "l128,l96/p2816,i512/l64/p4096" --cells 512x131075x2048,128x131075x2048 --reps 25 --jobs 14 --out $OUT/sample > $OUT/sample.log 2>&1; echo "sample rc=$?"
timeout 140 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -p no:benchmark -n 14 $T/test_gvr_launch.py $T/test_gvr_direct_launch.py $T/test_gvr_staging.py $T/test_gvr_warmup.py > $OUT/pytest.log 2>&1; echo "pytest rc=$?"
GVR_FUZZ_FAMILY=stream GVR_FUZZ_CASES=150 GVR_FUZZ_REPORT=$OUT/fuzz.json timeout 110 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -p no:benchmark $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz.log 2>&1; echo "fuzz rc=$?"
echo "=== ab"; tail -16 $OUT/ab.log
echo "=== adv"; tail -14 $OUT/adv.log
echo "=== sample"; tail -14 $OUT/sample.log
echo "=== pytest"; tail -8 $OUT/pytest.log
echo "=== fuzz"; tail -6 $OUT/fuzz.log
