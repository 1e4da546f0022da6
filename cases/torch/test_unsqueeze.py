"""torch.unsqueeze: insert a size-1 dim, against numpy.expand_dims, per dtype, shape and (negative)
dim, with view semantics, bad dims and gradients."""

import numpy as np
import pytest
import torch


def _np(t):
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.bool,
    torch.complex64,
]


def _tensor(shape, dtype, device, seed=0):
    data = np.random.default_rng(seed).integers(-9, 9, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "shape", [(), (0,), (7,), (5, 3), (1 << 18,)], ids=["scalar", "empty", "odd", "2d", "large"]
)
def test_unsqueeze_dim1(device, timed, dtype, shape):
    x = _tensor(shape, dtype, device)
    dim = min(1, len(shape))
    out = timed(torch.unsqueeze, x, dim)
    expected = np.expand_dims(_np(x), dim)
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(_np(out), expected)


@pytest.mark.parametrize("dim", [0, 1, 2, 3, -1, -2, -4])
def test_unsqueeze_all_positions(device, timed, dim):
    x = _tensor((2, 3, 4), torch.float32, device)
    out = timed(torch.unsqueeze, x, dim)
    expected = np.expand_dims(_np(x), dim)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(_np(out), expected)


@pytest.mark.parametrize("dim", [4, -5])
def test_unsqueeze_out_of_range(device, timed, dim):
    with pytest.raises(IndexError):
        timed(torch.unsqueeze, torch.zeros(2, 3, 4, device=device), dim)


def test_unsqueeze_strides_of_noncontiguous(device, timed):
    x = _tensor((4, 6), torch.float32, device).t()
    out = timed(torch.unsqueeze, x, 1)
    assert out.shape == (6, 1, 4)
    np.testing.assert_array_equal(_np(out), np.expand_dims(_np(x), 1))


def test_unsqueeze_eager_is_view(device):
    x = _tensor((3, 4), torch.float32, device)
    out = torch.unsqueeze(x, 0)
    assert out.data_ptr() == x.data_ptr() and out._base is x
    out[0, 1, 2] = 42
    assert x[1, 2].item() == 42


def test_unsqueeze_gradient(device, timed):
    x = _tensor((3, 2), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: timed(torch.unsqueeze, t, 1), (x,))
    (timed(torch.unsqueeze, x, 1) * 2).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), np.full((3, 2), 2.0))
