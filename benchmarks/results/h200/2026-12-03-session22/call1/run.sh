set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
git log -1 --format=%h 2>/dev/null
# 1. The ladder's restage without counter atomics, with a look-ahead (working tree) against HEAD (h0), rows of ties.
timeout 150 python3 benchmarks/probe_ab.py --rev scratch/h0 --reps 15 --jobs 16 --data equal,few_distinct,neg_inf_tail \
  --cells 64x131075x2048,512x16387x2048,512x16387x512 --out $OUT/ab_ties 2>&1 | tee $OUT/ab_ties.log | grep -v '^{' | tail -12
# 2. STREAM_ACCEPT_LARGE_BIN 0 (B0) against the default (W1): decode cells, then few-distinct rows (now with the
#    faster ladder).
timeout 110 python3 benchmarks/probe_sample.py --reps 20 --jobs 16 --arms W1,B0 \
  --cells 512x16387x512,512x16387x2048,512x131075x2048,64x131075x2048 --out $OUT/b0_decode 2>&1 \
  | tee $OUT/b0_decode.log | grep -v '^{' | tail -7
timeout 60 python3 benchmarks/probe_sample.py --reps 15 --jobs 16 --arms W1,B0 --data few_distinct \
  --cells 512x16387x512,512x16387x2048 --out $OUT/b0_few 2>&1 | tee $OUT/b0_few.log | grep -v '^{' | tail -4
# 3. Where rows of ties spend their time now: per kernel (torch.profiler, warm L2).
for d in decode equal; do
timeout 40 python3 benchmarks/probe_stream_kernels.py --data $d --cells 64x131075x2048,512x16387x2048 --out $OUT/kern_$d 2>&1 \
  | tee $OUT/kern_$d.log | tail -2
done
# 4. Streaming-family fuzz (0df523a's select geometry, the new restage).
GVR_FUZZ_FAMILY=stream GVR_FUZZ_CASES=150 GVR_FUZZ_REPORT=$OUT/fuzz.json timeout 100 python3 -m pytest -q -p no:cacheprovider \
  tests/unittest/_torch/thop/parallel/test_gvr_fuzz.py -k fuzz_exact 2>&1 | tee $OUT/fuzz.log | tail -3
