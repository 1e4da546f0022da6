"""torch.sum: sum of all elements or along dims, against a float64 NumPy sum."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


EPS = {torch.float32: 1e-6, torch.float64: 1e-14, torch.float16: 1e-3, torch.bfloat16: 8e-3}


def _tensor(shape, dtype, device, seed=0):
    data = np.random.default_rng(seed).uniform(-1, 1, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


def _check(out, x, expected_dtype, **np_kwargs):
    ref = _np(x).astype(np.float64)
    expected = np.sum(ref, **np_kwargs)
    scale = np.sum(np.abs(ref), **np_kwargs) + 1.0
    assert out.dtype == expected_dtype and tuple(out.shape) == np.shape(expected)
    eps = EPS[expected_dtype]
    assert np.all(np.abs(_np(out).astype(np.float64) - expected) <= 4 * eps * scale)


@pytest.mark.parametrize("dtype", list(EPS), ids=_ids)
@pytest.mark.parametrize(
    "shape",
    [(0,), (), (7,), (5, 33), (3, 4, 129), (1 << 20,)],
    ids=["empty", "scalar", "odd", "2d", "3d", "large"],
)
def test_sum_all(device, timed, dtype, shape):
    x = _tensor(shape, dtype, device)
    out = timed(torch.sum, x)
    _check(out, x, dtype)


@pytest.mark.parametrize("keepdim", [False, True], ids=["drop", "keepdim"])
@pytest.mark.parametrize("dim", [0, -1, (0, 2), (1,)], ids=["0", "-1", "0_2", "tuple1"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=_ids)
def test_sum_dims(device, timed, dtype, dim, keepdim):
    x = _tensor((6, 0, 5) if dim == (1,) else (6, 7, 5), dtype, device)
    out = timed(torch.sum, x, dim=dim, keepdim=keepdim)
    _check(out, x, dtype, axis=dim, keepdims=keepdim)


@pytest.mark.parametrize(
    "dtype,result",
    [
        (torch.bool, torch.int64),
        (torch.int8, torch.int64),
        (torch.int32, torch.int64),
        (torch.uint8, torch.int64),
    ],
    ids=["bool", "int8", "int32", "uint8"],
)
def test_sum_integral_promotes_to_int64(device, timed, dtype, result):
    data = np.random.default_rng(0).integers(0, 2 if dtype == torch.bool else 100, (1000, 3))
    x = torch.from_numpy(data).to(device=device, dtype=dtype)
    out = timed(torch.sum, x, dim=0)
    assert out.dtype == result
    np.testing.assert_array_equal(_np(out), data.astype(bool).sum(0) if dtype == torch.bool else data.sum(0))


@pytest.mark.parametrize("acc", [torch.float32, torch.float64], ids=_ids)
def test_sum_dtype_argument(device, timed, acc):
    x = torch.full((4096,), 0.1, dtype=torch.float16, device=device)
    out = timed(torch.sum, x, dtype=acc)
    assert out.dtype == acc
    assert abs(out.item() - 4096 * float(torch.tensor(0.1, dtype=torch.float16))) < 1e-2


def test_sum_special_values(device, timed):
    x = torch.tensor([[1.0, float("inf")], [float("nan"), 2.0], [float("inf"), -float("inf")]], device=device)
    out = timed(torch.sum, x, dim=1)
    values = out.tolist()
    assert values[0] == float("inf") and np.isnan(values[1]) and np.isnan(values[2])


def test_sum_gradient(device, timed):
    x = _tensor((3, 4), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: timed(torch.sum, t, dim=1), (x,))
    timed(torch.sum, x).backward()
    np.testing.assert_array_equal(_np(x.grad), np.ones((3, 4)))
