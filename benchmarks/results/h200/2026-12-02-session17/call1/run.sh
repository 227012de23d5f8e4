set -x -o pipefail
cd scratch/h1
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat COMMIT) PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 330 python3 benchmarks/probe_sample.py --arms H0,H1,y16000 \
  --cells 1x16387x2048,1x131075x2048,8x16387x2048,8x131075x2048,1x65536x1024,64x16387x512,64x16387x2048 \
  --reps 25 --jobs 16 --out $OUT/p 2>&1 | tee $OUT/p.log | grep -v '^{' | tail -14
T=tests/unittest/_torch/thop/parallel
timeout 170 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_split_coop.py 2>&1 | tee $OUT/coop_tests.log | tail -4
