"""kernels.linear: the tuned-HGEMM nn.Linear against nn.Linear and the fp64 reference (forward, bias, batch and
vector inputs, empty batches, gradients, torch.compile), and swap_linears on a model; on a GPU also a swapped model
in a CUDA graph."""
import pytest
import torch
import torch.nn.functional as F

import kernels
from kernels.dispatch import relative_error
from kernels.linear import Linear, swap_linears

CPU_BOUND = 1e-3  # the CPU backend accumulates in fp32; fp16 output rounding dominates
GPU_BOUND = 2e-3  # fp32 accumulation, fp16 output (and, for two layers, the fp16 hidden) rounding


def randn(*shape, seed=0, device="cpu"):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).half().to(device)


def reference(x, layer):
    y = x.detach().double() @ layer.weight.detach().double().t()
    return y if layer.bias is None else y + layer.bias.detach().double()


def mlp(dtype=torch.float16):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(48, 64), torch.nn.ReLU(),
                               torch.nn.Sequential(torch.nn.Linear(64, 40, bias=False)),
                               torch.nn.Linear(40, 8).to(torch.float32)).to(dtype)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(48,), (5, 48), (2, 3, 48), (1, 1, 1, 48)])
def test_forward_matches_fp64_for_any_leading_shape(shape, bias):
    layer = Linear(48, 40, bias=bias)
    x = randn(*shape, seed=len(shape))
    y = layer(x)
    assert y.shape == (*shape[:-1], 40) and y.dtype == torch.float16
    assert relative_error(y, reference(x, layer)) < CPU_BOUND


def test_zero_one_inputs_give_exact_counts():
    layer = Linear(48, 40)
    g = torch.Generator().manual_seed(4)
    with torch.no_grad():
        layer.weight.copy_((torch.rand(40, 48, generator=g) < 0.5).half())
        layer.bias.copy_((torch.rand(40, generator=g) < 0.5).half())
    x = (torch.rand(16, 48, generator=g) < 0.5).half()
    assert torch.equal(layer(x).double(), reference(x, layer))


def test_state_dict_and_init_are_nn_linears():
    torch.manual_seed(1)
    ours = Linear(24, 16)
    torch.manual_seed(1)
    theirs = torch.nn.Linear(24, 16, dtype=torch.float16)
    assert ours.state_dict().keys() == theirs.state_dict().keys()
    assert all(torch.equal(ours.state_dict()[k], theirs.state_dict()[k]) for k in theirs.state_dict())
    theirs.load_state_dict(Linear(24, 16).state_dict())
    x = randn(3, 24, seed=2)
    ours.load_state_dict(theirs.state_dict())
    assert relative_error(ours(x), F.linear(x.double(), theirs.weight.double(), theirs.bias.double())) < CPU_BOUND
    assert "acc=f32" in repr(ours)


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")   # nn.Linear(0, 8)'s own init
def test_no_rows_or_no_features_take_f_linear():
    layer = Linear(48, 40)
    assert layer(randn(0, 48)).shape == (0, 40)
    assert layer(randn(2, 0, 48)).shape == (2, 0, 40)
    empty = Linear(0, 8)
    assert torch.equal(empty(randn(3, 0)), empty.bias.detach().expand(3, 8))


def test_the_in_place_bias_of_inference_equals_the_autograd_path():
    layer = Linear(48, 40)
    x = randn(6, 48, seed=3)
    y_grad = layer(x)
    assert y_grad.grad_fn is not None
    with torch.no_grad():
        y = layer(x)
    assert y.grad_fn is None and torch.equal(y, y_grad.detach())


