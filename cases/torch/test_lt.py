"""torch.lt: elementwise less-than with broadcasting and type promotion, against numpy.less."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int32, torch.int64]


def _tensor(shape, dtype, device, seed):
    data = np.random.default_rng(seed).integers(-5, 5, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "shape_a,shape_b",
    [((0,), (0,)), ((7,), (7,)), ((3, 1), (1, 5)), ((2, 3, 4), (4,)), ((1024, 1024), (1024, 1024))],
    ids=["empty", "odd", "broadcast", "broadcast_rank", "large"],
)
def test_lt_values(device, timed, dtype, shape_a, shape_b):
    a, b = _tensor(shape_a, dtype, device, 0), _tensor(shape_b, dtype, device, 1)
    out = timed(torch.lt, a, b)
    expected = np.less(_np(a), _np(b))
    assert out.dtype == torch.bool and tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(_np(out), expected)


@pytest.mark.parametrize("other", [0, 1.5, -2], ids=["int_zero", "float", "negative"])
def test_lt_python_scalar(device, timed, other):
    a = _tensor((4, 5), torch.int32, device, 0)
    out = timed(torch.lt, a, other)
    np.testing.assert_array_equal(_np(out), _np(a) < other)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
def test_lt_special_values(device, timed, dtype):
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([nan, 1.0, -inf, inf, -0.0, 0.0, nan], dtype=dtype, device=device)
    b = torch.tensor([1.0, nan, inf, inf, 0.0, -0.0, nan], dtype=dtype, device=device)
    out = timed(torch.lt, a, b)
    assert out.tolist() == [False, False, True, False, False, False, False]


def test_lt_mixed_dtypes_promote(device, timed):
    a = torch.tensor([1, 2, 3], dtype=torch.int64, device=device)
    b = torch.tensor([1.5, 1.5, 3.5], dtype=torch.float16, device=device)
    out = timed(torch.lt, a, b)
    assert out.tolist() == [True, False, True]
    big = torch.tensor([2**53 + 1], dtype=torch.int64, device=device)
    assert timed(torch.lt, big - 1, big).tolist() == [True]


def test_lt_out_and_operator(device, timed):
    a, b = _tensor((3, 4), torch.float32, device, 0), _tensor((3, 4), torch.float32, device, 1)
    out = torch.empty(3, 4, dtype=torch.bool, device=device)
    result = timed(torch.lt, a, b, out=out)
    np.testing.assert_array_equal(_np(result), _np(a) < _np(b))
    assert torch.equal(a < b, result)


def test_lt_incompatible_shapes(device, timed):
    with pytest.raises(RuntimeError):
        timed(torch.lt, torch.zeros(3, device=device), torch.zeros(4, device=device))
