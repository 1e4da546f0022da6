"""torch.cat: concatenate tensors along a dimension, against numpy.concatenate."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool]


def _tensor(shape, dtype, device, seed):
    data = np.random.default_rng(seed).integers(-50, 50, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize(
    "shapes,dim",
    [
        ([(2, 3), (4, 3), (1, 3)], 0),
        ([(3, 2), (3, 0), (3, 5)], 1),
        ([(2, 3, 4), (2, 3, 1)], -1),
        ([(0, 5), (0, 5)], 0),
        ([(7,)], 0),
        ([(256, 512), (256, 512), (1, 512)], 0),
    ],
    ids=["dim0", "dim1_with_empty", "neg_dim", "all_empty", "single", "large"],
)
def test_cat_values(device, timed, dtype, shapes, dim):
    tensors = [_tensor(s, dtype, device, i) for i, s in enumerate(shapes)]
    out = timed(torch.cat, tensors, dim=dim)
    expected = np.concatenate([_np(t) for t in tensors], axis=dim)
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(_np(out), expected)


def test_cat_skips_legacy_empty_1d(device, timed):
    a = _tensor((2, 3), torch.float32, device, 0)
    empty = torch.empty(0, device=device)
    out = timed(torch.cat, [a, empty, a], dim=0)
    np.testing.assert_array_equal(_np(out), np.concatenate([_np(a)] * 2))


@pytest.mark.parametrize(
    "dtypes,result",
    [
        ((torch.int32, torch.float32), torch.float32),
        ((torch.float16, torch.float64), torch.float64),
        ((torch.bool, torch.int64), torch.int64),
    ],
    ids=["int_float", "half_double", "bool_long"],
)
def test_cat_type_promotion(device, timed, dtypes, result):
    tensors = [torch.ones(2, 2, dtype=d, device=device) for d in dtypes]
    out = timed(torch.cat, tensors, dim=1)
    assert out.dtype == result and out.shape == (2, 4)
    assert out.double().sum().item() == 8


def test_cat_non_contiguous_inputs(device, timed):
    a = _tensor((4, 6), torch.float64, device, 0).t()
    b = _tensor((6, 8), torch.float64, device, 1)[:, ::2]
    out = timed(torch.cat, [a, b], dim=1)
    np.testing.assert_array_equal(_np(out), np.concatenate([_np(a), _np(b)], 1))


@pytest.mark.parametrize("case", ["shape_mismatch", "bad_dim", "empty_list"])
def test_cat_errors(device, timed, case):
    a = torch.zeros(2, 3, device=device)
    tensors, dim = {
        "shape_mismatch": ([a, torch.zeros(2, 4, device=device)], 0),
        "bad_dim": ([a, a], 2),
        "empty_list": ([], 0),
    }[case]
    with pytest.raises((RuntimeError, IndexError, ValueError)):
        timed(torch.cat, tensors, dim=dim)


def test_cat_gradient(device, timed):
    a = _tensor((2, 3), torch.float64, device, 0).requires_grad_()
    b = _tensor((2, 2), torch.float64, device, 1).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, y: timed(torch.cat, [x, y], dim=1), (a, b))
    weights = torch.arange(10.0, dtype=torch.float64, device=device).reshape(2, 5)
    (timed(torch.cat, [a, b], dim=1) * weights).sum().backward()
    np.testing.assert_array_equal(_np(a.grad), _np(weights[:, :3]))
    np.testing.assert_array_equal(_np(b.grad), _np(weights[:, 3:]))
