set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat scratch/h3/COMMIT)+top PATH=$PATH:/usr/local/cuda/bin
# Base: scratch/h3 (commit e4017bb, the window's top is the sample's largest key) against the working tree (its
# largest key below +inf).
timeout 250 python3 benchmarks/probe_ab.py --rev scratch/h3 --reps 25 --jobs 16 --data decode,pm_inf \
  --cells 8x131075x2048,1x131075x2048,1x16387x512 --out $OUT/ab 2>&1 | tee $OUT/ab.log | grep -v '^{' | tail -14
