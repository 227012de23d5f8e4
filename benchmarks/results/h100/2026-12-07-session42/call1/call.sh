set -u
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $OUT/gpu.txt
cp scratch/sha $OUT/
T=scratch/m0,scratch/m256,scratch/m512
if grep -q H100 $OUT/gpu.txt; then
  # An H100: its A/B was measured last session; only the heavy_tail cliff at 8 rows, then the checks.
  timeout 100 python3 benchmarks/probe_ab.py --rev $T --no-new --reps 25 --jobs 14 --data heavy_tail --cells 8x131075x2048 --out $OUT/adv8 > $OUT/adv8.log 2>&1; echo "adv8 rc=$?"
  tail -3 $OUT/adv8.log
  AB=0; ADV=0
fi
CELLS=1x131075x2048,1x131075x512,1x16387x2048,1x16387x512,8x131075x2048,64x131075x2048,64x131075x512,128x65536x1024,512x131075x2048,512x131075x512,512x16387x2048,64x16387x2048
[ "${AB:-220}" != 0 ] && timeout ${AB:-220} python3 benchmarks/probe_ab.py --rev $T --no-new --reps 25 --jobs 14 --data decode --cells $CELLS --out $OUT/ab > $OUT/ab.log 2>&1; echo "ab rc=$?"
tail -24 $OUT/ab.log
[ "${ADV:-130}" != 0 ] && timeout ${ADV:-130} python3 benchmarks/probe_ab.py --rev $T --no-new --reps 25 --jobs 14 --data heavy_tail,bf16_ties,pm_inf,few_distinct --cells 8x131075x2048,512x131075x2048 --out $OUT/adv > $OUT/adv.log 2>&1; echo "adv rc=$?"
tail -16 $OUT/adv.log
timeout 60 python3 - <<'PY'
import os, torch
from gvr_topk.bench.cases import Case
from gvr_topk.bench.data import make_inputs
x = make_inputs(Case("adversarial", 8, 131075, 2048, data="heavy_tail"), k_max=2048, device="cuda")
torch.save({"logits": x.logits.cpu(), "lengths": x.lengths.cpu()}, os.path.join(os.environ["OUT"], "heavy_tail_8x131075.pt"))
print("saved", tuple(x.logits.shape))
PY
echo "save rc=$?"
cd scratch/cand && export PYTHONPATH=$PWD:/tmp/site
GVR_FUZZ_SEED=20261207 timeout ${FUZZ:-150} python3 -m pytest -q -rfE -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_fuzz.py > $OUT/fuzz_cand.txt 2>&1; echo "fuzz cand rc=$?"
tail -4 $OUT/fuzz_cand.txt
timeout ${TESTS:-120} python3 -m pytest -q -rfE -p no:cacheprovider tests/unittest/_torch/thop/parallel/test_gvr_selfsampling_topk.py -k "maxima or host_mirror or retry_ladder or without_enough_ties" tests/unittest/_torch/thop/parallel/test_gvr_split_coop.py::test_tie_rung_without_enough_ties_goes_on_down_the_ladder tests/unittest/_torch/thop/parallel/test_gvr_dispatch.py > $OUT/tests_cand.txt 2>&1; echo "tests cand rc=$?"
tail -4 $OUT/tests_cand.txt
