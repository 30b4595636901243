"""kernels.torch_op: torch.ops.hgemm.gemm against the fp64 reference, its fake implementation, autograd (both
layouts, gradients against fp64), torch.compile through it, PyTorch's own operator checks (opcheck); on a GPU also a
CUDA-graph capture and the tuned choice running under it."""
import pytest
import torch

import kernels
from kernels import torch_op
from kernels.dispatch import relative_error

CPU_BOUND = 1e-3  # the CPU backend accumulates in fp32; fp16 output rounding dominates


def operands(m, n, k, b_layout, device="cpu", seed=0, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g).half()
    b = torch.randn(*((k, n) if b_layout == "row" else (n, k)), generator=g).half()
    a, b = a.to(device), b.to(device)
    return a.requires_grad_(requires_grad), b.requires_grad_(requires_grad)


def reference(a, b, b_layout):
    a64, b64 = a.detach().double(), b.detach().double()
    return a64 @ (b64 if b_layout == "row" else b64.t())


@pytest.mark.parametrize("b_layout", ["row", "col"])
@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (7, 33, 65), (64, 128, 256)])
def test_forward_matches_the_fp64_reference(m, n, k, b_layout):
    a, b = operands(m, n, k, b_layout, seed=m + n + k)
    c = torch_op.gemm(a, b, b_layout=b_layout)
    assert c.shape == (m, n) and c.dtype == torch.float16
    assert relative_error(c, reference(a, b, b_layout)) < CPU_BOUND
    assert torch.equal(c, torch.ops.hgemm.gemm(a, b, b_layout, "f32"))


def test_zero_one_operands_give_exact_counts():
    g = torch.Generator().manual_seed(3)
    a = (torch.rand(32, 48, generator=g) < 0.5).half()
    b = (torch.rand(48, 40, generator=g) < 0.5).half()
    assert torch.equal(torch_op.gemm(a, b).double(), a.double() @ b.double())


def test_operands_that_are_not_contiguous_are_made_so():
    a, b = operands(16, 24, 32, "row")
    at = a.t().contiguous().t()          # same values, column-major storage
    assert not at.is_contiguous()
    assert torch.equal(torch_op.gemm(at, b), torch_op.gemm(a, b))


@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_batch_dimensions_of_a_are_one_gemm_forward_and_backward(b_layout):
    a, b = operands(2 * 3 * 5, 24, 40, b_layout, seed=6, requires_grad=True)
    x = a.detach().reshape(2, 3, 5, 40).requires_grad_()
    c = torch_op.gemm(x, b, b_layout=b_layout)
    assert c.shape == (2, 3, 5, 24)
    assert torch.equal(c.reshape(30, 24), torch_op.gemm(a, b, b_layout=b_layout))
    g = torch.randn(2, 3, 5, 24, generator=torch.Generator().manual_seed(7)).half()
    c.backward(g)
    b2 = b.detach().requires_grad_()
    torch_op.gemm(a, b2, b_layout=b_layout).backward(g.reshape(30, 24))
    assert x.grad.shape == x.shape and torch.equal(x.grad.reshape(30, 40), a.grad)
    assert torch.equal(b.grad, b2.grad)
    with torch.no_grad():                                       # the direct path too
        assert torch.equal(torch_op.gemm(x, b, b_layout=b_layout), c)
    with pytest.raises(ValueError):                             # b stays 2-D
        torch_op.gemm(x, b.detach().unsqueeze(0), b_layout=b_layout)


def test_the_operator_layer_is_skipped_only_in_plain_eager_code():
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._python_dispatch import TorchDispatchMode

    a, b = operands(8, 16, 24, "row", seed=4)
    assert torch_op._plain_eager(a, b)
    needs_grad = a.clone().requires_grad_()
    assert not torch_op._plain_eager(needs_grad, b)            # autograd must record the operator
    with torch.no_grad():
        assert torch_op._plain_eager(needs_grad, b)
        assert torch_op._plain_eager(a, torch.nn.Parameter(b))          # a model's weight, in inference
    assert not torch_op._plain_eager(a, torch.nn.Parameter(b))          # ... and in training
    with torch.inference_mode():
        assert torch_op._plain_eager(a, b)
    with FakeTensorMode() as mode:
        assert not torch_op._plain_eager(mode.from_tensor(a), mode.from_tensor(b))

    class Seen(TorchDispatchMode):                             # a tracer sees the operator, not what it runs
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Seen() as seen:
        c = torch_op.gemm(a, b)
    assert "hgemm.gemm.default" in seen.ops and torch.equal(c, torch_op.gemm(a, b))
    under_vmap = []                                            # vmap's batched tensors are of type torch.Tensor
    torch.vmap(lambda x: under_vmap.append(torch_op._plain_eager(x, b)) or x)(torch.stack([a, a]))
    assert under_vmap == [False]


