set -x -o pipefail
cd scratch/h7
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/pytest*.whl ../../.whl/pluggy*.whl ../../.whl/iniconfig*.whl ../../.whl/packaging*.whl ../../.whl/pygments*.whl ../../.whl/pydantic*.whl ../../.whl/annotated*.whl ../../.whl/typing*.whl ../../.whl/pyyaml*.whl ../../.whl/hypothesis*.whl ../../.whl/sortedcontainers*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site
timeout 140 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_selfsampling_topk.py \
  -k "first_rung" 2>&1 | tee $OUT/first_rung.log | tail -4
