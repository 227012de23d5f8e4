set -x -o pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# The fused cooperative kernel (its spin barriers run only on a GPU): every path, both windows, rank and radix.
timeout 170 python3 -m pytest -q -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_split_coop.py -x 2>&1 | tee $OUT/tests.log | tail -4
# Arms: h0 = 6188111; h1 = the working tree at 7 bins bits, no rank (early slice loads, packed counts, one sample
# reduction); h2 = h1 at 10 bits; new = h2 with the all-pairs rank up to 64 candidates.
timeout 330 python3 benchmarks/probe_ab.py --rev scratch/h0,scratch/h1,scratch/h2 --reps 25 --jobs 16 --data decode,equal \
  --cells 1x16387x512,1x16387x2048,1x131075x2048,8x131075x2048,8x16387x512 --out $OUT/ab 2>&1 | tee $OUT/ab.log | grep -v '^{' | tail -30
