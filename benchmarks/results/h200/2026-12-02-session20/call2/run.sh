set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=d4d63df PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# The quick benchmark of d4d63df; a run cut by the limit is finished by the next call with --resume.
timeout 575 python3 benchmarks/bench_gvr_topk.py --quick --out $OUT/bench --no-progress --jobs 14 \
  --markdown $OUT/bench/BENCHMARKS.md 2>&1 | tee $OUT/bench.log | tail -40
