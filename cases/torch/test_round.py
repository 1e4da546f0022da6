"""torch.round (Tensor.round): round half to even, with decimals, against numpy.round."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _tensor(shape, dtype, device, scale=10.0):
    data = np.random.default_rng(0).uniform(-scale, scale, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
@pytest.mark.parametrize(
    "shape", [(0,), (), (7,), (5, 33), (1 << 18,)], ids=["empty", "scalar", "odd", "2d", "large"]
)
def test_round_values(device, timed, dtype, shape):
    x = _tensor(shape, dtype, device)
    out = timed(torch.Tensor.round, x)
    assert out.dtype == dtype and out.shape == x.shape
    np.testing.assert_array_equal(_np(out), np.round(_np(x)))


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
def test_round_half_to_even_and_specials(device, timed, dtype):
    values = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.4999, -0.0, float("inf"), -float("inf"), float("nan")]
    x = torch.tensor(values, dtype=dtype, device=device)
    out = timed(torch.Tensor.round, x)
    expected = np.round(_np(x))
    np.testing.assert_array_equal(_np(out), expected)
    assert np.signbit(_np(out)[3]) and np.signbit(_np(out)[7])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
@pytest.mark.parametrize("decimals", [1, 3, -1, -2])
def test_round_decimals(device, timed, dtype, decimals):
    x = _tensor((101,), dtype, device, scale=1000.0)
    out = timed(torch.Tensor.round, x, decimals=decimals)
    tol = 1e-12 if dtype == torch.float64 else 1e-4
    np.testing.assert_allclose(_np(out), np.round(_np(x).astype(np.float64), decimals), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8], ids=_ids)
def test_round_integers_unchanged(device, timed, dtype):
    x = torch.arange(0, 100, 7, device=device).to(dtype)
    out = timed(torch.Tensor.round, x)
    assert out.dtype == dtype and torch.equal(out, x)


def test_round_large_magnitudes_unchanged(device, timed):
    x = torch.tensor([2.0**52 + 1, -(2.0**53), 1e300], dtype=torch.float64, device=device)
    out = timed(torch.Tensor.round, x)
    assert out.tolist() == x.tolist()


def test_round_gradient_is_zero(device, timed):
    x = _tensor((4, 3), torch.float64, device).requires_grad_()
    timed(torch.Tensor.round, x).sum().backward()
    assert torch.equal(x.grad, torch.zeros_like(x))
