"""torch.unbind (timed as Tensor.unbind, as the study did): the tuple of slices along a dim, against
NumPy indexing, per dtype, shape and dim, with gradients."""

import numpy as np
import pytest
import torch


def _np(t):
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool]


def _tensor(shape, dtype, device, seed=0):
    data = np.random.default_rng(seed).integers(-9, 9, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "shape,dim",
    [((3,), 0), ((4, 5), 0), ((4, 5), 1), ((2, 3, 7), -1), ((3, 0, 2), 0), ((4, 1 << 16), 0)],
    ids=["1d", "rows", "cols", "last", "empty_slices", "large"],
)
def test_unbind_values(device, timed, dtype, shape, dim):
    x = _tensor(shape, dtype, device)
    parts = timed(torch.Tensor.unbind, x, dim)
    assert isinstance(parts, tuple) and len(parts) == shape[dim]
    ref = _np(x)
    for i, part in enumerate(parts):
        expected = np.take(ref, i, axis=dim)
        assert part.dtype == dtype and tuple(part.shape) == expected.shape
        np.testing.assert_array_equal(_np(part), expected)


def test_unbind_zero_length_dim(device, timed):
    x = torch.zeros(0, 3, device=device)
    assert timed(torch.Tensor.unbind, x) == ()
    parts = timed(torch.Tensor.unbind, x, 1)
    assert len(parts) == 3 and all(p.shape == (0,) for p in parts)


def test_unbind_function_and_method_agree(device, timed):
    x = _tensor((3, 4), torch.float32, device)
    a = timed(torch.unbind, x, dim=1)
    b = timed(torch.Tensor.unbind, x, 1)
    assert all(torch.equal(p, q) for p, q in zip(a, b))
    assert torch.equal(torch.stack(a, dim=1), x)


def test_unbind_eager_returns_views(device):
    x = _tensor((3, 4), torch.float32, device)
    parts = x.unbind(1)
    assert parts[2].data_ptr() == x.data_ptr() + 2 * x.element_size()
    assert parts[0]._base is x


@pytest.mark.parametrize("dim", [2, -3])
def test_unbind_bad_dim(device, timed, dim):
    with pytest.raises(IndexError):
        timed(torch.Tensor.unbind, torch.zeros(2, 3, device=device), dim)


def test_unbind_gradient(device, timed):
    x = _tensor((3, 4), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: timed(torch.Tensor.unbind, t, 1), (x,))
    parts = timed(torch.Tensor.unbind, x, 0)
    (parts[0] * 1 + parts[2] * 3).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), np.array([[1.0] * 4, [0.0] * 4, [3.0] * 4]))
