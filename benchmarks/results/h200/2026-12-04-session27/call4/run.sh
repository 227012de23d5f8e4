set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
cat scratch/sha
timeout 250 python3 scratch/call4/det_progress.py 2048-16384-8 > $OUT/det.log 2>&1; echo "det rc=$?"; tail -n 25 $OUT/det.log
