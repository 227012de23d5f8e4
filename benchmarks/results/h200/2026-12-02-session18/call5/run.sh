set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/pytest*.whl .whl/pluggy*.whl .whl/iniconfig*.whl .whl/packaging*.whl .whl/pygments*.whl .whl/hypothesis*.whl .whl/sortedcontainers*.whl .whl/pyyaml*.whl .whl/pydantic*.whl .whl/annotated_types*.whl .whl/typing_*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=50702ee
T=tests/unittest/_torch/thop/parallel
timeout 70 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_staging.py -k "hist" 2>&1 | tee $OUT/staging_tests.log | tail -3
timeout 140 python3 -m pytest -q -p no:cacheprovider $T/test_gvr_split_coop.py 2>&1 | tee $OUT/coop_tests.log | tail -3
