python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin GVR_TOPK_GIT_COMMIT=8dd375e
mkdir -p $OUT/bench
[ -f scratch/prev/gvr_topk_bench.json ] && cp scratch/prev/gvr_topk_bench.json $OUT/bench/
timeout ${LIMIT:-540} python3 benchmarks/bench_gvr_topk.py --quick --resume --out $OUT/bench --no-progress --jobs 14 --markdown $OUT/bench/BENCHMARKS.md > $OUT/bench/run.log 2>&1
echo rc=$?; tail -45 $OUT/bench/run.log
