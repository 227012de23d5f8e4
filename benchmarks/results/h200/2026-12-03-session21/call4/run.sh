set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
# 1. Rows of a few distinct values at 512 x 16387 under the new select geometry alone (call 3 measured it with the
#    wait sleep too): h0 = 428955f, new = 0df523a.
timeout 80 python3 benchmarks/probe_ab.py --rev scratch/h0 --reps 15 --jobs 16 --data few_distinct,equal \
  --cells 512x16387x2048,512x16387x512 --out $OUT/ab_ties 2>&1 | tee $OUT/ab_ties.log | grep -v '^{' | tail -8
# 2. The quick benchmark of 0df523a (all 25 cases).
export GVR_TOPK_GIT_COMMIT=0df523a
timeout 480 python3 benchmarks/bench_gvr_topk.py --quick --out $OUT/bench --no-progress --jobs 14 \
  --markdown $OUT/bench/BENCHMARKS.md > $OUT/bench.log 2>&1; echo rc=$?; tail -30 $OUT/bench.log
