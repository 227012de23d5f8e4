#!/bin/bash
# usage: bash scratch/dev.sh MODE   (MODE: rung | bench | decode | tests | auto)
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD:/tmp/site PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
export GVR_TOPK_GIT_COMMIT=$(git rev-parse --short HEAD 2>/dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
MODE=${1:-auto}
if [ "$MODE" = auto ]; then
  if nvidia-smi | grep -q H100; then MODE=${H100MODE:-all}; else MODE=${H200MODE:-bench}; fi
fi
echo "mode: $MODE"
T=tests/unittest/_torch/thop/parallel
case $MODE in
outline)
  # 1. GPU tests of the outlined rare paths (both settings) and the tie/first-rung tests
  timeout --kill-after=5 150 python3 -m pytest -q -rfE -p no:cacheprovider -n 8 $T/test_gvr_split_coop.py \
    -k "rare_paths or switch_settings or tie_rows" > $OUT/outline_tests.log 2>&1
  echo "outline tests rc=$?"; tail -4 $OUT/outline_tests.log
  echo "elapsed $SECONDS s"
  # 2. the A/B: decode cells, then rows of ties (the outlined tie rung) and heavy_tail (the outlined first rung)
  timeout --kill-after=5 ${DLIM:-230} python3 benchmarks/probe_sample.py --out $OUT/probe_outline --reps 25 \
    --arms defaults,O1,E1,O1/E1 --cells ${OCELLS:-1x131075x2048,1x131075x512,1x16387x2048,8x131075x2048,4x65536x1024} \
    > $OUT/probe_outline.txt 2>&1
  echo "probe rc=$?"; tail -16 $OUT/probe_outline.txt
  echo "elapsed $SECONDS s"
  for d in equal heavy_tail; do
    timeout --kill-after=5 ${ALIM:-70} python3 benchmarks/probe_sample.py --out $OUT/probe_$d --data $d --reps 15 \
      --arms defaults,O1,O1/E1 --cells 8x131075x2048 > $OUT/probe_$d.txt 2>&1
    echo "$d rc=$?"; tail -6 $OUT/probe_$d.txt
  done
  echo "elapsed $SECONDS s"
  [ "${CASES:-0}" != 0 ] && GVR_STEPS=fuzz GVR_FUZZ_SEED=${SEED:-20261215} GVR_FUZZ_CASES=$CASES GVR_FUZZ_SHARDS=6 \
    GVR_FUZZ_FAMILY=split GVR_FUZZ_TUNING=SPLIT_COOP_OUTLINE=1 bash tests/gpu/run_gpu_checks.sh $OUT/fuzz
  cat $OUT/fuzz/summary.txt 2>/dev/null
  ;;
layout)
  # code layout of the cooperative kernel: arms O0 (inline), O1 (defaults), O2 (tie rung inline), O3 (O1 + the
  # finisher's CROSS_CAP select and the short-row emit outlined), from the variant tree scratch/vt
  export PYTHONPATH=$PWD/scratch/vt:$PYTHONPATH
  (cd /tmp && python3 -c "import gvr_topk; print(gvr_topk.__file__)")
  timeout --kill-after=5 ${PLIM:-220} python3 benchmarks/probe_sample.py --out $OUT/probe_layout --reps 25 \
    --arms O0,O1,O2,O3 --cells ${OCELLS:-1x131075x2048,8x131075x2048,4x65536x1024,1x16387x2048} > $OUT/probe_layout.txt 2>&1
  echo "probe rc=$?"; tail -12 $OUT/probe_layout.txt
  timeout --kill-after=5 ${ELIM:-80} python3 benchmarks/probe_sample.py --out $OUT/probe_layout_eq --data equal --reps 15 \
    --arms O0,O1,O2,O3 --cells 1x131075x2048 > $OUT/probe_layout_eq.txt 2>&1
  echo "equal rc=$?"; tail -6 $OUT/probe_layout_eq.txt
  echo "elapsed $SECONDS s"
  timeout --kill-after=5 ${NLIM:-200} ncu --target-processes all -k regex:_gvr_split_coop --csv --page raw \
    --log-file $OUT/ncu.csv --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__cycles_active.avg,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
    python3 scratch/vt/ncu_layout.py O0,O1,O2,O3 "1x131075x2048;8x131075x2048;1x131075x2048:equal" > $OUT/ncu_order.txt 2>&1
  echo "ncu rc=$?"; tail -3 $OUT/ncu_order.txt; wc -l $OUT/ncu.csv
  echo "elapsed $SECONDS s"
  ;;
loop)
  # runtime-loop sample levels (X1, variant tree scratch/vt) against the defaults (X0)
  export PYTHONPATH=$PWD/scratch/vt:$PYTHONPATH
  (cd /tmp && python3 -c "import gvr_topk; print(gvr_topk.__file__)")
  timeout --kill-after=5 ${PLIM:-300} python3 scratch/vt/probe_sample.py --out $OUT/probe_loop --reps 25 \
    --arms X0,X1 --cells ${OCELLS:-1x131075x2048,1x131075x512,8x131075x2048,4x65536x1024,1x16387x2048,varlen/b4xnn4/cr4/131072/k2048,64x131075x2048,512x131075x2048} > $OUT/probe_loop.txt 2>&1
  echo "probe rc=$?"; tail -16 $OUT/probe_loop.txt
  echo "elapsed $SECONDS s"
  ;;
