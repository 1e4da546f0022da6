"""torch.relu: max(0, x) elementwise per dtype and shape, NaN/inf edges and the gradient, against NumPy."""

import numpy as np
import pytest
import torch

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
SHAPES = [(0,), (3, 5, 17), (1 << 18,)]  # the last: 1 MB of float32


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _np(t: torch.Tensor) -> np.ndarray:
    """A tensor on the host as float64 (bfloat16 has no NumPy dtype)."""
    return t.detach().to("cpu", torch.float64).numpy()


def _reference(a: np.ndarray) -> np.ndarray:
    # max(0, x) with NaN propagated (NaN <= 0 is False, so NaN is kept)
    return np.where(a <= 0, 0.0, a)


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_relu_values(device, timed, dtype, shape):
    data = np.random.default_rng(0).standard_normal(shape) * 10
    x = torch.from_numpy(data).to(device=device, dtype=dtype)
    out = timed(torch.relu, x)
    assert out.shape == x.shape and out.dtype == dtype
    # ReLU only selects values: the result must be exactly the input or zero, in any dtype.
    np.testing.assert_array_equal(_np(out), _reference(_np(x)))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int8], ids=_ids)
def test_relu_integers(device, timed, dtype):
    data = np.arange(-60, 61, 3)
    x = torch.from_numpy(data).to(device=device, dtype=dtype)
    out = timed(torch.relu, x)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.cpu().numpy(), np.maximum(data, 0))


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
def test_relu_special_values(device, timed, dtype):
    data = np.array([-0.0, 0.0, -1.5, 2.5, np.nan, np.inf, -np.inf, -1e-30, 1e-30])
    x = torch.from_numpy(data).to(device=device, dtype=dtype)
    out = _np(timed(torch.relu, x))
    assert np.isnan(out[4]), "NaN must propagate through relu"
    assert out[5] == np.inf and out[6] == 0.0
    # Zero of either sign stays a zero (the sign of max(0, -0.0) is not specified).
    assert out[0] == 0.0 and out[1] == 0.0 and out[2] == 0.0 and out[7] == 0.0
    assert out[3] == 2.5
    # 1e-30 underflows to 0 in float16 but not in bfloat16/float32/float64.
    np.testing.assert_array_equal(out[8], _np(x)[8])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_relu_gradient(device, timed, dtype):
    data = np.array([-2.0, -0.5, 0.0, 0.25, 3.0, 7.0])
    x = torch.from_numpy(data).to(device=device, dtype=dtype).requires_grad_()
    out = timed(torch.relu, x)
    assert out.requires_grad
    (grad,) = torch.autograd.grad(out.sum(), x)
    # The derivative is 1 for x > 0 and 0 elsewhere (0 at x == 0 by PyTorch's convention).
    np.testing.assert_array_equal(_np(grad), (data > 0).astype(np.float64))


def test_relu_keeps_input_and_layout(device, timed):
    data = np.random.default_rng(1).standard_normal((6, 9))
    base = torch.from_numpy(data).to(device=device, dtype=torch.float32)
    x = base.t()  # non-contiguous input
    before = x.clone()
    out = timed(torch.relu, x)
    assert torch.equal(x, before), "torch.relu is out of place"
    np.testing.assert_array_equal(_np(out), _reference(_np(before)))
