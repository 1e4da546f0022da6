"""torch.nn.Flatten: the module's forward merges dims start_dim..end_dim, against NumPy's reshape."""

import numpy as np
import pytest
import torch
from torch import nn

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _np(t: torch.Tensor) -> np.ndarray:
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _tensor(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> torch.Tensor:
    data = np.random.default_rng(0).standard_normal(shape) * 100
    return torch.from_numpy(data).to(device=device, dtype=dtype)


def _flat_shape(shape: tuple[int, ...], start: int, end: int) -> tuple[int, ...]:
    """The documented output shape: dims start..end (inclusive, negatives wrapped) multiplied."""
    nd = len(shape)
    start, end = start % nd, end % nd
    return (*shape[:start], int(np.prod(shape[start : end + 1])), *shape[end + 1 :])


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", [(0, 3, 4), (5, 3, 7), (64, 64, 64)], ids=["empty", "odd", "large"])
def test_flatten_default_dims(device, timed, dtype, shape):
    module = nn.Flatten()  # start_dim=1, end_dim=-1: keep the batch dim
    x = _tensor(shape, dtype, device)
    out = timed(module, x)
    assert out.shape == (shape[0], shape[1] * shape[2]) and out.dtype == dtype
    np.testing.assert_array_equal(_np(out), _np(x).reshape(shape[0], shape[1] * shape[2]))


@pytest.mark.parametrize("start,end", [(0, -1), (-3, -2), (2, 2), (-1, -1)], ids=lambda v: str(v))
def test_flatten_dim_ranges(device, timed, start, end):
    shape = (2, 3, 5, 7)
    x = _tensor(shape, torch.float32, device)
    out = timed(nn.Flatten(start, end), x)
    expected = _flat_shape(shape, start, end)
    assert tuple(out.shape) == expected
    np.testing.assert_array_equal(_np(out), _np(x).reshape(expected))


def test_flatten_keeps_special_values_and_values_order(device, timed):
    data = np.array([[[-0.0, np.nan], [np.inf, -np.inf]], [[1.0, -1.0], [0.0, 2.0]]])
    x = torch.from_numpy(data).to(device)
    out = timed(nn.Flatten(), x)
    flat = _np(out)
    np.testing.assert_array_equal(flat, data.reshape(2, 4))
    assert np.signbit(flat[0, 0]), "-0.0 must come through unchanged"


def test_flatten_non_contiguous_input(device, timed):
    x = _tensor((4, 6, 5), torch.float64, device).permute(2, 0, 1)  # (5, 4, 6), not contiguous
    out = timed(nn.Flatten(0, 1), x)
    np.testing.assert_array_equal(_np(out), _np(x).reshape(20, 6))


def test_flatten_gradient(device, timed):
    x = _tensor((3, 2, 4), torch.float64, device).requires_grad_()
    weights = torch.arange(24, dtype=torch.float64, device=device).reshape(3, 8)
    out = timed(nn.Flatten(), x)
    (grad,) = torch.autograd.grad((out * weights).sum(), x)
    # Flatten is a reshape: the gradient is the upstream gradient reshaped back.
    np.testing.assert_array_equal(_np(grad), _np(weights).reshape(3, 2, 4))


def test_flatten_zero_dim_and_one_dim_inputs(device, timed):
    scalar = torch.tensor(3.5, device=device)
    out = timed(nn.Flatten(0, -1), scalar)  # a 0-d tensor flattens to one element
    assert out.shape == (1,) and out.item() == 3.5
    vec = _tensor((9,), torch.float32, device)
    out = timed(nn.Flatten(0), vec)
    np.testing.assert_array_equal(_np(out), _np(vec))


@pytest.mark.parametrize(
    "start,end,error",
    [(2, 1, RuntimeError), (1, 5, IndexError), (-5, -1, IndexError)],
    ids=["reversed", "end_out", "start_out"],
)
def test_flatten_rejects_bad_dims(device, timed, start, end, error):
    x = _tensor((2, 3, 4), torch.float32, device)
    with pytest.raises(error):
        timed(nn.Flatten(start, end), x)


def test_flatten_module_attributes():
    module = nn.Flatten(2, -2)
    assert (module.start_dim, module.end_dim) == (2, -2)
    assert list(module.parameters()) == [] and "start_dim=2, end_dim=-2" in repr(module)
