"""torch.nn.functional.group_norm: per-sample normalisation over channel groups against NumPy,
with affine weight and bias, edge group counts and gradients."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F


def _np(t):
    return t.detach().double().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 1e-2, torch.bfloat16: 6e-2}


def _tensor(shape, dtype, device, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape) * 3 + 1
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


def _reference(x, groups, weight, bias, eps):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, (c // groups) * int(np.prod(x.shape[2:])))
    out = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)
    out = out.reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "shape,groups",
    [((2, 6), 3), ((3, 4, 7), 2), ((2, 6, 5, 5), 3), ((0, 4, 3), 2), ((8, 32, 64, 64), 8)],
    ids=["2d", "3d", "4d", "empty_batch", "large"],
)
def test_group_norm_values(device, timed, dtype, shape, groups):
    c = shape[1]
    x = _tensor(shape, dtype, device)
    w, b = _tensor((c,), dtype, device, 1), _tensor((c,), dtype, device, 2)
    out = timed(F.group_norm, x, groups, w, b, 1e-5)
    assert out.shape == x.shape and out.dtype == dtype
    tol = TOLS[dtype]
    np.testing.assert_allclose(
        _np(out), _reference(_np(x), groups, _np(w), _np(b), 1e-5), rtol=tol, atol=tol * 20
    )


@pytest.mark.parametrize("groups", [1, 2, 6], ids=["layer_norm_like", "two", "instance_norm_like"])
def test_group_norm_group_counts_no_affine(device, timed, groups):
    x = _tensor((3, 6, 4, 5), torch.float64, device)
    out = timed(F.group_norm, x, groups)
    np.testing.assert_allclose(_np(out), _reference(_np(x), groups, None, None, 1e-5), rtol=1e-11, atol=1e-11)


def test_group_norm_constant_group_and_eps(device, timed):
    x = torch.full((1, 4, 3), 7.0, dtype=torch.float64, device=device)
    out = timed(F.group_norm, x, 2, eps=0.5)
    np.testing.assert_array_equal(_np(out), np.zeros((1, 4, 3)))


def test_group_norm_rejects_indivisible(device, timed):
    with pytest.raises(RuntimeError):
        timed(F.group_norm, torch.zeros(2, 5, 3, device=device), 2)


def test_group_norm_gradient(device, timed):
    x = _tensor((2, 4, 3), torch.float64, device).requires_grad_()
    w = _tensor((4,), torch.float64, device, 1).requires_grad_()
    b = _tensor((4,), torch.float64, device, 2).requires_grad_()
    assert torch.autograd.gradcheck(lambda a, c, d: timed(F.group_norm, a, 2, c, d), (x, w, b))
