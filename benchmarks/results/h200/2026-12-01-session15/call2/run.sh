set -x -o pipefail
cd scratch/h2
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=bbddb6c
timeout 330 python3 benchmarks/probe_sample.py --arms z0,z1,z2,A1,A2,A2/z2 \
  --cells 512x131075x2048,512x131075x512,512x16387x2048,512x16387x512,256x131075x2048,64x131075x2048,64x131075x512,128x65536x2048 \
  --reps 25 --jobs 16 --out $OUT/p 2>&1 | tee $OUT/p.log | grep -v '^{' | tail -16
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_staging.py \
  tests/unittest/_torch/thop/parallel/test_gvr_launch.py \
  tests/unittest/_torch/thop/parallel/test_gvr_selfsampling_topk.py -k "survivors or apart or staging_outcomes or tie_rung or misleading" \
  2>&1 | tee $OUT/tests.log | tail -4
