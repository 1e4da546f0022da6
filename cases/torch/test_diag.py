"""torch.diag: build a diagonal matrix from a vector, or take a diagonal of a matrix, against numpy.diag."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
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


def _tensor(shape, dtype, device):
    data = np.random.default_rng(0).integers(-9, 9, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "shape,k",
    [((0,), 0), ((5,), 0), ((5,), 2), ((4,), -3), ((0, 3), 0), ((4, 6), 1), ((6, 4), -2), ((1024, 512), 3)],
    ids=["vec_empty", "vec", "vec_super", "vec_sub", "mat_empty", "mat_super", "mat_sub", "mat_large"],
)
def test_diag_values(device, timed, dtype, shape, k):
    x = _tensor(shape, dtype, device)
    out = timed(torch.diag, x, diagonal=k)
    expected = np.diag(_np(x), k=k)
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(_np(out), expected)


def test_diag_offset_beyond_matrix(device, timed):
    x = _tensor((3, 4), torch.float32, device)
    out = timed(torch.diag, x, 10)
    assert out.shape == (0,)


def test_diag_out(device, timed):
    x = _tensor((6,), torch.float64, device)
    out = torch.empty(0, dtype=torch.float64, device=device)
    result = timed(torch.diag, x, out=out)
    np.testing.assert_array_equal(_np(result), np.diag(_np(x)))
    np.testing.assert_array_equal(_np(out), np.diag(_np(x)))


def test_diag_non_contiguous(device, timed):
    x = _tensor((8, 6), torch.float32, device).t()[:, ::2]
    out = timed(torch.diag, x, diagonal=-1)
    np.testing.assert_array_equal(_np(out), np.diag(_np(x), k=-1))


@pytest.mark.parametrize("shape", [(), (2, 3, 4)], ids=["scalar", "3d"])
def test_diag_rejects_other_ranks(device, timed, shape):
    with pytest.raises(RuntimeError):
        timed(torch.diag, torch.zeros(shape, device=device))


@pytest.mark.parametrize("shape", [(4,), (3, 5)], ids=["vector", "matrix"])
def test_diag_gradient(device, timed, shape):
    x = _tensor(shape, torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: timed(torch.diag, t, 1), (x,))
