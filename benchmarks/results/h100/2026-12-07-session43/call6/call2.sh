set -u
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD/scratch/cand:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
cd scratch/cand
P=tests/unittest/_torch/thop/parallel
timeout ${TESTS:-400} python3 -m pytest -q -rfE -p no:cacheprovider -n 4 $P/test_gvr_selfsampling_topk.py -k "maxima or host_mirror or retry_ladder or without_enough_ties" $P/test_gvr_split_coop.py $P/test_gvr_dispatch.py > $OUT/tests_cand.txt 2>&1; echo "tests cand rc=$?"
tail -6 $OUT/tests_cand.txt
