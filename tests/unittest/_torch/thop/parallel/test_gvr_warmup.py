"""Launcher cache, warm-up and the refusal of uncompiled launchers during CUDA-graph capture.

CPU: the pure parts (signatures, compile keys, the bounded cache, messages, argument checks) and the cached launch
path through Triton's interpreter, with capture simulated by patching ``gvr_topk.launch.cache.capturing``.
GPU: real capture and replay after ``gvr_topk.warmup``, a cold capture, several row counts on a side stream, and
tensors on a second GPU.
"""

import enum
import warnings

import pytest
import torch

import gvr_topk
from gvr_topk import api
from gvr_topk import tuning
from gvr_topk import workspace as workspace_mod
from gvr_topk.launch import cache
from gvr_topk.testing import check_exact

pytestmark = pytest.mark.gvr_topk
DEV = "cuda" if torch.cuda.is_available() else "cpu"
gpu_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture
def fresh():
    """Start with no prepared launch and nothing warm; restore the process's warm record afterwards."""
    saved = set(cache._WARM)
    api.clear_launch_cache(forget_warm=True)
    yield
    api.clear_launch_cache()
    cache._WARM.update(saved)


@pytest.fixture
def simulated_capture(monkeypatch):
    """Make every launch believe it runs inside CUDA-graph capture (CPU stand-in for a real capture)."""
    monkeypatch.setattr(cache, "capturing", lambda device: True)


