"""torch.broadcast_tensors: expand tensors to one broadcast shape, against numpy.broadcast_arrays."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool]
SHAPE_SETS = [
    [(3, 1), (1, 4)],
    [(5,), (2, 1), ()],
    [(0, 1), (1, 3)],
    [(2, 1, 7), (3, 1), (1, 1, 1, 7)],
    [(4,)],
    [(512, 1), (1, 512)],
]


def _tensor(shape, dtype, device, seed):
    data = np.random.default_rng(seed).integers(-9, 9, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("shapes", SHAPE_SETS, ids=["2d", "with_scalar", "empty", "rank4", "single", "large"])
def test_broadcast_tensors_values(device, timed, dtype, shapes):
    tensors = [_tensor(s, dtype, device, i) for i, s in enumerate(shapes)]
    outs = timed(torch.broadcast_tensors, *tensors)
    expected = np.broadcast_arrays(*[_np(t) for t in tensors])
    assert len(outs) == len(tensors)
    for out, ref in zip(outs, expected):
        assert out.dtype == dtype and tuple(out.shape) == ref.shape
        np.testing.assert_array_equal(_np(out), ref)


def test_broadcast_tensors_keeps_each_dtype(device, timed):
    a = torch.ones(2, 1, dtype=torch.int32, device=device)
    b = torch.zeros(3, dtype=torch.float16, device=device)
    outs = timed(torch.broadcast_tensors, a, b)
    assert [o.dtype for o in outs] == [torch.int32, torch.float16]
    assert all(o.shape == (2, 3) for o in outs)


def test_broadcast_tensors_eager_returns_views(device):
    a = _tensor((3, 1), torch.float32, device, 0)
    b = _tensor((1, 4), torch.float32, device, 1)
    out_a, _ = torch.broadcast_tensors(a, b)
    assert out_a.data_ptr() == a.data_ptr() and out_a.stride() == (1, 0)


@pytest.mark.parametrize("shapes", [[(3,), (4,)], [(2, 3), (3, 2)]], ids=["1d", "2d"])
def test_broadcast_tensors_incompatible(device, timed, shapes):
    tensors = [torch.zeros(s, device=device) for s in shapes]
    with pytest.raises(RuntimeError):
        timed(torch.broadcast_tensors, *tensors)


def test_broadcast_tensors_gradient(device, timed):
    a = _tensor((3, 1), torch.float64, device, 0).requires_grad_()
    b = _tensor((1, 4), torch.float64, device, 1).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, y: timed(torch.broadcast_tensors, x, y), (a, b))
    out_a, out_b = timed(torch.broadcast_tensors, a, b)
    (out_a + 2 * out_b).sum().backward()
    np.testing.assert_array_equal(_np(a.grad), np.full((3, 1), 4.0))
    np.testing.assert_array_equal(_np(b.grad), np.full((1, 4), 6.0))
