"""torch.fliplr: reverse the order of columns (dim 1), against numpy.fliplr."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool]
SHAPES = [(0, 3), (3, 0), (5, 7), (2, 3, 4), (4, 5, 2, 3), (512, 1024)]


def _values(shape, dtype, device):
    data = np.random.default_rng(0).integers(-100, 100, shape)
    return torch.from_numpy(data).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_fliplr_values(device, timed, dtype, shape):
    x = _values(shape, dtype, device)
    out = timed(torch.fliplr, x)
    assert out.dtype == dtype and out.shape == x.shape
    expected = np.fliplr(_np(x))
    np.testing.assert_array_equal(_np(out), expected)


def test_fliplr_returns_a_copy(device, timed):
    x = _values((3, 4), torch.float32, device)
    out = timed(torch.fliplr, x)
    out[0, 0] = 1000.0
    assert x[0, -1].item() != 1000.0


def test_fliplr_non_contiguous_input(device, timed):
    x = _values((6, 8), torch.float64, device).t()
    out = timed(torch.fliplr, x)
    np.testing.assert_array_equal(_np(out), np.fliplr(_np(x)))


@pytest.mark.parametrize("shape", [(), (5,)], ids=["scalar", "1d"])
def test_fliplr_needs_two_dims(device, timed, shape):
    x = torch.zeros(shape, device=device)
    with pytest.raises(RuntimeError):
        timed(torch.fliplr, x)


def test_fliplr_gradient(device, timed):
    x = _values((3, 5), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: timed(torch.fliplr, t), (x,))
    weights = torch.arange(15.0, dtype=torch.float64, device=device).reshape(3, 5)
    (timed(torch.fliplr, x) * weights).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), np.fliplr(_np(weights)))