def _case(rows=2, n=1000, k=16, next_n=2, hinted=False, values=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, n, generator=g).to(DEV)
    batch = rows // next_n
    kv = torch.randint(k // 2, n + 1, (batch,), generator=g, dtype=torch.int32).to(DEV)
    pre = torch.randint(-1, n, (batch, k), generator=g, dtype=torch.int32).to(DEV) if hinted else None
    idx = torch.full((rows, k), -7, dtype=torch.int32, device=DEV)
    val = torch.full((rows, k), 7.0, device=DEV) if values else None
    return x, pre, kv, idx, val


class _Int(enum.IntEnum):
    TWO = 2


# ---------------------------------------------------------------------------------------------------------------
# Pure parts
# ---------------------------------------------------------------------------------------------------------------

def test_int_spec_mirrors_triton_specialisation():
    assert cache.int_spec(1) == ("i32", True, False)
    assert cache.int_spec(0) == ("i32", False, True)
    assert cache.int_spec(48) == ("i32", False, True)
    assert cache.int_spec(50) == ("i32", False, False)
    assert cache.int_spec(-16) == ("i32", False, True)
    assert cache.int_spec(2**31 - 1)[0] == "i32" and cache.int_spec(2**31)[0] == "i64"
    assert cache.int_spec(2**63)[0] == "u64"


def test_constexpr_names_of_every_kernel():
    from gvr_topk.launch.common import family_module

    for fam in gvr_topk.FAMILIES:
        names = cache.constexpr_names(family_module(fam).kernel())
        assert {"K", "KB", "HINT_FREE", "VARLEN", "HAS_VALUES"} <= names, fam
        assert not names & {"n_bound", "row_stride", "next_n", "cr_shift", "n_uniform", "aim"}, fam


def test_static_key_follows_specialisation_not_values():
    from gvr_topk.launch.common import family_module

    kern = family_module("reg").kernel()
    ptrs = {"logits_ptr": torch.float32, "indices_ptr": torch.int32}

    def key(**kw):
        base = dict(n_bound=4096, row_stride=4096, K=64, BLOCK=4096, HINT_FREE=True, num_warps=8)
        base.update(kw)
        return cache.static_key(kern, "cuda:0", base, ptrs)

    assert key() == key(row_stride=8192, n_bound=2048)  # both multiples of 16: one compiled variant
    assert key() != key(row_stride=4100)  # no longer a multiple of 16
    assert key() != key(row_stride=1)  # Triton folds the value 1
    assert key() != key(row_stride=2**33)  # 64-bit int argument
    assert key() != key(K=65)  # constexprs by value
    assert key() != key(HINT_FREE=False)
    assert key() != key(num_warps=4)
    assert key() != cache.static_key(kern, "cuda:1", dict(n_bound=4096, row_stride=4096, K=64, BLOCK=4096,
                                                         HINT_FREE=True, num_warps=8), ptrs)
    assert key() != cache.static_key(kern, "cuda:0", dict(n_bound=4096, row_stride=4096, K=64, BLOCK=4096,
                                                         HINT_FREE=True, num_warps=8),
                                     dict(ptrs, logits_ptr=torch.bfloat16))
    assert cache.alignment([0, 16, 4, 1024 + 8]) == (True, True, False, False)


def test_bounded_cache_clears_at_its_limit():
    c = cache.BoundedCache(3)
    for i in range(3):
        c.put(i, i)
    c.put(1, "again")  # an existing key never clears
    assert len(c) == 3 and c[1] == "again"
    c.put(3, 3)
    assert dict(c) == {3: 3}
    with pytest.raises(ValueError):
        cache.BoundedCache(0)


def test_prepared_launches_are_bounded(monkeypatch):
    monkeypatch.setattr(api, "_PREPARED", cache.BoundedCache(4))
    idx = torch.empty(0, 8, dtype=torch.int32, device=DEV)
    kv = torch.empty(0, dtype=torch.int32, device=DEV)
    for npad in range(10, 30):  # zero rows: prepared and cached, nothing launched
        gvr_topk.run_varlen(torch.empty(0, npad, device=DEV), None, kv, idx, max_seq_len=npad)
        assert len(api._PREPARED) <= 4


def test_signature_covers_metadata_and_exact_int_types():
    x, pre, kv, idx, val = _case(hinted=True, values=True)

    def sig(**kw):
        a = dict(logits=x, pre_idx=pre, kv_lens=kv, indices=idx, values=val, next_n=2, compress_ratio=1,
                 max_seq_len=None, workspace=None, family=None, n_uniform=None)
        a.update(kw)
        return api._signature(**a)

    assert sig() == sig(logits=x.clone(), indices=torch.zeros_like(idx))  # data does not matter
    assert sig() != sig(logits=x.to(torch.float16))
    assert sig() != sig(logits=torch.empty(2, 1100, device=DEV)[:, :1000])  # row stride
    assert sig() != sig(values=None) and sig() != sig(pre_idx=None)
    assert sig() != sig(indices=idx.to(torch.int64))
    assert sig() != sig(max_seq_len=1000) and sig() != sig(family="reg")
    assert sig(next_n=True) is None and sig(next_n=_Int.TWO) is None  # int subclasses always meet _validate
    assert sig(logits=x.tolist()) is None and sig(max_seq_len=1000.0) is None


# ---------------------------------------------------------------------------------------------------------------
# The cached path (CPU: Triton interpreter)
# ---------------------------------------------------------------------------------------------------------------

def test_default_workspace_made_during_capture_warns_once(monkeypatch):
    """A default workspace made or grown during CUDA-graph capture puts its zeroing memset into the graph (1-2 us a
    replay, NOTES entry 43): the first such capture in a process warns, naming the fix; one outside capture never
    does. The capture state is stubbed, so this runs on the CPU."""
    monkeypatch.setattr(workspace_mod, "_DEFAULT", {})
    monkeypatch.setattr(workspace_mod, "_RETIRED", [])
    monkeypatch.setattr(workspace_mod, "_WARNED_CAPTURE", False)
    cpu = torch.device("cpu")
    capture = {"on": False}
    monkeypatch.setattr(workspace_mod, "capturing", lambda device: capture["on"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # outside capture: no warning
        a = workspace_mod.default_workspace(cpu, 1024)
    assert not bool(a[:workspace_mod.head_bytes()].any())  # the head is zeroed
    capture["on"] = True
    with pytest.warns(UserWarning, match=r"grown during CUDA-graph capture.*stream=s"):
        b = workspace_mod.default_workspace(cpu, a.numel() + 1)
    assert b.numel() > a.numel() and workspace_mod._RETIRED == [a]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process
        workspace_mod.default_workspace(cpu, 2 * b.numel())
        assert workspace_mod.default_workspace(cpu, 16) is workspace_mod._DEFAULT[next(iter(workspace_mod._DEFAULT))]


@pytest.mark.parametrize("family,hinted,values", [("reg", False, True), ("stream", True, False),
                                                  ("split", False, True)])
def test_cached_path_matches_uncached_path(fresh, family, hinted, values):
    n = 1000
    x, pre, kv, idx, val = _case(n=n, k=32, hinted=hinted, values=values)
    outs = []
    for next_n in (2, 2, _Int.TWO):  # prepares, then the cached launch, then the uncached path (IntEnum)
        idx.fill_(-7)
        if val is not None:
            val.fill_(7.0)
        gvr_topk.run_varlen(x, pre, kv, idx, next_n=next_n, values=val, max_seq_len=n, family=family)
        assert not check_exact(x, idx, kv_lens=kv, next_n=2, values=val)
        outs.append((idx.sort(1).values.clone(), None if val is None else val.sort(1).values.clone()))
    assert api._signature(x, pre, kv, idx, val, 2, 1, n, None, family, None) in api._PREPARED
    for o in outs[1:]:
        assert torch.equal(o[0], outs[0][0])
        assert o[1] is None or torch.equal(o[1], outs[0][1])


@pytest.mark.parametrize("family", ["stream", "split"])
def test_caller_workspace_views_are_reused_and_released(fresh, family):
    """A caller workspace's views are made once per tensor and launch, follow a storage swap (new address), and are
    dropped when the caller frees the tensor: the cache never keeps a workspace's memory alive."""
    import gc

    n, k, rows = 3000, 64, 2
    x, pre, kv, idx, _ = _case(rows=rows, n=n, k=k, next_n=1)
    wsb = torch.zeros(gvr_topk.workspace_bytes(rows, k), dtype=torch.uint8, device=DEV)
    for _ in range(3):
        idx.fill_(-7)
        gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, workspace=wsb, family=family)
        assert not check_exact(x, idx, kv_lens=kv)
    rec = api._CALLER_WS[id(wsb)]
    assert rec.ptr == wsb.data_ptr() and len(rec.per_entry) == 1
    old = wsb.clone()
    old_storage = torch.empty(0, dtype=torch.uint8, device=DEV).set_(wsb.untyped_storage())
    wsb.set_(torch.zeros_like(wsb).untyped_storage())  # same tensor object, new memory
    idx.fill_(-7)
    gvr_topk.run_varlen(x, None, kv, idx, max_seq_len=n, workspace=wsb, family=family)
    assert not check_exact(x, idx, kv_lens=kv)
    assert api._CALLER_WS[id(wsb)].ptr == wsb.data_ptr()
    assert (wsb != 0).any()  # candidates were staged in the new memory ...
    assert torch.equal(old_storage, old)  # ... and the old memory was left alone
    assert (wsb.view(torch.int32)[:rows] == 0).all()  # row counters back at zero
    key = id(wsb)
    del wsb
    gc.collect()
    assert key not in api._CALLER_WS


def test_bad_input_after_a_cached_good_call_still_raises_and_writes_nothing(fresh):
    x, pre, kv, idx, val = _case(hinted=True, values=True)
    gvr_topk.run_varlen(x, pre, kv, idx, next_n=2, values=val, max_seq_len=1000)  # cached now
    idx.fill_(-7)
    val.fill_(7.0)
    ws = torch.zeros(16, dtype=torch.uint8, device=DEV)
    bad = [
        (TypeError, "indices", dict(indices=idx.to(torch.int64))),
        (ValueError, "values", dict(values=torch.zeros(2, 8, device=DEV))),
        (TypeError, "values", dict(values=val.double())),
        (ValueError, "kv_lens", dict(kv_lens=kv.repeat(2))),
        (TypeError, "next_n", dict(next_n=True)),
        (ValueError, "compress_ratio", dict(compress_ratio=3)),
        (ValueError, "max_seq_len", dict(max_seq_len=-1)),
        (TypeError, "max_seq_len", dict(max_seq_len=1000.0)),
        (ValueError, "pre_idx", dict(pre_idx=pre[:, :8])),
        (ValueError, "family", dict(family="fast")),
        (ValueError, "workspace", dict(workspace=ws)),  # smaller than workspace_bytes(2, 16)
        (TypeError, "logits", dict(logits=x.to(torch.int32))),
    ]
    for exc, name, change in bad:
        kw = dict(logits=x, pre_idx=pre, kv_lens=kv, indices=idx, next_n=2, values=val, max_seq_len=1000)
        kw.update(change)
        with pytest.raises(exc, match=f"argument '{name}'"):
            gvr_topk.run_varlen(kw.pop("logits"), kw.pop("pre_idx"), kw.pop("kv_lens"), kw.pop("indices"), **kw)
        assert (idx == -7).all() and (val == 7.0).all(), name


def test_max_seq_len_means_no_host_read(fresh, monkeypatch):
    x, _, kv, idx, _ = _case()

    def forbidden(*_a, **_k):
        raise AssertionError("host read")

    for name in ("item", "tolist", "__int__", "__index__", "__bool__"):
        monkeypatch.setattr(torch.Tensor, name, forbidden)
    for _ in range(2):  # prepares, then the cached launch
        gvr_topk.run_varlen(x, None, kv, idx, next_n=2, max_seq_len=1000)
    with pytest.raises(AssertionError, match="host read"):  # without max_seq_len the contract is one read
        gvr_topk.run_varlen(x, None, kv, idx, next_n=2)
    monkeypatch.undo()
    assert not check_exact(x, idx, kv_lens=kv, next_n=2)


def test_envelope_from_kv_lens_follows_every_call(fresh):
    x, _, _, idx, _ = _case(next_n=1)
    for lens in ([40, 20], [1000, 300], [300, 200]):  # envelopes 64, 1024 clamped to 1000, 512
        kv = torch.tensor(lens, dtype=torch.int32, device=DEV)
        idx.fill_(-7)
        gvr_topk.run_varlen(x, None, kv, idx)
        assert not check_exact(x, idx, kv_lens=kv), lens
    prep = next(iter(api._PREPARED.values()))
    assert prep.entry is None and len(prep.entries) == 3


def test_reference_mode_without_the_interpreter(fresh, monkeypatch):
    if DEV != "cpu":
        pytest.skip("the reference path is the CPU path without TRITON_INTERPRET")
    monkeypatch.setattr(api, "_INTERPRETED", False)
    x, _, kv, idx, val = _case(values=True)
    for _ in range(2):
        idx.fill_(-7)
        gvr_topk.run_varlen(x, None, kv, idx, next_n=2, values=val, max_seq_len=1000)
        assert not check_exact(x, idx, kv_lens=kv, next_n=2, values=val)
    assert next(iter(api._PREPARED.values())).mode == api._REFERENCE


# ---------------------------------------------------------------------------------------------------------------
# Refusal of cold launchers during capture (simulated on CPU)
# ---------------------------------------------------------------------------------------------------------------

def test_cold_launcher_is_refused_during_capture_and_writes_nothing(fresh, monkeypatch):
    x, pre, kv, idx, val = _case(hinted=True, values=True)
    monkeypatch.setattr(cache, "capturing", lambda device: True)
    with pytest.raises(gvr_topk.ColdLauncherError) as e:
        gvr_topk.run_varlen(x, pre, kv, idx, next_n=2, values=val, max_seq_len=1000)
    msg = str(e.value)
    assert isinstance(e.value, RuntimeError)
    for part in ("no compiled launcher for rows=2, K=16, npad=1000", "hinted", "with values",
                 "during CUDA-graph capture", "gvr_topk.warmup(num_rows=[2], k=16, npad=1000, max_seq_len=1000",
                 "next_n=2", "hinted=[True]", "with_values=[True]", "before capture"):
        assert part in msg, (part, msg)
    assert (idx == -7).all() and (val == 7.0).all()
    monkeypatch.undo()
    gvr_topk.run_varlen(x, pre, kv, idx, next_n=2, values=val, max_seq_len=1000)  # outside capture: compiles
    monkeypatch.setattr(cache, "capturing", lambda device: True)
    idx.fill_(-7)
    gvr_topk.run_varlen(x, pre, kv, idx, next_n=2, values=val, max_seq_len=1000)  # warm: allowed
    assert not check_exact(x, idx, kv_lens=kv, next_n=2, values=val)
    # Another signature with the same compile key (another row stride, also 8 mod 16) is warm as well.
    wide = torch.zeros(2, 1016, device=DEV)[:, :1000]
    wide.copy_(x)
    gvr_topk.run_varlen(wide, pre, kv, idx, next_n=2, values=val, max_seq_len=1000)
    # A misaligned pointer is a different Triton variant: refused, and the message says which pointer.
    base = torch.zeros(2 * 1000 + 1, device=DEV)
    odd = base[1:].view(2, 1000)
    with pytest.raises(gvr_topk.ColdLauncherError, match="logits_ptr not 16-byte aligned"):
        gvr_topk.run_varlen(odd, pre, kv, idx, next_n=2, values=val, max_seq_len=1000)


def test_uniform_rows_cold_message_says_run_once(fresh, simulated_capture):
    x, _, _, idx, _ = _case()
    with pytest.raises(gvr_topk.ColdLauncherError, match="run the op once outside capture"):
        gvr_topk.run(x, None, 1000, idx)
    assert (idx == -7).all()


# ---------------------------------------------------------------------------------------------------------------
# warmup
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw,exc,name", [
    (dict(num_rows=[]), ValueError, "num_rows"),
    (dict(num_rows=[0]), ValueError, "num_rows"),
    (dict(num_rows=[3], next_n=2), ValueError, "num_rows"),
    (dict(num_rows=[2.0]), TypeError, "num_rows"),
    (dict(k=0), ValueError, "k"),
    (dict(k=2049), ValueError, "k"),
    (dict(npad=0), ValueError, "npad"),
    (dict(max_seq_len=None), TypeError, "max_seq_len"),
    (dict(compress_ratio=3), ValueError, "compress_ratio"),
    (dict(row_stride=100), ValueError, "row_stride"),
    (dict(out_stride=8), ValueError, "out_stride"),
    (dict(hinted="yes"), TypeError, "hinted"),
    (dict(with_values=[1]), TypeError, "with_values"),
    (dict(dtype=torch.int32), TypeError, "dtype"),
    (dict(family="fast"), ValueError, "family"),
    (dict(device="nonsense"), ValueError, "device"),
])
def test_warmup_rejects_bad_arguments(kw, exc, name):
    args = dict(num_rows=[2], k=16, npad=1000, max_seq_len=1000)
    args.update(kw)
    before = cache.warm_count()
    with pytest.raises(exc, match=f"argument '{name}'"):
        gvr_topk.warmup(**args)
    assert cache.warm_count() == before


