"""The torch op registry: opcheck, fakes for every op of the namespace, torch.compile(fullgraph=True)."""

import pytest
import torch

import gvr_topk
from gvr_topk import ops
from gvr_topk.testing import check_exact

pytestmark = pytest.mark.gvr_topk
DEV = "cuda" if torch.cuda.is_available() else "cpu"


def _namespace_ops():
    names = [s.name for s in torch._C._jit_get_all_schemas() if s.name.startswith(f"{ops.NAMESPACE}::")]
    return sorted(set(names))


def test_cpu_tests_exercise_the_triton_kernels():
    """On CPU the suite must run the Triton kernels through the interpreter, not the torch reference."""
    if DEV == "cpu":
        assert gvr_topk.kernels_interpreted()


def test_namespace_has_ops():
    assert "gvr::topk_varlen" in _namespace_ops()


@pytest.mark.parametrize("qualname", _namespace_ops())
def test_every_op_has_a_fake(qualname):
    entry = torch._library.simple_registry.singleton.find(qualname)
    assert entry.fake_impl.kernel is not None, f"{qualname} has no fake implementation"


def _sample_args(hinted, with_values):
    rows, n, k, next_n = 4, 3000, 128, 2
    x = torch.randn(rows, n, device=DEV)
    kv = torch.tensor([3000, 1500], dtype=torch.int32, device=DEV)
    hint = torch.randint(-1, n, (rows // next_n, k), dtype=torch.int32, device=DEV) if hinted else None
    idx = torch.empty(rows, k, dtype=torch.int32, device=DEV)
    val = torch.empty(rows, k, device=DEV) if with_values else None
    return (x, hint, kv, idx, val, next_n, 1, 3000)


@pytest.mark.parametrize("hinted", [False, True])
@pytest.mark.parametrize("with_values", [False, True])
def test_opcheck(hinted, with_values):
    torch.library.opcheck(torch.ops.gvr.topk_varlen.default, _sample_args(hinted, with_values))


def test_op_results_are_exact():
    x, hint, kv, idx, val, next_n, cr, msl = _sample_args(True, True)
    torch.ops.gvr.topk_varlen(x, hint, kv, idx, val, next_n, cr, msl)
    assert not check_exact(x, idx, kv_lens=kv, next_n=next_n, values=val)


def test_fake_rejects_bad_arguments():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(4, 100)
        kv = torch.empty(3, dtype=torch.int32)
        idx = torch.empty(4, 8, dtype=torch.int32)
        with pytest.raises(ValueError, match="'kv_lens'"):
            torch.ops.gvr.topk_varlen(x, None, kv, idx, None, 1, 1, 100)


def test_torch_compile_fullgraph():
    backend = "inductor" if DEV == "cuda" else "aot_eager"

    def layer(scores, kv):
        idx, val = gvr_topk.topk(scores * 2.0, 64, kv_lens=kv, return_values=True, max_seq_len=2000)
        return idx, val.sum(dim=1)

    compiled = torch.compile(layer, fullgraph=True, backend=backend)
    x = torch.randn(3, 2000, device=DEV)
    kv = torch.tensor([2000, 70, 1200], dtype=torch.int32, device=DEV)
    idx, s = compiled(x, kv)
    assert not check_exact(x * 2.0, idx, kv_lens=kv)
    ref_idx, _ = layer(x, kv)
    assert torch.equal(torch.sort(idx, 1).values, torch.sort(ref_idx, 1).values)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
def test_cuda_graph_replay_follows_inputs():
    rows, n, k = 6, 50000, 512
    x = torch.randn(rows, n, device="cuda")
    kv = torch.full((rows,), n, dtype=torch.int32, device="cuda")
    idx = torch.empty(rows, k, dtype=torch.int32, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.ops.gvr.topk_varlen(x, None, kv, idx, None, 1, 1, n)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        torch.ops.gvr.topk_varlen(x, None, kv, idx, None, 1, 1, n)
    for step in range(20):
        x.copy_(torch.randn(rows, n, device="cuda"))
        kv.copy_(torch.randint(0, n + 1, (rows,), dtype=torch.int32, device="cuda"))
        kv[0] = k if step % 2 else k + 1  # a row crossing the short-row boundary inside the graph
        g.replay()
        torch.cuda.synchronize()
        assert not check_exact(x, idx, kv_lens=kv), f"replay {step}"
