"""torch.nn.Parameter: shares its data, requires grad, registers on modules; grads of a timed affine map."""

import numpy as np
import pytest
import torch
from torch import nn

TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float64).numpy()


def _affine(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return x @ weight + bias


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "rows,inner,cols", [(0, 3, 2), (5, 7, 3), (512, 256, 128)], ids=["empty", "odd", "large"]
)
def test_parameter_in_a_timed_computation(device, timed, dtype, rows, inner, cols):
    rng = np.random.default_rng(0)
    weight = nn.Parameter(torch.from_numpy(rng.standard_normal((inner, cols))).to(device=device, dtype=dtype))
    bias = nn.Parameter(torch.from_numpy(rng.standard_normal(cols)).to(device=device, dtype=dtype))
    assert weight.requires_grad and weight.is_leaf and weight.grad_fn is None and weight.dtype == dtype
    x = torch.from_numpy(rng.standard_normal((rows, inner))).to(device=device, dtype=dtype)
    out = timed(_affine, x, weight, bias)
    assert out.shape == (rows, cols) and out.dtype == dtype and out.requires_grad
    assert type(out) is torch.Tensor, "results of operations on parameters are plain tensors"
    tol = TOLS[dtype] * np.sqrt(inner)  # a sum of `inner` rounded products
    np.testing.assert_allclose(_np(out), _np(x) @ _np(weight) + _np(bias), rtol=tol, atol=tol)
    out.sum().backward()
    # d(sum(x W + b))/dW = x^T 1, d/db = the row count.
    np.testing.assert_allclose(_np(weight.grad), _np(x).sum(0)[:, None].repeat(cols, 1), rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(bias.grad), np.full(cols, rows), rtol=tol)


def test_parameter_gradients_accumulate(device, timed):
    p = nn.Parameter(torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, device=device))
    for _ in range(3):
        out = timed(torch.mul, p, p)
        out.sum().backward()
    np.testing.assert_array_equal(_np(p.grad), 3 * 2 * _np(p))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
def test_parameter_shares_storage_with_its_data(device, dtype):
    data = torch.from_numpy(np.array([-0.0, np.nan, np.inf, 1.5])).to(device=device, dtype=dtype)
    p = nn.Parameter(data)
    assert isinstance(p, torch.Tensor) and isinstance(p, nn.Parameter)
    assert p.data_ptr() == data.data_ptr() and p.dtype == dtype and p.device == data.device
    with torch.no_grad():
        p[3] = 4.0
    assert float(data[3]) == 4.0, "the parameter is a view of the same storage"
    assert bool(torch.signbit(p[0])) and bool(torch.isnan(p[1])) and bool(torch.isinf(p[2]))
    assert not data.requires_grad, "wrapping does not change the original tensor's flag"


def test_parameter_options_and_refusals(device):
    frozen = nn.Parameter(torch.ones(2, device=device), requires_grad=False)
    assert isinstance(frozen, nn.Parameter) and not frozen.requires_grad
    empty = nn.Parameter()
    assert empty.shape == (0,) and empty.requires_grad and empty.dtype == torch.get_default_dtype()
    ints = nn.Parameter(torch.arange(3, device=device), requires_grad=False)
    assert ints.dtype == torch.int64
    with pytest.raises(RuntimeError):
        nn.Parameter(torch.arange(3, device=device))  # integers cannot require grad
    assert repr(frozen).startswith("Parameter containing:")


def test_parameter_registers_on_a_module(device, timed):
    module = nn.Module()
    module.scale = nn.Parameter(torch.full((3,), 2.0, device=device))
    module.plain = torch.ones(3, device=device)  # a plain tensor attribute is not registered
    assert [name for name, _ in module.named_parameters()] == ["scale"]
    assert list(module.state_dict()) == ["scale"]
    x = torch.tensor([1.0, -0.5, 4.0], device=device)
    out = timed(torch.mul, x, module.scale)
    np.testing.assert_array_equal(_np(out), [2.0, -1.0, 8.0])
    moved = module.to(torch.float64)
    assert isinstance(moved.scale, nn.Parameter) and moved.scale.dtype == torch.float64