@pytest.mark.parametrize("use_hint", [False, True])
def test_warmup_covers_what_capture_needs(fresh, monkeypatch, use_hint):
    monkeypatch.setattr(tuning, "REG_USE_HINT", use_hint)
    n = gvr_topk.warmup([2], 16, 1000, 1000, next_n=2, with_values=False, device=DEV)
    # Hinted and hint-free: two kernels where the register family reads hints, one where it ignores them.
    assert n == (2 if use_hint else 1)
    assert gvr_topk.warmup(2, 16, 1000, 1000, next_n=2, with_values=[False], device=DEV) == 0
    monkeypatch.setattr(cache, "capturing", lambda device: True)
    for rows, hinted in ((2, False), (4, True)):  # the register family compiles no row count in
        x, pre, kv, idx, _ = _case(rows=rows, hinted=hinted, seed=rows)
        gvr_topk.run_varlen(x, pre, kv, idx, next_n=2, max_seq_len=1000)
        assert not check_exact(x, idx, kv_lens=kv, next_n=2)
    # Values were not warmed; another K is another kernel.
    x, pre, kv, idx, val = _case(values=True)
    with pytest.raises(gvr_topk.ColdLauncherError, match="with values"):
        gvr_topk.run_varlen(x, pre, kv, idx, next_n=2, values=val, max_seq_len=1000)
    x, pre, kv, idx, val = _case(rows=6, k=24)
    with pytest.raises(gvr_topk.ColdLauncherError, match="rows=6, K=24"):
        gvr_topk.run_varlen(x, pre, kv, idx, next_n=2, max_seq_len=1000)


