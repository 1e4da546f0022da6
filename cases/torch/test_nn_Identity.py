"""torch.nn.Identity: the forward returns its input unchanged, bit for bit, whatever the constructor got."""

import numpy as np
import pytest
import torch
from torch import nn

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.bool]


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _tensor(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> torch.Tensor:
    data = np.random.default_rng(0).standard_normal(shape) * 10
    return torch.from_numpy(data).to(device=device, dtype=dtype)


def _bits(t: torch.Tensor) -> np.ndarray:
    """The raw bytes of a tensor, so NaN payloads and signed zeros compare exactly."""
    return t.detach().cpu().reshape(-1).view(torch.uint8).numpy()


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "shape", [(0, 5), (7,), (3, 1, 5), (512, 512)], ids=["empty", "odd", "unit", "large"]
)
def test_identity_returns_input(device, timed, dtype, shape):
    module = nn.Identity()
    x = _tensor(shape, dtype, device)
    expected = x.clone()
    out = timed(module, x)
    assert out.shape == x.shape and out.dtype == dtype and out.device == x.device
    np.testing.assert_array_equal(_bits(out), _bits(expected))


def test_identity_ignores_constructor_arguments(device, timed):
    # The documented example: any positional and keyword arguments are accepted and unused.
    module = nn.Identity(54, unused_argument1=0.1, unused_argument2=False)
    x = _tensor((128, 20), torch.float32, device)
    out = timed(module, x)
    assert out.shape == (128, 20)
    np.testing.assert_array_equal(_bits(out), _bits(x))
    assert list(module.parameters()) == [] and list(module.buffers()) == []
    assert module.state_dict() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
def test_identity_special_values(device, timed, dtype):
    data = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1e-40, -65504.0])
    x = torch.from_numpy(data).to(device=device, dtype=dtype)
    out = timed(nn.Identity(), x)
    np.testing.assert_array_equal(_bits(out), _bits(x))
    assert bool(torch.signbit(out[0])) and not bool(torch.signbit(out[1]))


def test_identity_is_the_same_object_in_eager():
    # Identity's forward is `return input`: the very tensor comes back, a non-contiguous view included.
    x = torch.arange(12.0).reshape(3, 4).t()
    out = nn.Identity()(x)
    assert out is x and not out.is_contiguous()


def test_identity_gradient(device, timed):
    x = _tensor((4, 3), torch.float64, device).requires_grad_()
    weights = torch.linspace(-1, 1, 12, dtype=torch.float64, device=device).reshape(4, 3)
    out = timed(nn.Identity(), x)
    (grad,) = torch.autograd.grad((out * weights).sum(), x)
    np.testing.assert_array_equal(grad.cpu().numpy(), weights.cpu().numpy())


def test_identity_in_a_sequential(device, timed):
    torch.manual_seed(0)
    linear = nn.Linear(5, 3, dtype=torch.float64, device=device)
    model = nn.Sequential(nn.Identity(), linear, nn.Identity())
    x = _tensor((6, 5), torch.float64, device)
    out = timed(model, x)
    w, b = linear.weight.detach().cpu().numpy(), linear.bias.detach().cpu().numpy()
    np.testing.assert_allclose(out.detach().cpu().numpy(), x.cpu().numpy() @ w.T + b, rtol=1e-12)


def test_identity_takes_exactly_one_input(device):
    with pytest.raises(TypeError):
        nn.Identity()(torch.ones(2, device=device), torch.ones(2, device=device))
