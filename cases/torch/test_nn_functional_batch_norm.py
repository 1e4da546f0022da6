"""torch.nn.functional.batch_norm: normalisation with running or batch statistics against NumPy,
running-stat updates in training, and the error paths the study timed."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F


def _np(t):
    return t.detach().double().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 1e-2, torch.bfloat16: 6e-2}


def _tensor(shape, dtype, device, seed=0, low=None):
    rng = np.random.default_rng(seed)
    data = rng.uniform(low, 2.0, shape) if low is not None else rng.standard_normal(shape) * 2 + 0.5
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


def _bshape(x):
    return (1, -1) + (1,) * (x.ndim - 2)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "shape",
    [(4, 3), (5, 2, 7), (2, 3, 5, 6), (0, 3, 4), (32, 64, 32, 32)],
    ids=["2d", "3d", "4d", "empty", "large"],
)
def test_batch_norm_eval(device, timed, dtype, shape):
    c = shape[1]
    x = _tensor(shape, dtype, device)
    mean, var = _tensor((c,), dtype, device, 1), _tensor((c,), dtype, device, 2, low=0.5)
    w, b = _tensor((c,), dtype, device, 3), _tensor((c,), dtype, device, 4)
    out = timed(F.batch_norm, x, mean, var, w, b, training=False, eps=1e-5)
    s = _bshape(x)
    expected = (_np(x) - _np(mean).reshape(s)) / np.sqrt(_np(var).reshape(s) + 1e-5) * _np(w).reshape(s)
    expected += _np(b).reshape(s)
    assert out.shape == x.shape and out.dtype == dtype
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), expected, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("shape", [(8, 3), (4, 2, 9), (16, 8, 64, 64)], ids=["2d", "3d", "large"])
def test_batch_norm_training_updates_running_stats(device, timed, dtype, shape):
    c = shape[1]
    x = _tensor(shape, dtype, device)
    running_mean = torch.zeros(c, dtype=dtype, device=device)
    running_var = torch.ones(c, dtype=dtype, device=device)
    out = timed.once(F.batch_norm, x, running_mean, running_var, training=True, momentum=0.25, eps=1e-5)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    ref = _np(x)
    mu, var = ref.mean(axes), ref.var(axes)
    unbiased = ref.var(axes, ddof=1)
    s = _bshape(x)
    expected = (ref - mu.reshape(s)) / np.sqrt(var.reshape(s) + 1e-5)
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), expected, rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(_np(running_mean), 0.25 * mu, rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(_np(running_var), 0.75 + 0.25 * unbiased, rtol=tol, atol=tol * 10)


def test_batch_norm_training_without_running_stats(device, timed):
    x = _tensor((6, 4), torch.float64, device)
    out = timed(F.batch_norm, x, None, None, training=True)
    ref = _np(x)
    np.testing.assert_allclose(_np(out), (ref - ref.mean(0)) / np.sqrt(ref.var(0) + 1e-5), rtol=1e-10)


@pytest.mark.parametrize(
    "case",
    ["running_mean_size", "running_var_size", "weight_size", "bias_size", "one_value_per_channel"],
)
def test_batch_norm_error_paths(device, timed, case):
    x = torch.randn(4, 3, 5, device=device)
    args = {
        "running_mean": torch.zeros(3, device=device),
        "running_var": torch.ones(3, device=device),
        "weight": torch.ones(3, device=device),
        "bias": torch.zeros(3, device=device),
    }
    training, error = False, RuntimeError
    if case == "one_value_per_channel":
        x, training, error = torch.randn(1, 3, device=device), True, ValueError
    else:
        args[case.removesuffix("_size")] = torch.ones(4, device=device)
    with pytest.raises(error):
        timed(
            F.batch_norm,
            x,
            args["running_mean"],
            args["running_var"],
            args["weight"],
            args["bias"],
            training=training,
        )


def test_batch_norm_gradient(device, timed):
    x = _tensor((5, 3, 2), torch.float64, device).requires_grad_()
    w = _tensor((3,), torch.float64, device, 1).requires_grad_()
    b = _tensor((3,), torch.float64, device, 2).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda a, c, d: timed(F.batch_norm, a, None, None, c, d, training=True), (x, w, b)
    )
    timed(F.batch_norm, x, None, None, w, b, training=True).sum().backward()
    np.testing.assert_allclose(_np(b.grad), np.full(3, 10.0))
    np.testing.assert_allclose(_np(x.grad), np.zeros((5, 3, 2)), atol=1e-10)
