python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 230 python3 benchmarks/probe_sample.py --arms "defaults,z3,L6,z3/L6,s2/i2048/p1024" --cells 1x131075x2048,8x131075x2048,64x131075x2048,128x131075x2048,256x131075x2048,512x131075x2048,512x131075x512 --reps 25 --jobs 14 --out $OUT/probe 2>&1 | tail -30
echo "probe rc/time $? $(( $(date +%s) - t0 ))"; t0=$(date +%s)
GVR_STEPS=memcheck GVR_SANITIZE_FAMILY=split timeout 330 bash tests/gpu/run_gpu_checks.sh $OUT/checks 2>&1 | tail -5
cat $OUT/checks/summary.txt
grep -E "ERROR SUMMARY|cases" $OUT/checks/logs/memcheck.log | tail -5
echo "memcheck time $(( $(date +%s) - t0 ))"
