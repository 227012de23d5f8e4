set -x -o pipefail
cd scratch/h3
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat COMMIT)
T=tests/unittest/_torch/thop/parallel
timeout 160 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_robustness.py -k "two_streams and split" 2>&1 | tee $OUT/tests.log | tail -3
