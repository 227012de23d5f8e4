set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# Arms: h0 = 428955f; h1 = h0 with SPLIT_COOP_MIN_SPLIT 2 (the cooperative split form at 64 x 16387, 2 programs
# per row); new = the working tree: the streaming family's select from a row histogram counted while staging.
timeout 300 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/h1 --reps 25 --jobs 16 --data decode \
  --cells 64x16387x512,64x16387x2048,512x16387x512,512x16387x2048,64x131075x512,64x131075x2048,512x131075x2048 \
  --out $OUT/ab 2>&1 | tee $OUT/ab.log | grep -v '^{' | tail -14
timeout 200 python3 benchmarks/probe_ab.py --rev scratch/h0 --reps 15 --jobs 16 --data equal,few_distinct,neg_inf_tail,pm_inf \
  --cells 64x131075x2048,512x16387x2048 --out $OUT/ab_ties 2>&1 | tee $OUT/ab_ties.log | grep -v '^{' | tail -14
