#!/bin/bash
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 560 python3 -m pytest -q -rfE -n 8 -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_warmup.py > $OUT/pytest_warmup.txt 2>&1; echo "T rc=$? $(( $(date +%s)-t0 ))s"
tail -15 $OUT/pytest_warmup.txt
