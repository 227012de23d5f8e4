set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
# Base: scratch/h3 (d4d63df, bin 0 of the row histogram counted by atomics) against the working tree (bin 0 taken
# from the row's count). Rows of ties put thousands of same-address atomics into bin 0.
timeout 240 python3 benchmarks/probe_ab.py --rev scratch/h3 --reps 25 --jobs 16 --data decode,equal,few_distinct,neg_inf_tail \
  --cells 8x131075x2048,1x16387x2048,8x16387x512,1x131075x2048 --out $OUT/ab 2>&1 | tee $OUT/ab.log | grep -v '^{' | tail -20
