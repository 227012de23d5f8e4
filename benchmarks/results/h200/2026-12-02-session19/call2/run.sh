set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=e4017bb PATH=$PATH:/usr/local/cuda/bin
timeout 575 python3 benchmarks/bench_gvr_topk.py --quick --out $OUT/bench --no-progress --jobs 12 --markdown $OUT/bench/BENCHMARKS.md 2>&1 | tee $OUT/bench.log | tail -45
