"""Join calls 2 and 3 of this session into one benchmark document (the record in results/h200/).

Call 2 ran the quick benchmark on commit e4017bb until its 575 s limit (14 of 25 cases: a cold machine compiled for
93 s); call 3, on the same machine 10 minutes later, ran the other 11 (``--rows 512 --n 131075``: the two 512 x
131075 grid cells, varlen, adversarial). Each case's arms were timed in one process on the same inputs, as in any
run; the cases come from two processes. Run from the repository root:

    python3 benchmarks/results/h200/2026-12-02-session19/merge.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
a = json.load(open(os.path.join(HERE, "call2/bench/gvr_topk_bench.json")))
b = json.load(open(os.path.join(HERE, "call3/bench/gvr_topk_bench.json")))
assert a["provenance"]["git_commit"] == b["provenance"]["git_commit"] == "e4017bb"
names = {c["name"] for c in a["cases"]}
assert not names & {c["name"] for c in b["cases"]}
order = {"grid": 0, "varlen": 1, "adversarial": 2}
cases = sorted(a["cases"] + b["cases"], key=lambda c: order[c["suite"]])  # stable: each suite keeps its run order
doc = dict(a)
doc["cases"] = cases
doc["config"] = dict(a["config"], partial=False, elapsed_s=None)
doc["provenance"] = dict(a["provenance"], merged_from=[a["provenance"]["argv"], b["provenance"]["argv"]],
                         merged_dates=[a["provenance"]["date"], b["provenance"]["date"]])
doc["notes"] = (["joined from two runs of commit e4017bb on one H200 (session 19, calls 2 and 3): 14 cases, then "
                 "the other 11 (--rows 512 --n 131075)"] + [f"call 2: {n}" for n in a["notes"]]
                + [f"call 3: {n}" for n in b["notes"]])
out = os.path.join(HERE, "..", "gvr_topk_bench.json")
with open(out, "w") as f:
    json.dump(doc, f, indent=1)
print(f"wrote {os.path.normpath(out)}: {len(cases)} cases")
