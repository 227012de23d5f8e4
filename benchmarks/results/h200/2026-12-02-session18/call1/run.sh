set -x -o pipefail
cd scratch/h1
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat COMMIT) PATH=$PATH:/usr/local/cuda/bin
timeout 575 python3 benchmarks/bench_gvr_topk.py --quick --out $OUT/bench --no-progress --jobs 12 --markdown $OUT/bench/BENCHMARKS.md > $OUT/bench.log 2>&1; tail -45 $OUT/bench.log
