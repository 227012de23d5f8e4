set -x -o pipefail
cd scratch/h4
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/pytest*.whl ../../.whl/pluggy*.whl ../../.whl/iniconfig*.whl ../../.whl/packaging*.whl ../../.whl/pygments*.whl ../../.whl/pydantic*.whl ../../.whl/annotated*.whl ../../.whl/typing*.whl ../../.whl/pyyaml*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat COMMIT)
T=tests/unittest/_torch/thop/parallel
timeout 150 python3 -m pytest -v -p no:cacheprovider -rf $T/test_gvr_selfsampling_topk.py \
  -k "staging_outcomes or (misleading and stream) or (tie_rung and stream and 2048)" \
  > $OUT/tests.log 2>&1; grep -cE "PASSED" $OUT/tests.log; grep -E "FAILED|ERROR|passed|failed" $OUT/tests.log | tail -5
