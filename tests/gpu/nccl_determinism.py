"""Cross-GPU determinism of the gvr top-k selection over NCCL (world size 2, one GPU per rank).

Every rank builds the same seeded inputs on its own GPU, runs the example DSA decode layer
(``examples/sparse_attention_decode.py``: ``sparse_attention_layer``, whose top-k is ``gvr_topk.topk``) and a
tie-heavy direct ``gvr_topk.topk`` call, all-gathers the int32 indices, and checks that every rank chose the same
index *set* per row (rows with ties at the K-th score included) and that rank 0's sets equal the reference's
(the contract's tie rule makes them unique). Prints ``NCCL-DETERMINISM OK ...`` and exits 0 on success.

Run (needs 2 GPUs and NCCL)::

    python tests/gpu/nccl_determinism.py [--port 0]

``--device cpu`` runs the same script with two gloo ranks on the host and the Triton interpreter (a check of the
script itself: same inputs, same collectives, same checks; a few minutes on 2 cores).
"""

import argparse
import faulthandler
import importlib.util
import os
import socket
import sys
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

REPO = Path(__file__).resolve().parents[2]
WORLD = 2


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _example_module():
    spec = importlib.util.spec_from_file_location("sparse_attention_decode",
                                                  REPO / "examples" / "sparse_attention_decode.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _inputs(dev, k, next_n, cr, batch, nc, seed):
    """Seeded layer inputs, identical on every rank (generated on the host, then moved). Indexer keys are mostly
    non-positive, so relu makes many scores exactly 0: rows with fewer than K positive scores tie at the K-th."""
    g = torch.Generator().manual_seed(seed)
    H, D, Hi, Di, P = 1, 16, 4, 16, batch + 2
    rows = batch * next_n
    ki = torch.randn(P, nc, Di, generator=g)
    ki = torch.where(torch.rand(P, nc, 1, generator=g) < 0.97, -ki.abs(), ki.abs())
    qi = torch.rand(rows, Hi, Di, generator=g)  # positive queries: the sign of q.k follows the key
    t = dict(q=torch.randn(rows, H, D, generator=g), qi=qi, w=torch.rand(rows, Hi, generator=g) + 0.1,
             ki_pool=ki, kc_pool=torch.randn(P, nc, H, D, generator=g), vc_pool=torch.randn(P, nc, H, D, generator=g))
    max_seq_len = nc * cr
    kv = [max_seq_len, k * cr + next_n - 1, (k + 1) * cr, 0, next_n - 1, max_seq_len // 2, 3 * k * cr, 1]
    t["kv_lens"] = torch.tensor(kv[:batch], dtype=torch.int32)
    t["cache_slot"] = torch.arange(batch, dtype=torch.int64)
    return {n: v.to(dev) for n, v in t.items()}, max_seq_len


def _worker(rank: int, port: int, out_dir: str, device: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    # A rank stuck in a collective prints where it is instead of waiting silently. The dump reads the other threads'
    # frames while they run, and it has crashed a rank (SIGSEGV) that was only busy: under the Triton interpreter a
    # configuration took minutes before NOTES entry 56 (CI, 2 cores: over 120 s; the whole test now ~20 s), and hosts
    # vary, so on the CPU it waits well past any normal step.
    faulthandler.dump_traceback_later(120 if device == "cuda" else 900, repeat=True)
    # Two ranks share the host: without a cap each would start one compute thread per core and the host-side input
    # generation crawls (seen on 2 x H200: over 2 minutes in _inputs).
    torch.set_num_threads(4)
    if device == "cuda":
        torch.cuda.set_device(rank)
        dev = torch.device("cuda", rank)
        dist.init_process_group("nccl", rank=rank, world_size=WORLD, device_id=dev)
    else:
        dev = torch.device("cpu")
        dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    sys.path.insert(0, str(REPO))
    import gvr_topk
    from gvr_topk import reference
    from gvr_topk.testing import check_exact

    ex = _example_module()
    problems, checked, tied_rows = [], 0, 0
    # Two configurations: every kernel variant is compiled by both ranks (~3 s each on the H200), so each extra K or
    # family costs tens of seconds; these two reach the register, split and streaming families, hinted and not.
    for seed, (k, next_n, cr, batch, nc) in enumerate([(512, 2, 1, 8, 6000), (2048, 1, 4, 4, 40000)]):
        t, msl = _inputs(dev, k, next_n, cr, batch, nc, seed)
        # The example layer (indexer scores -> gvr top-k -> sparse attention), hint-free and with a hint.
        hint = torch.randint(-1, nc, (batch, k), generator=torch.Generator().manual_seed(seed + 100),
                             dtype=torch.int32).to(dev)
        outs = []
        for pre in (None, hint):
            _, idx, logits = ex.sparse_attention_layer(
                t["q"], t["qi"], t["w"], t["ki_pool"], t["kc_pool"], t["vc_pool"], t["kv_lens"], t["cache_slot"],
                pre, k=k, next_n=next_n, compress_ratio=cr, max_seq_len=msl)
            outs.append((idx, logits, t["kv_lens"], next_n, cr))
        # Direct call on few-distinct scores (every row ties at the K-th value), every family.
        x = torch.randint(0, 3, (batch * next_n, nc), generator=torch.Generator().manual_seed(seed + 7)).float()
        x = x.to(dev)
        for family in (None, "stream") + (("split",) if nc <= 16384 else ()):
            idx = torch.empty(batch * next_n, k, dtype=torch.int32, device=dev)
            gvr_topk.run_varlen(x, None, t["kv_lens"], idx, next_n=next_n, compress_ratio=cr, max_seq_len=msl,
                                family=family)
            outs.append((idx, x, t["kv_lens"], next_n, cr))
        for idx, logits, kv, nn, c in outs:
            keys = reference.order_keys(logits)
            lens = reference.row_lengths(kv, logits.shape[0], logits.shape[1], next_n=nn, compress_ratio=c).to(dev)
            keys = torch.where(torch.arange(logits.shape[1], device=dev)[None, :] < lens[:, None], keys, -1)
            kth = torch.sort(keys, 1, descending=True).values[:, k - 1:k]
            long = lens > k
            tied_rows += int((long & ((keys > kth).sum(1) < k) & ((keys >= kth).sum(1) > k)).sum())
            mine = torch.sort(idx, 1).values.contiguous()
            gathered = [torch.empty_like(mine) for _ in range(WORLD)]
            dist.all_gather(gathered, mine)
            for r, other in enumerate(gathered):
                if not torch.equal(other, mine):
                    bad = int((other != mine).any(1).sum())
                    problems.append(f"seed {seed} K={k}: rank {r} differs from rank {rank} in {bad} rows")
            if rank == 0:
                p = check_exact(logits, idx, kv_lens=kv, next_n=nn, compress_ratio=c)
                problems += [f"seed {seed} K={k}: {m}" for m in p]
            checked += 1
        print(f"rank {rank}: configuration {seed} (K={k}, {batch * next_n} rows x {nc}) done", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out_dir, f"rank{rank}.txt"), "w") as fh:
        fh.write(f"{checked} {tied_rows}\n" + "\n".join(problems))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0, help="rendezvous port (0: a free one)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cuda: one GPU per rank over NCCL; cpu: gloo ranks and the Triton interpreter")
    args = ap.parse_args(argv)
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # inherited by the spawned ranks, before they import triton
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # both ranks on this host: loopback, whatever the hostname
    elif torch.cuda.device_count() < WORLD or not dist.is_available() or not dist.is_nccl_available():
        print(f"NCCL-DETERMINISM SKIP: needs {WORLD} GPUs and NCCL (have {torch.cuda.device_count()} GPUs)")
        return 0
    port = args.port or _free_port()
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(_worker, args=(port, out_dir, args.device), nprocs=WORLD, join=True)
        lines = [Path(out_dir, f"rank{r}.txt").read_text().splitlines() for r in range(WORLD)]
    problems = [p for ls in lines for p in ls[1:] if p]
    checked, tied = (int(v) for v in lines[0][0].split())
    if problems:
        print("\n".join(problems[:20]))
        print(f"NCCL-DETERMINISM FAILED: {len(problems)} problems")
        return 1
    if tied == 0:
        print("NCCL-DETERMINISM FAILED: no row had ties at the K-th value (the inputs do not test the tie rule)")
        return 1
    print(f"NCCL-DETERMINISM OK: {checked} outputs x {WORLD} ranks identical and exact ({tied} rows with ties at "
          f"the K-th value)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
