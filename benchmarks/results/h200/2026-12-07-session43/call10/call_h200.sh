if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100; then
  echo "H100: more of the candidate's GPU tests"
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
  nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
  export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
  P=tests/unittest/_torch/thop/parallel
  timeout 330 python3 -m pytest -q -rfE -p no:cacheprovider -n 4 $P/test_gvr_selfsampling_topk.py $P/test_gvr_staging.py $P/test_gvr_launch.py $P/test_gvr_direct_launch.py $P/test_gvr_ops.py > $OUT/tests_cand2.txt 2>&1; echo "tests cand2 rc=$?"
  tail -6 $OUT/tests_cand2.txt
else
  echo "H200: the A/B"; AB=230 ADV=120 bash scratch/call1.sh
fi