h200ab)
  # the H200 A/B of the session-46 switches: inlined rare paths (O0), the defaults (O1), the shared first rung (E1)
  timeout --kill-after=5 ${DLIM:-260} python3 benchmarks/probe_sample.py --out $OUT/probe_ab --reps 25 \
    --arms O0,defaults,E1 --cells ${OCELLS:-1x131075x2048,1x131075x512,1x16387x2048,8x131075x2048,4x65536x1024,16x131075x1024,varlen/b4xnn4/cr4/131072/k2048} \
    > $OUT/probe_ab.txt 2>&1
  echo "probe rc=$?"; tail -18 $OUT/probe_ab.txt
  echo "elapsed $SECONDS s"
  for d in equal heavy_tail few_distinct; do
    timeout --kill-after=5 ${ALIM:-70} python3 benchmarks/probe_sample.py --out $OUT/probe_$d --data $d --reps 15 \
      --arms O0,defaults,E1 --cells 8x131075x2048 > $OUT/probe_$d.txt 2>&1
    echo "$d rc=$?"; tail -6 $OUT/probe_$d.txt
  done
  echo "elapsed $SECONDS s"
  ;;
rung|all)
  # 1. the shared first rung's tests on the GPU (both settings of the fixture)
  timeout --kill-after=5 150 python3 -m pytest -q -rfE -p no:cacheprovider -n 8 $T/test_gvr_split_coop.py \
    -k "low_rung or first_rung or switch_settings" > $OUT/rung_tests.log 2>&1
  echo "rung tests rc=$?"; tail -5 $OUT/rung_tests.log
  # 2. fuzz of the split family with the rung on
  [ "${CASES:-1500}" != 0 ] && GVR_STEPS=fuzz GVR_FUZZ_SEED=${SEED:-20261214} GVR_FUZZ_CASES=${CASES:-1500} GVR_FUZZ_SHARDS=6 \
    GVR_FUZZ_FAMILY=split GVR_FUZZ_TUNING=SPLIT_COOP_LOW_RUNG=1 bash tests/gpu/run_gpu_checks.sh $OUT/fuzz
  cat $OUT/fuzz/summary.txt 2>/dev/null
  [ -n "$END" ] && PLIMIT=$(( END - SECONDS ))
  # 3. the A/B on the heavy_tail cell of entry 49
  timeout --kill-after=5 ${PLIMIT:-200} python3 benchmarks/probe_sample.py --out $OUT/probe_heavy --data heavy_tail \
    --arms ${ARMS:-G256/R128,G256/R128/E1,defaults,E1} --cells 8x131075x2048 > $OUT/probe_heavy.txt 2>&1
  echo "probe rc=$?"; tail -15 $OUT/probe_heavy.txt
  [ "$MODE" = all ] || exit 0
  echo "elapsed $SECONDS s"
  ;&
decode)
  DL=$(( ${BUDGET:-560} - SECONDS )); [ $DL -gt 300 ] && DL=300
  timeout --kill-after=5 $DL python3 benchmarks/probe_sample.py --out $OUT/probe_decode \
    --arms defaults,E1 --cells ${CELLS:-1x131075x2048,4x131075x2048,8x131075x2048,16x131075x1024,64x131075x2048,varlen/b4xnn4/cr4/131072/k2048} \
    > $OUT/probe_decode.txt 2>&1
  echo "probe rc=$?"; tail -20 $OUT/probe_decode.txt
  ;;
bench)
  mkdir -p scratch/bench
  timeout --kill-after=5 ${LIMIT:-560} python3 benchmarks/bench_gvr_topk.py --quick --out scratch/bench --no-plot \
    --no-progress --resume --markdown scratch/bench/BENCHMARKS.md > scratch/bench/stdout.txt 2>&1
  echo "rc=$?"
  tail -60 scratch/bench/stdout.txt
  cp -r scratch/bench $OUT/
  ;;
tests)
  timeout --kill-after=5 ${LIMIT:-540} python3 -m pytest -q -rfE -p no:cacheprovider -n ${NW:-12} ${SEL:-$T/test_gvr_robustness.py $T/test_gvr_warmup.py $T/test_gvr_policy.py} > $OUT/tests.log 2>&1
  echo "rc=$?"; tail -25 $OUT/tests.log
  ;;
esac
if [ "$MODE" = verify ]; then
  timeout --kill-after=5 ${TLIM:-130} python3 -m pytest -q -rfE -p no:cacheprovider -n 8 $T/test_gvr_split_coop.py > $OUT/coop_tests.log 2>&1
  echo "coop tests rc=$?"; tail -4 $OUT/coop_tests.log
  echo "elapsed $SECONDS s"
  GVR_STEPS=fuzz GVR_FUZZ_SEED=${SEED:-20261221} GVR_FUZZ_CASES=${CASES:-1200} GVR_FUZZ_SHARDS=6 GVR_FUZZ_FAMILY=split \
    timeout --kill-after=5 ${FLIM:-130} bash tests/gpu/run_gpu_checks.sh $OUT/fuzz
  echo "fuzz rc=$?"; cat $OUT/fuzz/summary.txt 2>/dev/null
  echo "elapsed $SECONDS s"
fi
