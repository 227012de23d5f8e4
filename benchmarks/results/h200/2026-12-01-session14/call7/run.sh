set -x -o pipefail
cd scratch/h7
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_selfsampling_topk.py \
  -k "retry_ladder or first_rung" 2>&1 | tee $OUT/ladder.log | tail -4
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_split_coop.py \
  -k "fooling or hinted or every_path" 2>&1 | tee $OUT/coop.log | tail -4