@pytest.mark.parametrize("a, b, layout, error", [
    (torch.zeros(4, 8, dtype=torch.half), torch.zeros(9, 5, dtype=torch.half), "row", ValueError),   # K 8 vs 9
    (torch.zeros(4, 8, dtype=torch.half), torch.zeros(5, 9, dtype=torch.half), "col", ValueError),
    (torch.zeros(4, 8), torch.zeros(8, 5), "row", TypeError),
    (torch.zeros(2, 4, 8, dtype=torch.half), torch.zeros(8, 5, dtype=torch.half), "row", ValueError),
    (torch.zeros(4, 8, dtype=torch.half), torch.zeros(8, 5, dtype=torch.half), "diag", ValueError),
])
def test_bad_operands_raise_in_eager_and_in_the_fake_implementation(a, b, layout, error):
    with pytest.raises(error):
        torch.ops.hgemm.gemm(a, b, layout, "f32")
    if a.dim() == 2:                                            # the wrapper folds a's batch dims into M
        with pytest.raises(error):
            torch_op.gemm(a, b, b_layout=layout)                # plain eager: kernels.gemm's own checks
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode, pytest.raises(error):
        torch.ops.hgemm.gemm(mode.from_tensor(a), mode.from_tensor(b), layout, "f32")


def test_fake_implementation_gives_the_shape_without_running():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        c = torch.ops.hgemm.gemm(torch.empty(5, 7, dtype=torch.half), torch.empty(3, 7, dtype=torch.half), "col",
                                 "f16")
    assert c.shape == (5, 3) and c.dtype == torch.float16


@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_gradients_match_fp64(b_layout):
    m, n, k = 24, 40, 56
    a, b = operands(m, n, k, b_layout, seed=11, requires_grad=True)
    g = torch.Generator().manual_seed(12)
    grad = torch.randn(m, n, generator=g).half()
    torch_op.gemm(a, b, b_layout=b_layout).backward(grad)
    a64 = a.detach().double().requires_grad_()
    b64 = b.detach().double().requires_grad_()
    (a64 @ (b64 if b_layout == "row" else b64.t())).backward(grad.double())
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    assert relative_error(a.grad, a64.grad) < CPU_BOUND
    assert relative_error(b.grad, b64.grad) < CPU_BOUND


def test_only_the_gradients_asked_for_are_computed():
    a, b = operands(8, 8, 8, "row")
    b.requires_grad_()
    torch_op.gemm(a, b).sum().backward()
    assert a.grad is None and b.grad is not None


@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_torch_compile_traces_through_the_op(b_layout):
    def layer(x, w):
        return torch.relu(torch_op.gemm(x, w, b_layout=b_layout)) * 2

    torch._dynamo.reset()
    compiled = torch.compile(layer, backend="aot_eager", fullgraph=True)
    a, b = operands(16, 32, 48, b_layout, seed=5)
    assert torch.equal(compiled(a, b), layer(a, b))


@pytest.mark.filterwarnings("ignore::DeprecationWarning:torch.jit")   # torch's own import of torch.jit.script_method
def test_inductor_keeps_the_op_as_one_call_forward_and_backward():
    """torch.compile's default backend: the generated code calls the operator (inductor neither lowers it to its own
    mm nor fuses into it): once forward, twice backward (dA, dW); forward and gradients equal eager's."""
    from torch._inductor.utils import run_and_get_code

    def layer(x, w, bias):
        return torch.relu(torch_op.gemm(x, w, b_layout="col") + bias)

    x, w = operands(16, 32, 48, "col", seed=8, requires_grad=True)
    bias = torch.randn(32, generator=torch.Generator().manual_seed(9)).half()
    torch._dynamo.reset()

    def step():
        y = torch.compile(layer, fullgraph=True)(x, w, bias)
        y.sum().backward()
        return y

    y, code = run_and_get_code(step)
    assert [sum("hgemm.gemm.default(" in line for line in c.splitlines()) for c in code] == [1, 2]
    grads = x.grad, w.grad
    x.grad = w.grad = None
    expected = layer(x, w, bias)
    expected.sum().backward()
    assert torch.equal(y, expected) and torch.equal(grads[0], x.grad) and torch.equal(grads[1], w.grad)


def test_opcheck_passes():
    a, b = operands(8, 16, 24, "row", requires_grad=True)
    torch.library.opcheck(torch.ops.hgemm.gemm.default, (a, b, "row", "f32"))
    a, b = operands(8, 16, 24, "col", requires_grad=True)
    torch.library.opcheck(torch.ops.hgemm.gemm.default, (a, b, "col", "f16"))


@pytest.mark.gpu
@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_gpu_op_runs_the_tuned_choice_forward_backward_and_in_a_cuda_graph(b_layout):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    m, n, k = 256, 512, 1024
    a, b = operands(m, n, k, b_layout, device="cuda", seed=21, requires_grad=True)
    bound = kernels.get_dispatcher().tolerance("f32", k)
    c = torch_op.gemm(a, b, b_layout=b_layout)
    assert relative_error(c, reference(a, b, b_layout)) <= bound
    grad = torch.randn(m, n, device="cuda").half()
    c.backward(grad)
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    (a64 @ (b64 if b_layout == "row" else b64.t())).backward(grad.double())
    assert relative_error(a.grad, a64.grad) <= kernels.get_dispatcher().tolerance("f32", n)
    assert relative_error(b.grad, b64.grad) <= kernels.get_dispatcher().tolerance("f32", m)
    x, w = a.detach(), b.detach()
    out = torch_op.gemm(x, w, b_layout=b_layout)           # warm: the choice and its launcher made outside capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = torch_op.gemm(x, w, b_layout=b_layout)
    captured.fill_(float("nan"))                            # poison: only the replay may write it
    x.copy_(torch.randn(m, k, device="cuda").half())
    graph.replay()
    torch.cuda.synchronize()
    assert relative_error(captured, reference(x, w, b_layout)) <= bound
    assert out.shape == captured.shape