def test_warmup_for_config_derives_the_configuration(monkeypatch):
    from gvr_topk.policy import load_config

    calls = []
    monkeypatch.setattr(api, "warmup", lambda *a, **k: calls.append((a, k)) or 1)
    assert gvr_topk.warmup_for_config("deepseek-v4-flash", batch_sizes=[1, 8], max_seq_len=65536,
                                      with_values=False, device=DEV) == 1
    (rows, k, npad, msl), kw = calls[0]
    cfg = load_config("deepseek-v4-flash")
    assert (rows, k, npad, msl) == ([cfg.next_n, 8 * cfg.next_n], 512, 65536 // 4, 65536)
    assert kw["compress_ratio"] == 4 and kw["next_n"] == cfg.next_n and kw["hinted"] == [False, True]
    assert kw["with_values"] is False
    calls.clear()
    gvr_topk.warmup_for_config("deepseek-v3.2", batch_sizes=4, max_seq_len=8000, npad=8192)
    (rows, k, npad, msl), kw = calls[0]
    assert (k, npad, kw["compress_ratio"]) == (2048, 8192, 1)
    with pytest.raises(TypeError, match="argument 'max_seq_len'"):
        gvr_topk.warmup_for_config("deepseek-v3.2", batch_sizes=[1], max_seq_len=None)


# ---------------------------------------------------------------------------------------------------------------
# GPU: real capture
# ---------------------------------------------------------------------------------------------------------------

def _gpu_case(rows, n, k, next_n=1, hinted=False, values=False, device="cuda", seed=0):
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(rows, n, generator=g, device=device)
    kv = torch.full((rows // next_n,), n, dtype=torch.int32, device=device)
    pre = torch.randint(0, n, (rows // next_n, k), generator=g, device=device, dtype=torch.int32) if hinted else None
    idx = torch.full((rows, k), -7, dtype=torch.int32, device=device)
    val = torch.full((rows, k), 7.0, device=device) if values else None
    return x, pre, kv, idx, val


@gpu_only
@pytest.mark.gpu
@pytest.mark.parametrize("n,hinted,uses_workspace", [(3000, False, False), (50000, True, True)])  # reg; split
def test_warmup_then_capture_and_replay(fresh, monkeypatch, n, hinted, uses_workspace):
    """Compiled kernels are shared by every stream, so a warm-up on one stream lets a capture on another compile
    nothing. The split family's default workspace of that stream is made inside the capture, though, which warns (a
    real capture here; the CPU test above stubs it); the register family needs no workspace and stays silent. Both
    replay exactly."""
    monkeypatch.setattr(workspace_mod, "_WARNED_CAPTURE", False)
    rows, k = 4, 512
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    assert gvr_topk.warmup([rows], k, n, n, hinted=[hinted], with_values=[True], stream=side) == 1
    torch.cuda.current_stream().wait_stream(side)
    x, pre, kv, idx, val = _gpu_case(rows, n, k, hinted=hinted, values=True)
    before = cache.warm_count()
    g = torch.cuda.CUDAGraph()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        # A stream of this capture's own, not `side`, nor torch's shared default capture stream, on which another
        # test of this process may already have made the default workspace (then nothing is made here, no warning).
        with torch.cuda.graph(g, stream=torch.cuda.Stream()):
            gvr_topk.run_varlen(x, pre, kv, idx, values=val, max_seq_len=n)
    assert cache.warm_count() == before  # nothing new was compiled inside the capture
    made = [str(w.message) for w in seen if "default workspace of this stream was made during" in str(w.message)]
    assert len(made) == int(uses_workspace), made
    for step in range(5):
        x.copy_(torch.randn(rows, n, device="cuda"))
        kv.copy_(torch.randint(0, n + 1, (rows,), dtype=torch.int32, device="cuda"))
        g.replay()
        torch.cuda.synchronize()
        assert not check_exact(x, idx, kv_lens=kv, values=val), step


@gpu_only
@pytest.mark.gpu
def test_cold_capture_raises_and_writes_nothing(fresh):
    rows, n, k = 2, 5000, 256
    x, _, kv, idx, val = _gpu_case(rows, n, k, values=True)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with pytest.raises(gvr_topk.ColdLauncherError, match=r"rows=2, K=256, npad=5000.*gvr_topk\.warmup\("):
        with torch.cuda.graph(g):
            gvr_topk.run_varlen(x, None, kv, idx, values=val, max_seq_len=n)
    torch.cuda.synchronize()
    assert (idx == -7).all() and (val == 7.0).all()
    # The process is healthy afterwards: warm up on the capturing stream (the README's pattern), then the same
    # capture works. (This shape routes to the register family, which uses no workspace; the split family's
    # captures after such a warm-up are checked to make no workspace in the several-row-counts test below.)
    s = torch.cuda.Stream()
    gvr_topk.warmup([rows], k, n, n, hinted=False, with_values=True, stream=s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        gvr_topk.run_varlen(x, None, kv, idx, values=val, max_seq_len=n)
    g.replay()
    torch.cuda.synchronize()
    assert not check_exact(x, idx, kv_lens=kv, values=val)


@gpu_only
@pytest.mark.gpu
def test_capture_on_a_stream_after_warmup_for_several_row_counts(fresh):
    k, n, next_n = 128, 20000, 2
    row_counts = [2, 8, 64, 512]  # split, split, stream, stream at n = 20000
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    assert gvr_topk.warmup(row_counts, k, n, n, next_n=next_n, hinted=[False, True], with_values=[False],
                           stream=s) > 0
    torch.cuda.synchronize()
    made = dict(workspace_mod._DEFAULT)
    graphs = []
    for rows in row_counts:
        x, pre, kv, idx, _ = _gpu_case(rows, n, k, next_n=next_n, hinted=rows % 4 == 0, seed=rows)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            gvr_topk.run_varlen(x, pre, kv, idx, next_n=next_n, max_seq_len=n)
        graphs.append((g, x, kv, idx))
    # The warm-up made the stream's workspace at its largest size: no capture made or grew one, so no graph holds
    # its zeroing memset (README, "CUDA graphs and warmup").
    after = {key: w.data_ptr() for key, w in workspace_mod._DEFAULT.items()}
    assert after == {key: w.data_ptr() for key, w in made.items()}
    for g, x, kv, idx in graphs:
        kv.copy_(torch.randint(0, n + 1, kv.shape, dtype=torch.int32, device="cuda"))
        g.replay()
    torch.cuda.synchronize()
    for g, x, kv, idx in graphs:
        assert not check_exact(x, idx, kv_lens=kv, next_n=next_n)


@gpu_only
@pytest.mark.gpu
def test_torch_op_capture_after_warmup_for_config(fresh):
    cfg = "deepseek-v4-flash"
    from gvr_topk.policy import load_config

    c = load_config(cfg)
    msl, batch = 32768, 2
    assert gvr_topk.warmup_for_config(cfg, batch_sizes=[batch], max_seq_len=msl, with_values=False) > 0
    rows, npad, k = batch * c.next_n, msl // 4, c.k
    x, pre, kv, idx, _ = _gpu_case(rows, npad, k, next_n=c.next_n, hinted=True)
    kv.fill_(msl)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        torch.ops.gvr.topk_varlen(x, pre, kv, idx, None, c.next_n, 4, msl)
    g.replay()
    torch.cuda.synchronize()
    assert not check_exact(x, idx, kv_lens=kv, next_n=c.next_n, compress_ratio=4)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
@pytest.mark.gpu
def test_fast_path_on_a_second_gpu(fresh):
    torch.cuda.set_device(0)
    rows, n, k = 4, 30000, 256
    for family in ("reg", "split"):
        x, pre, kv, idx, val = _gpu_case(rows, min(n, 12000) if family == "reg" else n, k, hinted=True,
                                         values=True, device="cuda:1")
        for _ in range(3):  # prepares, then the cached path, twice
            idx.fill_(-7)
            gvr_topk.run_varlen(x, pre, kv, idx, values=val, max_seq_len=x.shape[1], family=family)
            assert torch.cuda.current_device() == 0
            torch.cuda.synchronize(1)
            assert not check_exact(x, idx, kv_lens=kv, values=val), family
    # The same shapes on cuda:0 are a different launcher (Triton compiles per device).
    x0, _, kv0, idx0, _ = _gpu_case(rows, n, k)
    gvr_topk.run_varlen(x0, None, kv0, idx0, max_seq_len=n)
    torch.cuda.synchronize(0)
    assert not check_exact(x0, idx0, kv_lens=kv0)
