set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime
timeout 120 python3 benchmarks/probe_eager_parts.py --out $OUT > $OUT/eager_parts.log 2>&1; tail -8 $OUT/eager_parts.log
timeout 260 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/g,scratch/w --no-new --reps 25 --jobs 16 --data decode,equal \
  --cells 1x4111x512,1x4111x2048,8x4111x512,64x4111x512,512x4111x512,512x4111x2048,1x8192x512,512x8192x512,1x3000x1024,512x3000x1024,1x2100x512,512x2100x512 \
  --out $OUT/ab > $OUT/ab.log 2>&1; tail -32 $OUT/ab.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool memcheck python3 tests/gpu/sanitize_cases.py --family split > $OUT/memcheck_split.log 2>&1; echo rc=$?; tail -6 $OUT/memcheck_split.log
