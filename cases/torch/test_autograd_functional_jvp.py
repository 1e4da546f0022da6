"""torch.autograd.functional.jvp: Jacobian-vector products, against analytic Jacobians in NumPy."""

import numpy as np
import pytest
import torch
import torch.autograd.functional as AF


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12}


def _tensor(shape, dtype, device, seed):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(device=device, dtype=dtype)


def _exp_reducer(x):
    return x.exp().sum(dim=1)


def _tanh_matmul(x, w):
    return torch.tanh(x @ w)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "shape", [(0, 3), (4, 4), (5, 7), (512, 512)], ids=["empty", "square", "odd", "large"]
)
def test_jvp_single_input(device, timed, dtype, shape):
    x, v = _tensor(shape, dtype, device, 0), _tensor(shape, dtype, device, 1)
    out, jvp = timed(AF.jvp, _exp_reducer, x, v)
    xs, vs = _np(x).astype(np.float64), _np(v).astype(np.float64)
    assert out.shape == (shape[0],) and jvp.shape == (shape[0],) and jvp.dtype == dtype
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), np.exp(xs).sum(1), rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(jvp), (np.exp(xs) * vs).sum(1), rtol=tol * 10, atol=tol * 10)
    assert not jvp.requires_grad


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
def test_jvp_tuple_inputs(device, timed, dtype):
    x, w = _tensor((3, 4), dtype, device, 0), _tensor((4, 2), dtype, device, 1)
    vx, vw = _tensor((3, 4), dtype, device, 2), _tensor((4, 2), dtype, device, 3)
    out, jvp = timed(AF.jvp, _tanh_matmul, (x, w), (vx, vw))
    xs, ws, vxs, vws = (_np(t).astype(np.float64) for t in (x, w, vx, vw))
    z = xs @ ws
    expected = (1 - np.tanh(z) ** 2) * (vxs @ ws + xs @ vws)
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), np.tanh(z), rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(jvp), expected, rtol=tol * 10, atol=tol * 10)


def test_jvp_scalar_input_without_v(device, timed):
    x = torch.tensor(0.7, dtype=torch.float64, device=device)
    out, jvp = timed(AF.jvp, torch.sin, x)
    assert abs(out.item() - np.sin(0.7)) < 1e-14 and abs(jvp.item() - np.cos(0.7)) < 1e-14


def test_jvp_linear_map_equals_matrix_product(device, timed):
    a = _tensor((6, 5), torch.float64, device, 0)
    x, v = _tensor((5,), torch.float64, device, 1), _tensor((5,), torch.float64, device, 2)
    _, jvp = timed(AF.jvp, lambda t: a @ t, x, v)
    np.testing.assert_allclose(_np(jvp), _np(a) @ _np(v), rtol=1e-12)


def test_jvp_create_graph_allows_higher_order(device, timed):
    x = _tensor((3,), torch.float64, device, 0).requires_grad_()
    v = torch.ones(3, dtype=torch.float64, device=device)
    _, jvp = timed(AF.jvp, lambda t: (t**3).sum(), x, v, create_graph=True)
    assert jvp.requires_grad
    (grad,) = torch.autograd.grad(jvp, x)
    np.testing.assert_allclose(_np(grad), 6 * _np(x), rtol=1e-12)


def test_jvp_strict_and_shape_errors(device, timed):
    x = _tensor((3,), torch.float64, device, 0)
    v = torch.ones(3, dtype=torch.float64, device=device)
    with pytest.raises(RuntimeError):
        timed(AF.jvp, lambda t: torch.ones(2, dtype=t.dtype, device=t.device), x, v, strict=True)
    _, zero = timed(AF.jvp, lambda t: torch.ones(2, dtype=t.dtype, device=t.device), x, v)
    assert not zero.any()
    with pytest.raises(RuntimeError):
        timed(AF.jvp, _exp_reducer, x.reshape(1, 3), torch.ones(4, dtype=torch.float64, device=device))
