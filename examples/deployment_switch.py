"""One workload under the three deployment modes of a config: ``hinted``, ``hint_free``, ``dropped_arena``.

The mode is switched the way a deployment would: by changing the config (here as ``--set``-style overrides of the
same file), not the code. For each mode the same requests (same seed) go through three phases:

* first decode step: requests just prefilled on this engine (hinted mode reads their prefill seed);
* steady decode: later steps (hinted mode reads last step's write-back);
* disaggregated generation: most requests finish and new ones arrive with their KV cache but no prior. The batch
  is mixed: under ``hinted`` the remaining request reads its prior while the new ones get -1 rows in the same
  launch (and are hinted from their second step on); the other modes give nobody a hint.

It prints the arena's bytes (allocated here, and at the config's full size) and the mean step time per phase, and
checks every step like ``sparse_attention_decode.py`` does.

Run::

    python examples/deployment_switch.py --device cpu
    python examples/deployment_switch.py --device cuda --cuda-graph --config deepseek-v4-pro
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import sparse_attention_decode as sad  # noqa: E402  (also selects the Triton interpreter on CPU)

#: Config overrides that put a file in each mode (the arena section is dropped where no arena may exist).
MODES = {
    "hinted": {"gvr_topk.mode": "hinted"},
    "hint_free": {"gvr_topk.mode": "hint_free", "gvr_topk.arena": None, "gvr_topk.scenarios": None},
    "dropped_arena": {"gvr_topk.mode": "dropped_arena", "gvr_topk.arena": None, "gvr_topk.scenarios": None},
}
PHASES = ("first_decode_step", "steady_decode", "disagg_generation")


def run_mode(args, mode: str):
    """Run the three phases under one mode; returns (config, workload, {phase: [StepReport]})."""
    overrides = dict(sad.parse_override(s) for s in args.set)
    overrides.update(MODES[mode])
    cfg = sad.load_config(args.config, overrides)
    n = args.requests
    wl = sad.DecodeWorkload(cfg, args.device, layers=args.layers, max_batch=n, seq_len=args.seq_len,
                            steps=args.steady_steps + 3, max_requests=2 * n, cuda_graph=args.cuda_graph,
                            compile=args.compile, seed=args.seed)
    out = {p: [] for p in PHASES}
    for i in range(n):
        wl.arrive(f"p{i}", "prefill")
    out["first_decode_step"].append(wl.step())
    for _ in range(args.steady_steps):
        out["steady_decode"].append(wl.step())
    for i in range(n - 1):  # one request keeps decoding next to the arrivals
        wl.finish(f"p{i}")
    for i in range(n - 1):
        wl.arrive(f"d{i}", "disagg")
    out["disagg_generation"].append(wl.step())
    return cfg, wl, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sad.add_common_args(ap)
    ap.add_argument("--requests", type=int, default=3, help="requests per phase (= batch)")
    ap.add_argument("--steady-steps", type=int, default=3, help="steady decode steps")
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    args = ap.parse_args(argv)
    rows = []
    failed = []
    for mode in args.modes:
        try:
            cfg, wl, phases = run_mode(args, mode)
        except (sad.ConfigError, FileNotFoundError) as err:
            print(f"config error ({mode}): {err}", file=sys.stderr)
            return 2
        ms = {p: 1e3 * sum(r.seconds for r in reps) / len(reps) for p, reps in phases.items()}
        probs = [m for reps in phases.values() for r in reps for m in r.problems]
        ov = [r.hint_overlap for reps in phases.values() for r in reps if r.hint_overlap is not None]
        if probs:
            failed.append(mode)
        rows.append((mode, wl.resolver.arena_bytes, cfg.arena_bytes(), ms, "exact" if not probs else "WRONG",
                     sum(ov) / len(ov) if ov else None, probs[:3]))
    print(f"{cfg.model.name}: K={cfg.k} next_n={cfg.next_n}, {len(wl.layers)} of {len(cfg.indexer_layers)} "
          f"indexer layers, batch {args.requests}, device={args.device}, cuda_graph={args.cuda_graph}, "
          f"interpreter={sad.gvr_topk.kernels_interpreted()}")
    head = f"{'mode':<14}{'arena here':>12}{'arena (config)':>16}" + "".join(f"{p + ' ms':>22}" for p in PHASES)
    print(head + f"{'hint overlap':>14}  result")
    for mode, here, full, ms, res, ov, probs in rows:
        cells = "".join(f"{ms[p]:>22.2f}" for p in PHASES)
        ovs = "-" if ov is None else f"{ov:.2f}"
        print(f"{mode:<14}{here:>12,}{full:>16,}{cells}{ovs:>14}  {res}")
        for m in probs:
            print(f"    {m}")
    if failed:
        print(f"FAIL: modes {failed} were not exact")
        return 1
    print(f"PASS: {len(rows)} modes x {len(PHASES)} phases exact; arena only where a scenario is hinted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
