"""torch.Tensor.is_same_size: whether two tensors have the same shape (dtype and layout ignored)."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "shape_a,shape_b",
    [
        ((), ()),
        ((0,), (0,)),
        ((0, 3), (3, 0)),
        ((2, 3), (2, 3)),
        ((2, 3), (3, 2)),
        ((6,), (2, 3)),
        ((1, 4), (4,)),
        ((512, 512), (512, 512)),
    ],
    ids=["scalars", "empty", "empty_transposed", "equal", "transposed", "same_numel", "extra_dim", "large"],
)
def test_is_same_size(device, timed, dtype, shape_a, shape_b):
    a = torch.zeros(shape_a, dtype=dtype, device=device)
    b = torch.ones(shape_b, dtype=dtype, device=device)
    result = timed(torch.Tensor.is_same_size, a, b)
    assert result is (shape_a == shape_b)
    assert result == np.array_equal(np.shape(_np(a)), np.shape(_np(b)))


def test_is_same_size_ignores_dtype(device, timed):
    a = torch.zeros(3, 4, dtype=torch.float16, device=device)
    b = torch.zeros(3, 4, dtype=torch.int64, device=device)
    assert timed(torch.Tensor.is_same_size, a, b) is True


def test_is_same_size_views_and_strides(device, timed):
    base = torch.arange(24.0, device=device).reshape(4, 6)
    view = base.t().contiguous().t()
    assert timed(torch.Tensor.is_same_size, base, view) is True
    assert timed(torch.Tensor.is_same_size, base[:, ::2], torch.empty(4, 3, device=device)) is True
    assert timed(torch.Tensor.is_same_size, base.t(), base) is False


def test_is_same_size_broadcastable_is_not_same(device, timed):
    a = torch.zeros(3, 1, device=device)
    b = torch.zeros(3, 5, device=device)
    assert timed(torch.Tensor.is_same_size, a, b) is False
    assert timed(torch.Tensor.is_same_size, a.expand(3, 5), b) is True
