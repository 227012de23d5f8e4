set -x
cd scratch/h1
python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv
timeout 480 python3 scratch/probe_streams.py --out $OUT/streams 2>&1 | tee $OUT/streams.log | tail -30
