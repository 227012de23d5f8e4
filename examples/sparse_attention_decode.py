"""A small DSA-style sparse-attention layer in plain torch, decoding under a model config's hint policy.

Per indexer layer and step: indexer scores -> ``torch.ops.gvr`` top-k (with the policy's ``pre_idx``) -> gather the
selected K/V -> attention over the selected tokens. Requests arrive (after a local prefill, from a disaggregated
prefill server, or as a full-prefix KV-cache hit), get reordered, and finish while the prior arena follows them by
id. Every step is checked: the top-k index sets against the reference (``gvr_topk.testing.check_exact``) and the
attention output against dense attention restricted to ``torch.topk``'s selection.

Run::

    python examples/sparse_attention_decode.py --device cpu                        # Triton interpreter, < 1 min
    python examples/sparse_attention_decode.py --config deepseek-v4-pro --device cpu
    python examples/sparse_attention_decode.py --device cuda --compile --cuda-graph  # H200: compiled, in a graph

The last line is ``PASS ...`` (exit 0) when every step was exact, ``FAIL ...`` (exit 1) otherwise.
"""

import argparse
import os
import sys
import time
from dataclasses import dataclass
from dataclasses import field
from typing import Dict
from typing import List
from typing import Optional

import torch

# Without a GPU the Triton kernels need the interpreter, which must be chosen before triton is imported.
_argv = " ".join(sys.argv[1:])
if "--device cpu" in _argv or "--device=cpu" in _argv:
    os.environ.setdefault("TRITON_INTERPRET", "1")
elif not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import gvr_topk  # noqa: E402  (registers torch.ops.gvr)
from gvr_topk import reference  # noqa: E402
from gvr_topk.arena import last_token_rows  # noqa: E402
from gvr_topk.policy import ConfigError  # noqa: E402
from gvr_topk.policy import HintResolver  # noqa: E402
from gvr_topk.policy import default_config_path  # noqa: E402
from gvr_topk.policy import load_config  # noqa: E402
from gvr_topk.policy import parse_override  # noqa: E402
from gvr_topk.testing import check_exact  # noqa: E402

#: Scenario of a request's first decode step on this engine, by how it arrived.
FIRST_SCENARIO = {"prefill": "first_decode_step", "disagg": "disagg_generation", "kv_reuse": "kv_reuse"}
#: Masked attention scores: finite, so a row with nothing selected (padding) stays NaN-free.
MASKED = -1e30


def sparse_attention_layer(q, qi, w, ki_pool, kc_pool, vc_pool, kv_lens, cache_slot, pre_idx, *, k: int,
                           next_n: int, compress_ratio: int, max_seq_len: int):
    """One DSA decode layer: lightning-indexer scores, exact top-k, attention over the selected KV entries.

    Parameters
    ----------
    q : torch.Tensor
        float32 ``(rows, H, D)`` attention queries, ``rows = batch * next_n``.
    qi : torch.Tensor
        float32 ``(rows, Hi, Di)`` indexer queries.
    w : torch.Tensor
        float32 ``(rows, Hi)`` indexer head weights.
    ki_pool : torch.Tensor
        float32 ``(P, Nc, Di)`` indexer keys of each cache slot (compressed entries, ``Nc = max_seq_len // cr``).
    kc_pool, vc_pool : torch.Tensor
        float32 ``(P, Nc, H, D)`` attention keys / values.
    kv_lens : torch.Tensor
        int32 ``(batch,)`` uncompressed KV length per request (0 for padding).
    cache_slot : torch.Tensor
        int64 ``(batch,)`` cache-pool slot of each request.
    pre_idx : torch.Tensor or None
        int32 ``(batch, K)`` hint from the policy, or None.
    k, next_n, compress_ratio, max_seq_len : int
        The op's arguments (from the config).

    Returns
    -------
    (torch.Tensor, torch.Tensor, torch.Tensor)
        float32 attention output ``(rows, H, D)``, int32 top-k indices ``(rows, K)`` (-1 pads), float32 indexer
        scores ``(rows, Nc)``.
    """
    batch = kv_lens.shape[0]
    rows, hi, di = qi.shape
    nc = ki_pool.shape[1]
    # Indexer: sum over heads of w * relu(q . k), one score per compressed KV entry.
    keys = ki_pool.index_select(0, cache_slot)                                   # (B, Nc, Di)
    s = torch.bmm(qi.reshape(batch, next_n * hi, di), keys.transpose(1, 2))      # (B, next_n*Hi, Nc)
    logits = (torch.relu(s).view(batch, next_n, hi, nc) * w.view(batch, next_n, hi, 1)).sum(2).view(rows, nc)
    idx, _ = gvr_topk.topk(logits, k, kv_lens=kv_lens, pre_idx=pre_idx, next_n=next_n,
                           compress_ratio=compress_ratio, max_seq_len=max_seq_len)
    # Gather the selected entries; -1 slots are clamped to entry 0 and masked out of the softmax.
    flat = cache_slot.repeat_interleave(next_n).unsqueeze(1) * nc + idx.clamp(min=0).to(torch.int64)
    h, d = kc_pool.shape[2], kc_pool.shape[3]
    kg = kc_pool.view(-1, h, d)[flat]                                            # (rows, K, H, D)
    vg = vc_pool.view(-1, h, d)[flat]
    scores = torch.einsum("rhd,rkhd->rhk", q, kg) * d ** -0.5
    scores = scores.masked_fill((idx < 0).unsqueeze(1), MASKED)
    out = torch.einsum("rhk,rkhd->rhd", torch.softmax(scores, dim=-1), vg)
    return out, idx, logits


