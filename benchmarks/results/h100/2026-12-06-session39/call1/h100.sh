#!/bin/bash
# Run by call.sh (session 37's call3.sh with line 7 changed) when an H100 came instead of an H200:
# the fuzz file, not yet run on this code on a GPU, cut at 240 s.
mkdir -p $OUT/fuzz
GVR_FUZZ_REPORT=$OUT/fuzz/report.json timeout 240 python3 -m pytest -q -rfE -s -p no:cacheprovider \
  tests/unittest/_torch/thop/parallel/test_gvr_fuzz.py > $OUT/fuzz/pytest.txt 2>&1; echo "F rc=$?"
grep "progress" $OUT/fuzz/pytest.txt | tail -1; tail -6 $OUT/fuzz/pytest.txt
