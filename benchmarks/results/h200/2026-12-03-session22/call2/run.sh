set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
# h0 = HEAD (22e190a); h1 = the ladder's restage without counter atomics, with a look-ahead (call 1's tree);
# new = h1 plus no slot writes from a staging tile reserved past a full slot.
# 1. Rows of ties: the streaming cells and the split family's adversarial cell.
timeout 170 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/h1 --reps 15 --jobs 16 --data equal,few_distinct,neg_inf_tail \
  --cells 64x131075x2048,512x16387x2048,8x131075x2048 --out $OUT/ab_ties 2>&1 | tee $OUT/ab_ties.log | grep -v '^{' | tail -13
# 2. Decode cells of both families (the staging loops' code changed by a few instructions).
timeout 150 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/h1 --reps 25 --jobs 16 \
  --cells 1x131075x2048,8x131075x2048,64x16387x2048,64x131075x2048,512x16387x512,512x16387x2048,512x131075x2048 \
  --out $OUT/ab_decode 2>&1 | tee $OUT/ab_decode.log | grep -v '^{' | tail -11
# 3. Where the streaming family's all-equal rows spend their time now (torch.profiler, warm L2).
timeout 40 python3 benchmarks/probe_stream_kernels.py --data equal --cells 64x131075x2048,512x16387x2048 --out $OUT/kern_equal 2>&1 \
  | tee $OUT/kern_equal.log | tail -2
# 4. Fuzz of both families on the new code.
for fam in stream split; do
GVR_FUZZ_FAMILY=$fam GVR_FUZZ_CASES=60 GVR_FUZZ_REPORT=$OUT/fuzz_$fam.json timeout 90 python3 -m pytest -q -p no:cacheprovider \
  tests/unittest/_torch/thop/parallel/test_gvr_fuzz.py -k fuzz_exact 2>&1 | tee $OUT/fuzz_$fam.log | tail -2
done