def dense_reference(q, logits, kc, vc, n: int, k: int) -> torch.Tensor:
    """Dense attention of one row over its ``n`` valid entries, restricted to ``torch.topk``'s selection.

    Parameters
    ----------
    q : torch.Tensor
        ``(H, D)`` query of the row.
    logits : torch.Tensor
        ``(>= n,)`` indexer scores of the row.
    kc, vc : torch.Tensor
        ``(>= n, H, D)`` keys / values of the row's request.
    n, k : int
        Valid entries and K.

    Returns
    -------
    torch.Tensor
        float64 ``(H, D)``; zeros when ``n <= 0``.
    """
    if n <= 0:
        return torch.zeros(q.shape, dtype=torch.float64, device=q.device)
    keep = torch.zeros(n, dtype=torch.bool, device=q.device)
    keep[torch.topk(logits[:n].to(torch.float32), min(k, n)).indices] = True
    scores = torch.einsum("hd,nhd->hn", q.double(), kc[:n].double()) * q.shape[-1] ** -0.5
    scores = scores.masked_fill(~keep, float("-inf"))
    return torch.einsum("hn,nhd->hd", torch.softmax(scores, dim=-1), vc[:n].double())


@dataclass
class Request:
    rid: str
    origin: str            # "prefill" | "disagg" | "kv_reuse"
    cache_slot: int
    kv_len: int            # uncompressed tokens, including this step's next_n new ones
    steps: int = 0


@dataclass
class StepReport:
    request_ids: List[str]
    scenarios: List[str]
    hinted: List[bool]
    seconds: float
    max_err: float
    problems: List[str] = field(default_factory=list)
    overlaps: List[float] = field(default_factory=list)

    @property
    def hint_overlap(self) -> Optional[float]:
        """Mean share of a hinted request's selection (first MTP row) that its hint already held; None if none."""
        return sum(self.overlaps) / len(self.overlaps) if self.overlaps else None


