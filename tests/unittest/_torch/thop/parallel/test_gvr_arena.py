"""The prior arena: sizing, prefill seeding, write-back of the last MTP row, request tracking across batch
recomposition, stable addresses, no host reads on the decode path, and (GPU) CUDA-graph replay."""

import pytest
import torch

from gvr_topk.arena import PriorArena
from gvr_topk.arena import last_token_rows
from gvr_topk.policy import HintResolver
from gvr_topk.policy import load_config

pytestmark = pytest.mark.gvr_topk

K = 16


def _rows(values, k=K):
    """int32 (len(values), k) rows; row i is values[i] * 100 + 0..k-1 (recognisable per request)."""
    return torch.stack([v * 100 + torch.arange(k, dtype=torch.int32) for v in values])


def _idx_for(batch_vals, next_n, k=K):
    """Op-shaped output (batch * next_n, k) whose row b*next_n + j is (batch_vals[b] * 10 + j) * 100 + ..."""
    return torch.cat([_rows([v * 10 + j for j in range(next_n)], k) for v in batch_vals])


def test_sizes_and_layout():
    a = PriorArena(3, 5, K, "cpu", layer_ids=[2, 4, 6])
    assert a.prior.shape == (3, 7, K) and a.prior.dtype == torch.int32
    assert (a.prior == -1).all()
    assert a.nbytes == 3 * 7 * K * 4 + 2 * 5 * 8
    assert a.slab(4) == 1
    with pytest.raises(KeyError, match="'layer'.*got 3"):
        a.slab(3)
    for kwargs, name in [(dict(num_layers=0, max_sequences=1, k=1), "num_layers"),
                         (dict(num_layers=1, max_sequences=1, k=4096), "'k'"),
                         (dict(num_layers=2, max_sequences=1, k=1, layer_ids=[1, 1]), "layer_ids")]:
        with pytest.raises(ValueError, match=name):
            PriorArena(device="cpu", **kwargs)


def test_config_arena_bytes():
    """At the config's full size the arena is indexer layers x max_sequences x K int32."""
    cfg = load_config("deepseek-v4-pro", {"gvr_topk.arena.max_sequences": 1024})
    assert cfg.arena_bytes() == 30 * 1024 * 1024 * 4  # 120 MiB
    assert load_config(overrides={"gvr_topk.arena.max_sequences": 1024}).arena_bytes() == 61 * 1024 * 2048 * 4
    r = HintResolver(load_config("deepseek-v4-flash"), "cpu", max_sequences=3)
    assert r.arena.prior.shape == (21, 5, 512) and r.arena_bytes == r.arena.nbytes


def test_seed_read_write_back_last_mtp_row():
    a = PriorArena(2, 4, K, "cpu", layer_ids=[0, 1])
    a.seed(0, ["x", "y"], _rows([1, 2]))
    assert a.prepare(["y", "x", "new"]) == 3
    pre = a.read(0)
    assert torch.equal(pre[0], _rows([2])[0]) and torch.equal(pre[1], _rows([1])[0])
    assert (pre[2] == -1).all()               # never seen: no hint
    assert (a.read(1) == -1).all()            # layer 1 was not seeded
    a.write_back(0, _idx_for([7, 8, 9], next_n=3), next_n=3)
    a.prepare(["new", "x", "y"])
    pre = a.read(0)
    # The last MTP row (j = 2) of each request, following the ids into their new positions.
    assert torch.equal(pre, _rows([92, 82, 72]))


def test_seed_from_prefill_last_token():
    prefill = _rows(list(range(7)))           # 7 context tokens: request a has 3, b has 4
    rows = last_token_rows(prefill, torch.tensor([3, 4]))
    assert torch.equal(rows, _rows([2, 6]))
    a = PriorArena(1, 4, K, "cpu")
    a.seed(0, ["a", "b"], rows)
    a.prepare(["b", "a"])
    assert torch.equal(a.read(0), _rows([6, 2]))
    with pytest.raises(TypeError, match="'prefill_indices'"):
        last_token_rows(prefill.long(), torch.tensor([7]))


def test_recomposition_finished_evicted_new_reordered():
    a = PriorArena(1, 4, K, "cpu")
    a.prepare(["a", "b", "c"])
    a.write_back(0, _rows([1, 2, 3]))
    # b finished, c evicted, d new, a moved: each id keeps its own prior; d has none.
    a.release(["b", "c"])
    a.prepare(["d", "a"])
    assert torch.equal(a.read(0)[1], _rows([1])[0]) and (a.read(0)[0] == -1).all()
    a.write_back(0, _rows([4, 5]))
    # c comes back after eviction: it was released, so it is a new request now (no stale hint).
    a.prepare(["c", "a", "d"])
    pre = a.read(0)
    assert (pre[0] == -1).all() and torch.equal(pre[1], _rows([5])[0]) and torch.equal(pre[2], _rows([4])[0])
    assert set(a.tracked()) == {"a", "c", "d"} and a.batch == ["c", "a", "d"]


