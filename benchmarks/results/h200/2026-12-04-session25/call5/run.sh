python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
T=tests/unittest/_torch/thop/parallel
for f in stream:200 split:170; do fam=${f%%:*}; lim=${f##*:}
GVR_FUZZ_FAMILY=$fam GVR_FUZZ_CASES=150 GVR_FUZZ_REPORT=$OUT/fuzz_$fam.json timeout $lim python3 -m pytest -q -p no:cacheprovider $T/test_gvr_fuzz.py -k fuzz_exact > $OUT/fuzz_$fam.log 2>&1
python3 -c "import json;d=json.load(open('$OUT/fuzz_$fam.json'));print('$fam',{k:v for k,v in d.items() if not isinstance(v,(list,dict))})"
done
