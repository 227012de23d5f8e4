set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
# Arms: h0 = 428955f; h1 = the working tree with STREAM_WAIT_SLEEP_NS 0 (the select past one wave of short rows at
# 4 warps / 128 registers); new = the working tree (h1 plus a 128 ns sleep between the streaming waits' polls).
timeout 330 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/h1 --reps 25 --jobs 16 --data decode \
  --cells 512x16387x512,512x16387x2048,512x131075x512,512x131075x2048,64x131075x512,64x131075x2048 \
  --out $OUT/ab 2>&1 | tee $OUT/ab.log | grep -v '^{' | tail -12
timeout 150 python3 benchmarks/probe_ab.py --rev scratch/h0 --reps 15 --jobs 16 --data equal,few_distinct \
  --cells 512x16387x2048 --out $OUT/ab_ties 2>&1 | tee $OUT/ab_ties.log | grep -v '^{' | tail -8
