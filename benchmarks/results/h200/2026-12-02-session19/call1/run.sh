set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site GVR_TOPK_GIT_COMMIT=$(cat scratch/h2/COMMIT)+tie PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# Base: scratch/h2 (commit 2262ee5, the finisher alone runs the tie rung) against the working tree (shared tie rung).
timeout 330 python3 benchmarks/probe_ab.py --rev scratch/h2 --reps 25 --jobs 16 --data decode,equal,neg_inf_tail,few_distinct \
  --cells 1x16387x2048,1x131075x512,8x131075x2048,8x16387x512 --out $OUT/ab 2>&1 | tee $OUT/ab.log | grep -v '^{' | tail -24
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_split_coop.py -k "tie or every_path" 2>&1 | tee $OUT/tests.log | tail -5