class DecodeWorkload:
    """Requests, KV caches and per-layer state of the example, driven one decode step at a time.

    Parameters
    ----------
    config : GvrConfig
        Model config; K, next_n and each layer's compress ratio come from it.
    device : torch.device
        Where everything runs.
    layers : int
        How many of the model's indexer layers to run (the first ones).
    max_batch : int
        Padded batch of every step (the CUDA graph's size); also the arena's slot count.
    seq_len : int
        Longest prompt (uncompressed tokens); prompts are drawn in ``[3/4, 1] * seq_len``, KV-reuse ones shorter.
    steps : int
        Decode steps the caches must have room for.
    cuda_graph, compile : bool
        Capture the step in a CUDA graph / run the layer under ``torch.compile`` (GPU).
    seed : int
        Seed of every random draw (the same seed gives the same inputs under every config mode).
    """

    HEADS, HEAD_DIM, IDX_HEADS, IDX_DIM = 2, 32, 4, 32

    def __init__(self, config, device, *, layers: int = 2, max_batch: int = 4, seq_len: Optional[int] = None,
                 steps: int = 6, max_requests: int = 16, cuda_graph: bool = False, compile: bool = False,
                 seed: int = 0):
        self.cfg, self.device = config, torch.device(device)
        self.k, self.next_n = config.k, config.next_n
        self.layers = config.indexer_layers[:layers]
        self.ratio = {lay: config.compress_ratio(lay) for lay in self.layers}
        cr_max = max(self.ratio.values())
        self.seq_len = seq_len if seq_len is not None else cr_max * (3 * self.k) // 2
        self.max_batch = max_batch
        # Room for the longest prompt plus every step's accepted tokens, a whole number of compressed entries.
        self.nc = -(-(self.seq_len + (steps + 1) * self.next_n) // cr_max)
        self.max_seq_len = self.nc * cr_max
        self.resolver = HintResolver(config, self.device, max_sequences=max_batch)
        self.gen = torch.Generator(device=self.device).manual_seed(seed)
        self.host_gen = torch.Generator().manual_seed(seed)
        H, D, Hi, Di, P = self.HEADS, self.HEAD_DIM, self.IDX_HEADS, self.IDX_DIM, max_requests
        self.pools: Dict[int, Dict[str, torch.Tensor]] = {}
        for lay in self.layers:
            self.pools[lay] = {
                "ki": self._randn(P, self.nc, Di), "kc": self._randn(P, self.nc, H, D),
                "vc": self._randn(P, self.nc, H, D),
                # Per-request query state; it drifts slowly so consecutive steps select overlapping sets.
                "q": self._randn(P, H, D), "qi": self._randn(P, Hi, Di), "w": self._randn(P, Hi).abs(),
            }
        self.free_slots = list(range(P - 1, -1, -1))
        self.requests: Dict[str, Request] = {}
        self.order: List[str] = []
        # Static step inputs/outputs (stable addresses for the CUDA graph).
        rows = max_batch * self.next_n
        self.kv_lens = torch.zeros(max_batch, dtype=torch.int32, device=self.device)
        self.cache_slot = torch.zeros(max_batch, dtype=torch.int64, device=self.device)
        self.inp = {lay: {"q": torch.zeros(rows, H, D, device=self.device),
                          "qi": torch.zeros(rows, Hi, Di, device=self.device),
                          "w": torch.zeros(rows, Hi, device=self.device)} for lay in self.layers}
        self.out: Dict[int, Dict[str, torch.Tensor]] = {lay: {} for lay in self.layers}
        self.layer_fn = sparse_attention_layer
        if compile:
            self.layer_fn = torch.compile(sparse_attention_layer, fullgraph=True, dynamic=False)
        self.graph: Optional[torch.cuda.CUDAGraph] = None
        self.hints = None
        self.used_pre = False
        if cuda_graph:
            if self.device.type != "cuda":
                raise ValueError(f"--cuda-graph needs --device cuda, got {self.device}")
            self._capture()

    # ------------------------------------------------------------------ helpers

    def _h2d(self, dst: Optional[torch.Tensor], values, dtype) -> torch.Tensor:
        """Host list -> device (into ``dst`` if given) through pinned memory on CUDA: no host synchronisation."""
        t = torch.tensor(values, dtype=dtype)
        if self.device.type == "cuda":
            t = t.pin_memory()
        if dst is None:
            return t.to(self.device, non_blocking=True)
        return dst.copy_(t, non_blocking=True)

    def _randn(self, *shape) -> torch.Tensor:
        return torch.randn(*shape, generator=self.gen, device=self.device)

    def _randint(self, lo: int, hi: int) -> int:
        """Host-side random int in [lo, hi] (schedule decisions never read the device)."""
        return int(torch.randint(lo, hi + 1, (1,), generator=self.host_gen))

    def _drift(self, slots: torch.Tensor, scale: float = 0.3) -> None:
        for p in self.pools.values():
            for name in ("q", "qi"):
                p[name][slots] += scale * self._randn(*p[name][slots].shape)

    # ------------------------------------------------------------------ request lifecycle (host side)

    def arrive(self, rid: str, origin: str) -> None:
        """Admit a request with its prompt in the KV cache; a local prefill also seeds the arena."""
        if origin not in FIRST_SCENARIO:
            raise ValueError(f"origin: expected one of {list(FIRST_SCENARIO)}, got {origin!r}")
        slot = self.free_slots.pop()
        # KV-reuse hits get a short prompt here, so short rows (n <= K, padded with -1) appear in the batch.
        lo = self.seq_len // 3 if origin == "kv_reuse" else 3 * self.seq_len // 4
        prompt = self._randint(lo, self.seq_len)
        self.requests[rid] = Request(rid, origin, slot, prompt + self.next_n)
        self.order.append(rid)
        if origin == "prefill":
            self._prefill_seed([rid])

    def _prefill_seed(self, rids: List[str], tail: int = 3) -> None:
        """Prefill top-k of each prompt's last ``tail`` tokens; the last token's row seeds the prior."""
        for lay in self.layers:
            p = self.pools[lay]
            qi, w, kv, slots = [], [], [], []
            for rid in rids:
                r = self.requests[rid]
                prompt = r.kv_len - self.next_n
                for t in range(tail):  # token at position prompt - tail + t sees prompt - tail + t + 1 tokens
                    qi.append(p["qi"][r.cache_slot])
                    w.append(p["w"][r.cache_slot])
                    kv.append(prompt - tail + t + 1)
                    slots.append(r.cache_slot)
            qi, w = torch.stack(qi), torch.stack(w)
            kv_lens = self._h2d(None, kv, torch.int32)
            cache_slot = self._h2d(None, slots, torch.int64)
            keys = p["ki"].index_select(0, cache_slot)
            logits = (torch.relu(torch.einsum("thd,tnd->thn", qi, keys)) * w.unsqueeze(2)).sum(1)
            idx, _ = gvr_topk.topk(logits, self.k, kv_lens=kv_lens, next_n=1, compress_ratio=self.ratio[lay],
                                   max_seq_len=self.max_seq_len)
            seq_lens = torch.full((len(rids),), tail, dtype=torch.int32, device=self.device)
            self.resolver.seed(lay, rids, last_token_rows(idx, seq_lens))

    def finish(self, rid: str) -> None:
        """A request completed: free its cache slot and its arena slot."""
        r = self.requests.pop(rid)
        self.order.remove(rid)
        self.free_slots.append(r.cache_slot)
        self.resolver.release([rid])

    def reorder(self) -> None:
        """Batch recomposition: the scheduler may put requests in any order."""
        self.order.reverse()

    # ------------------------------------------------------------------ the step

    def _layers_forward(self) -> None:
        """Device work of one step over every layer (what the CUDA graph holds)."""
        for lay in self.layers:
            p, x = self.pools[lay], self.inp[lay]
            pre = self.resolver.pre_idx(lay, self.hints)
            out, idx, logits = self.layer_fn(x["q"], x["qi"], x["w"], p["ki"], p["kc"], p["vc"], self.kv_lens,
                                             self.cache_slot, pre, k=self.k, next_n=self.next_n,
                                             compress_ratio=self.ratio[lay], max_seq_len=self.max_seq_len)
            self.resolver.write_back(lay, idx, self.hints)
            o = self.out[lay]
            if not o:  # first call (or capture): allocate the static outputs once
                o.update(out=torch.empty_like(out), idx=torch.empty_like(idx), logits=torch.empty_like(logits))
            o["out"].copy_(out)
            o["idx"].copy_(idx)
            o["logits"].copy_(logits)
            if pre is not None:  # kept only to report how good the hints were
                o.setdefault("pre", torch.empty_like(pre)).copy_(pre)
            self.used_pre = pre is not None

    def _capture(self) -> None:
        """Warm up (compiles Triton/Inductor code) and capture one step with an all-padding batch."""
        self.hints = self.resolver.prepare([], [], padded_batch=self.max_batch, static=True)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self._layers_forward()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        # Captured on the stream that was warmed: the op's default workspace (one per stream) already exists there,
        # so its zeroing memset stays out of the graph.
        with torch.cuda.graph(self.graph, stream=side):
            self._layers_forward()
        torch.cuda.synchronize()

    def _load_inputs(self) -> None:
        """Copy this step's per-request state into the static inputs (device-to-device, no host read)."""
        reqs = [self.requests[r] for r in self.order]
        b, nn = len(reqs), self.next_n
        kv = [r.kv_len for r in reqs] + [0] * (self.max_batch - b)
        sl = [r.cache_slot for r in reqs] + [0] * (self.max_batch - b)
        self._h2d(self.kv_lens, kv, torch.int32)
        self._h2d(self.cache_slot, sl, torch.int64)
        slots = self.cache_slot.repeat_interleave(nn)
        for lay in self.layers:
            p, x = self.pools[lay], self.inp[lay]
            # Each MTP row is its request's query plus a small per-position perturbation.
            for name in ("q", "qi", "w"):
                base = p[name].index_select(0, slots)
                x[name].copy_(base + (0.1 * self._randn(*base.shape) if name != "w" else 0))

    def step(self, check: bool = True) -> StepReport:
        """Run one decode step for the current batch; check it against the references when ``check``."""
        if len(self.order) > self.max_batch:
            raise ValueError(f"{len(self.order)} requests exceed max_batch={self.max_batch}")
        scen = [FIRST_SCENARIO[self.requests[r].origin] if self.requests[r].steps == 0 else "steady_decode"
                for r in self.order]
        self._load_inputs()
        dev_sync = torch.cuda.synchronize if self.device.type == "cuda" else (lambda: None)
        dev_sync()  # timing only: the step itself reads nothing back
        t0 = time.perf_counter()
        self.hints = self.resolver.prepare(self.order, scen, padded_batch=self.max_batch,
                                           static=self.graph is not None)
        if self.graph is not None:
            self.graph.replay()
        else:
            self._layers_forward()
        dev_sync()
        seconds = time.perf_counter() - t0
        report = StepReport(list(self.order), scen, list(self.hints.hinted), seconds, 0.0)
        if check:
            self._check(report)
        # Advance: each request keeps 1..next_n of its tokens (bonus token + accepted drafts).
        for rid in self.order:
            r = self.requests[rid]
            r.kv_len += self._randint(1, self.next_n)
            r.steps += 1
        self._drift(self._h2d(None, [self.requests[r].cache_slot for r in self.order], torch.int64))
        return report

    def _check(self, report: StepReport) -> None:
        kv_lens = self.kv_lens.cpu()
        for lay in self.layers:
            o, x, p = self.out[lay], self.inp[lay], self.pools[lay]
            cr = self.ratio[lay]
            probs = check_exact(o["logits"], o["idx"], kv_lens=kv_lens, next_n=self.next_n, compress_ratio=cr)
            report.problems += [f"layer {lay}: {m}" for m in probs]
            n = reference.row_lengths(kv_lens, o["idx"].shape[0], self.nc, next_n=self.next_n,
                                      compress_ratio=cr).tolist()
            for b, rid in enumerate(self.order):
                c = self.requests[rid].cache_slot
                if self.used_pre and self.hints.hinted[b]:
                    got = set(o["idx"][b * self.next_n].tolist()) - {-1}
                    hint = set(o["pre"][b].tolist()) - {-1}
                    if got:
                        report.overlaps.append(len(got & hint) / len(got))
                for j in range(self.next_n):
                    r = b * self.next_n + j
                    ref = dense_reference(x["q"][r], o["logits"][r], p["kc"][c], p["vc"][c], n[r], self.k)
                    err = (o["out"][r].double() - ref).abs().max().item()
                    report.max_err = max(report.max_err, err)
                    if not torch.allclose(o["out"][r].double(), ref, rtol=1e-4, atol=1e-5):
                        report.problems.append(f"layer {lay} row {r}: attention differs from the dense "
                                               f"reference by {err:.3g}")


def build_config(args):
    """The config named by ``--config`` with ``--set`` overrides applied (validated)."""
    overrides = dict(parse_override(s) for s in args.set)
    return load_config(args.config, overrides or None)


def add_common_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--config", default=str(default_config_path()),
                    help="model config file or shipped name (default: DeepSeek-V3.2)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="config override, e.g. --set gvr_topk.mode=hint_free --set gvr_topk.arena=null")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cpu", "cuda"))
    ap.add_argument("--layers", type=int, default=2, help="indexer layers to run (the model's first ones)")
    ap.add_argument("--seq-len", type=int, default=None,
                    help="longest prompt in tokens (default 1.5 * K * compress ratio)")
    ap.add_argument("--max-batch", type=int, default=4, help="padded batch size (= CUDA-graph size)")
    ap.add_argument("--compile", action="store_true", help="run the layer under torch.compile (GPU)")
    ap.add_argument("--cuda-graph", action="store_true", help="capture each step in a CUDA graph (GPU)")
    ap.add_argument("--seed", type=int, default=0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--steps", type=int, default=6, help="decode steps")
    args = ap.parse_args(argv)
    try:
        cfg = build_config(args)
    except (ConfigError, FileNotFoundError, ValueError) as err:
        print(f"config error: {err}", file=sys.stderr)
        return 2
    wl = DecodeWorkload(cfg, args.device, layers=args.layers, max_batch=args.max_batch, seq_len=args.seq_len,
                        steps=args.steps, cuda_graph=args.cuda_graph, compile=args.compile, seed=args.seed)
    print(f"{cfg.model.name}: K={cfg.k} next_n={cfg.next_n} layers={wl.layers} "
          f"(compress {sorted(set(wl.ratio.values()))}) mode={cfg.gvr_topk.mode} policy={cfg.scenario_policy()}")
    print(f"device={args.device} interpreter={gvr_topk.kernels_interpreted()} compile={args.compile} "
          f"cuda_graph={args.cuda_graph} prompts<={wl.seq_len} tokens, rows of <= {wl.nc} entries; "
          f"arena {wl.resolver.arena_bytes} B here, {cfg.arena_bytes()} B at the config's full size")
    # A scripted life of a batch: local prefill, disaggregated arrival, KV-reuse hit, reorder, finish.
    origins = ["prefill", "disagg", "prefill", "kv_reuse"]
    nreq = 0
    for _ in range(min(2, args.max_batch)):
        wl.arrive(f"r{nreq}", origins[nreq % 4])
        nreq += 1
    failed = 0
    for t in range(args.steps):
        if t >= 1 and len(wl.order) < args.max_batch:
            wl.arrive(f"r{nreq}", origins[nreq % 4])
            nreq += 1
        if t >= 3 and t % 2 == 1:
            wl.finish(wl.order[0])
        if t % 2 == 0 and t > 0:
            wl.reorder()
        rep = wl.step()
        failed += bool(rep.problems)
        desc = ", ".join(f"{r}:{s}{'*' if h else ''}" for r, s, h in zip(rep.request_ids, rep.scenarios,
                                                                          rep.hinted))
        status = "exact" if not rep.problems else "WRONG: " + "; ".join(rep.problems[:3])
        ov = "" if rep.hint_overlap is None else f", hint overlap {rep.hint_overlap:.2f}"
        print(f"step {t}: [{desc}] {rep.seconds * 1e3:.2f} ms, top-k {status}, "
              f"max |attn - ref| = {rep.max_err:.2e}{ov}")
    print("(* = request read its prior this step)")
    if failed:
        print(f"FAIL: {failed} of {args.steps} steps were not exact")
        return 1
    print(f"PASS: {args.steps} decode steps x {len(wl.layers)} layers exact (top-k sets == reference, attention "
          f"== dense attention over torch.topk's selection){' in a CUDA graph' if args.cuda_graph else ''}"
          f"{' under torch.compile' if args.compile else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