def test_gradients_match_fp64():
    layer = Linear(56, 40)
    x = randn(24, 56, seed=5).requires_grad_()
    grad = randn(24, 40, seed=6)
    layer(x).backward(grad)
    x64 = x.detach().double().requires_grad_()
    w64 = layer.weight.detach().double().requires_grad_()
    b64 = layer.bias.detach().double().requires_grad_()
    F.linear(x64, w64, b64).backward(grad.double())
    for ours, theirs in ((x.grad, x64.grad), (layer.weight.grad, w64.grad), (layer.bias.grad, b64.grad)):
        assert ours.shape == theirs.shape and relative_error(ours, theirs) < CPU_BOUND


def test_bad_construction_is_refused():
    with pytest.raises(TypeError, match="float16"):
        Linear(8, 8, dtype=torch.float32)
    with pytest.raises(ValueError, match="acc"):
        Linear(8, 8, acc="f64")
    with pytest.raises(TypeError, match="float16"):
        Linear.from_linear(torch.nn.Linear(8, 8))
    with pytest.raises(ValueError, match="acc"):
        Linear.from_linear(torch.nn.Linear(8, 8, dtype=torch.float16), acc="bf16")
    with pytest.raises(TypeError, match="float16"):
        Linear(8, 8)(torch.randn(2, 8))
    with pytest.raises(ValueError, match="1 dimension"):
        Linear(1, 8)(torch.tensor(1.0).half())


def test_swap_linears_replaces_the_fp16_layers_sharing_their_parameters():
    model = mlp()
    model[3].float()                                        # one layer left in fp32: not ours to take
    x = randn(5, 48, seed=7)
    weights = [model[0].weight, model[2][0].weight]
    with torch.no_grad():
        expected = model[2](model[1](model[0](x).double().half())).double()
    assert swap_linears(model, acc="f16") == 2
    assert [type(m) for m in (model[0], model[2][0], model[3])] == [Linear, Linear, torch.nn.Linear]
    assert model[0].weight is weights[0] and model[2][0].weight is weights[1] and model[2][0].bias is None
    assert dict(model[2][0].named_parameters()).keys() == {"weight"} and "bias" in model[2][0]._parameters
    assert model[0].acc == model[2][0].acc == "f16"
    with torch.no_grad():
        hidden = model[2](model[1](model[0](x)))
    assert relative_error(hidden, expected) < CPU_BOUND
    assert swap_linears(model) == 0                         # ours are not nn.Linear any more: nothing to swap


def test_swap_linears_takes_only_what_where_allows():
    model = mlp().eval()
    assert swap_linears(model, where=lambda name, m: name.startswith("2.")) == 1
    assert type(model[2][0]) is Linear and type(model[0]) is torch.nn.Linear
    assert not model[2][0].training                         # the swapped layer keeps the model's mode


def test_a_swapped_model_compiles_and_matches_eager():
    model = mlp()
    model[3].half()
    swap_linears(model)
    x = randn(9, 48, seed=8)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    with torch.no_grad():
        assert torch.equal(compiled(x), model(x))


@pytest.mark.gpu
def test_gpu_swapped_model_matches_fp64_and_replays_in_a_cuda_graph():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 512), torch.nn.Linear(512, 256, bias=False)).half().cuda()
    assert swap_linears(model) == 2
    x = randn(256, 1024, seed=9, device="cuda")
    with torch.no_grad():
        hidden = model[0](x)
        assert relative_error(hidden, reference(x, model[0])) <= GPU_BOUND
        y = model(x)                                        # warm: choices and launchers made outside capture
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = model(x)
        captured.fill_(float("nan"))                        # poison: only the replay may write it
        x.copy_(randn(256, 1024, seed=10, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
    expected = reference(x, model[0]) @ model[1].weight.double().t()    # fp64 through both layers
    assert y.shape == captured.shape == (256, 256)
    assert relative_error(captured, expected) <= GPU_BOUND
    dispatcher = kernels.get_dispatcher()
    for m, n, k in ((256, 512, 1024), (256, 256, 512)):     # both grid shapes: the col tables answer for them
        assert dispatcher.select(m, n, k, "col", "f32").fallback is None