def test_parked_requests_keep_prior_until_space_is_needed():
    a = PriorArena(1, 3, K, "cpu")
    a.prepare(["a", "b", "c"])
    a.write_back(0, _rows([1, 2, 3]))
    a.prepare(["c"])                          # a and b are parked (paused), not released
    a.write_back(0, _rows([30]))
    a.prepare(["b", "c"])                     # b returns with its prior
    assert torch.equal(a.read(0), _rows([2, 30]))
    # A new request needs a slot: the least recently scheduled parked one (a) is reclaimed...
    a.prepare(["n", "b"])
    assert a.slot_of("a") is None and (a.read(0)[0] == -1).all()
    # ... and a returning later is treated as never seen.
    a.prepare(["a"])
    assert (a.read(0) == -1).all()
    with pytest.raises(ValueError, match="'request_ids'.*max_sequences=3"):
        a.prepare(["p", "q", "r", "s"])


def test_use_prior_flags_and_padding():
    a = PriorArena(1, 4, K, "cpu")
    a.seed(0, ["a", "b"], _rows([1, 2]))
    assert a.prepare(["a", "b"], [False, True], padded_batch=4) == 4
    pre = a.read(0)
    assert pre.shape == (4, K) and (pre[0] == -1).all() and torch.equal(pre[1], _rows([2])[0])
    assert (pre[2:] == -1).all()
    # Every request writes back, hinted or not; padding rows go to the scratch row only.
    a.write_back(0, _rows([5, 6, 66, 77]))
    assert torch.equal(a.prior[0, a.slot_of("a")], _rows([5])[0])
    assert (a.prior[0, a.NULL] == -1).all()
    a.prepare(["a", "b"])
    assert torch.equal(a.read(0), _rows([5, 6]))


def test_bad_arguments_are_named():
    a = PriorArena(1, 2, K, "cpu")
    with pytest.raises(ValueError, match="'request_ids'.*duplicates"):
        a.prepare(["a", "a"])
    with pytest.raises(ValueError, match="'use_prior'"):
        a.prepare(["a"], [True, False])
    with pytest.raises(ValueError, match="'padded_batch'"):
        a.prepare(["a"], padded_batch=3)
    a.prepare(["a"])
    with pytest.raises(TypeError, match="'indices'.*int32"):
        a.write_back(0, torch.zeros(1, K, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"'indices'.*\(2, >= K=16\)"):
        a.write_back(0, torch.zeros(1, K, dtype=torch.int32), next_n=2)
    with pytest.raises(ValueError, match=r"'topk_rows'.*\(1, >= K=16\)"):
        a.seed(0, ["a"], torch.zeros(1, K - 1, dtype=torch.int32))
    with pytest.raises(ValueError, match="'next_n'"):
        a.write_back(0, torch.zeros(1, K, dtype=torch.int32), next_n=0)


def test_stable_addresses_and_reset():
    a = PriorArena(2, 4, K, "cpu")
    ptrs = [t.data_ptr() for t in (a.prior, a.read_slots, a.write_slots)]
    for batch in (["a", "b"], ["c"], ["b", "d", "a"], []):
        a.prepare(batch, padded_batch=3)
        a.write_back(0, _rows([1, 2, 3]))
    a.release(["a"])
    a.reset()
    assert [t.data_ptr() for t in (a.prior, a.read_slots, a.write_slots)] == ptrs
    assert (a.prior == -1).all() and a.tracked() == []


def test_decode_path_reads_nothing_back(monkeypatch):
    """read / write_back (and the resolver's per-layer calls) never move device data to the host."""
    r = HintResolver(load_config("deepseek-v4-flash"), "cpu", max_sequences=4)
    r.seed(2, ["a"], torch.zeros(1, 512, dtype=torch.int32))
    step = r.prepare(["a", "b"], ["steady_decode", "disagg_generation"], padded_batch=3)
    idx = torch.zeros(3 * 4, 512, dtype=torch.int32)

    def forbidden(*_a, **_k):
        raise AssertionError("host read on the decode path")

    for name in ("item", "tolist", "cpu", "numpy", "__bool__", "__int__", "__index__"):
        monkeypatch.setattr(torch.Tensor, name, forbidden)
    for layer in (2, 4):
        pre = r.pre_idx(layer, step)
        r.write_back(layer, idx, step)
    monkeypatch.undo()
    assert pre.shape == (3, 512)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_graph_replay_follows_requests():
    a = PriorArena(1, 4, K, "cuda")
    a.seed(0, ["a", "b"], _rows([1, 2]).cuda())
    a.prepare(["a", "b"], padded_batch=3)
    src = torch.zeros(3, K, dtype=torch.int32, device="cuda")
    out = torch.zeros(3, K, dtype=torch.int32, device="cuda")
    torch.cuda.set_sync_debug_mode("error")
    try:
        a.read(0)  # warm up the kernels outside capture
        a.write_back(0, src.clone())
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out.copy_(a.read(0))
            a.write_back(0, src)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    a.seed(0, ["a", "b"], _rows([1, 2]).cuda())
    a.prepare(["b", "c", "a"], padded_batch=3)
    src.copy_(_rows([20, 30, 10]).cuda())
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out[0].cpu(), _rows([2])[0]) and (out[1] == -1).all()
    assert torch.equal(out[2].cpu(), _rows([1])[0])
    a.prepare(["a", "c", "b"], padded_batch=3)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), _rows([10, 30, 20]))
