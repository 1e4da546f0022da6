"""torch.range (deprecated for torch.arange): values from start to end *inclusive* by step."""

import math
import warnings

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64]


def _range(timed, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return timed(torch.range, *args, **kwargs)


def _reference(start, end, step):
    count = math.floor((end - start) / step) + 1
    return start + step * np.arange(max(count, 0), dtype=np.float64)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "start,end,step",
    [(0, 0, 1), (0, 10, 1), (1, 10, 3), (10, -5, -2), (0, 20, 4), (0, (1 << 18) - 1, 1)],
    ids=["single", "inclusive_end", "odd_step", "negative_step", "end_on_grid", "large"],
)
def test_range_values(device, timed, dtype, start, end, step):
    out = _range(timed, start, end, step, dtype=dtype, device=device)
    expected = _reference(start, end, step)
    assert out.dtype == dtype and out.shape == expected.shape and out.device.type == torch.device(device).type
    reference = torch.from_numpy(expected).to(dtype)
    np.testing.assert_array_equal(_np(out), _np(reference))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
@pytest.mark.parametrize(
    "start,end,step",
    [(0.0, 1.0, 0.1), (-1.5, 1.5, 0.25), (0.0, 0.95, 0.1)],
    ids=["tenths", "quarters", "end_off_grid"],
)
def test_range_fractional_steps(device, timed, dtype, start, end, step):
    out = _range(timed, start, end, step, dtype=dtype, device=device)
    expected = _reference(start, end, step)
    assert out.shape == expected.shape
    np.testing.assert_allclose(_np(out), expected, rtol=1e-6, atol=1e-6)


def test_range_default_dtype_and_inclusive(device, timed):
    out = _range(timed, 1, 4, device=device)
    assert out.dtype == torch.get_default_dtype() and out.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert torch.equal(out, torch.arange(1, 5, dtype=out.dtype, device=device))


def test_range_warns_deprecated(device, timed):
    with pytest.warns(UserWarning, match="deprecated"):
        timed(torch.range, 0, 3, device=device)


@pytest.mark.parametrize(
    "args", [(0, 5, 0), (5, 0, 1), (0, 5, -1)], ids=["zero_step", "wrong_direction", "sign"]
)
def test_range_rejects_bad_bounds(device, timed, args):
    with pytest.raises(RuntimeError):
        _range(timed, *args, device=device)


def test_range_out_and_requires_grad(device, timed):
    target = torch.empty(0, dtype=torch.float64, device=device)
    out = _range(timed, 0, 3, out=target)
    assert out is target and target.tolist() == [0.0, 1.0, 2.0, 3.0]
    leaf = _range(timed, 0, 2, device=device, requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf
