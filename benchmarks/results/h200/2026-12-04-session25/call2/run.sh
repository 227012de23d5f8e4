set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin GVR_TOPK_GIT_COMMIT=8dd375e
T=tests/unittest/_torch/thop/parallel
timeout 330 python3 benchmarks/bench_gvr_topk.py --suites grid --n 4111 --out $OUT/bench --no-progress --jobs 14 --markdown $OUT/bench/BENCHMARKS.md > $OUT/bench.log 2>&1; tail -32 $OUT/bench.log
for f in reg stream split; do
GVR_FUZZ_FAMILY=$f GVR_FUZZ_CASES=150 GVR_FUZZ_REPORT=$OUT/fuzz_$f.json timeout 75 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz_$f.log 2>&1
python3 -c "import json;d=json.load(open('$OUT/fuzz_$f.json'));print('$f',{k:v for k,v in d.items() if not isinstance(v,(list,dict))})"
done
