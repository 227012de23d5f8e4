#!/bin/bash
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 200 python3 scratch/position.py > $OUT/position.txt 2>&1; echo "P rc=$? $(( $(date +%s)-t0 ))s"
timeout 120 python3 -m pytest -q -x -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_warmup.py -k "capture_on_a_stream or torch_op_capture" > $OUT/pytest_warmup.txt 2>&1; echo "T rc=$? $(( $(date +%s)-t0 ))s"
tail -3 $OUT/pytest_warmup.txt
tail -18 $OUT/position.txt
