set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
# h0 = HEAD 74dd186; new = the working tree (ballot staging, stage kernel's row_stride unspecialised);
# hZ = new with STREAM_STAGE_SPARSE = 0 (the ballot's dense staging on the long tile too).
# 1. The GPU tests of the staging (the ballot's ranks, column order, the compiled layout at an aligned stride).
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_staging.py -x 2>&1 | tail -4
# 2. A/B in one process, exactness checked.
timeout 240 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/hZ --reps 25 --jobs 16 --data decode,equal \
  --cells 512x16387x2048,512x32768x2048,200x20000x1024,512x131075x2048,64x131075x2048,128x65536x2048 \
  --out $OUT/ab 2>&1 | tee $OUT/ab.log | grep -v '^{' | tail -22
# 3. Forced families on short rows (the reg family's 512 x 16384 cell measured slower than torch.topk in call 1).
timeout 170 python3 benchmarks/probe_families.py --families reg,stream,split \
  --cells 8x4111x2048,64x4111x2048,512x4111x512,512x4111x2048,64x8192x2048,512x8192x2048,128x16384x2048,512x16384x2048 \
  --out $OUT/fam 2>&1 | tee $OUT/fam.log | grep -v '^{' | tail -24
cp $OUT/ab/*.json $OUT/ab.json 2>/dev/null; cp $OUT/fam/probe.json $OUT/fam.json 2>/dev/null; true
