"""torch.ormqr: multiply C by the Q of a Householder QR (from torch.geqrf), on either side and
optionally (conjugate-)transposed, against Q rebuilt in NumPy from the reflectors."""

import numpy as np
import pytest
import torch


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-4, torch.float64: 1e-11, torch.complex64: 1e-4, torch.complex128: 1e-11}


def _rand(shape, dtype, device, seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    if dtype.is_complex:
        data = data + 1j * rng.standard_normal(shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


def _apply_q(a, tau, c, left, transpose):
    """Apply Q = H_1 H_2 ... H_k (H_i = I - tau_i v_i v_i^H, v_i = [0..0, 1, a[i+1:, i]], as LAPACK
    stores them) or Q^H to c from the left or right, one reflector at a time, in complex128."""
    reflectors = []
    for i in range(tau.shape[0]):
        v = a[i:, i].copy()  # v_i is zero above row i: only rows/columns i: are touched
        v[0] = 1.0
        reflectors.append((i, v, np.conj(tau[i]) if transpose else tau[i]))
    # Q C = H_1 (H_2 (... H_k C)); Q^H C = H_k^H (... H_1^H C); C Q = ((C H_1) H_2) ...; C Q^H reversed.
    if left != transpose:
        reflectors.reverse()
    c = c.copy()
    for i, v, t in reflectors:
        if left:
            c[i:] -= t * np.outer(v, v.conj() @ c[i:])
        else:
            c[:, i:] -= t * np.outer(c[:, i:] @ v, v.conj())
    return c


def _expected(a, tau, c, left, transpose):
    wide = np.complex128 if a.dtype.is_complex else np.float64
    a_np, tau_np, c_np = (t.cpu().numpy().astype(wide) for t in (a, tau, c))
    batch = a_np.shape[:-2]
    count = int(np.prod(batch))
    a_np = a_np.reshape(count, *a_np.shape[-2:])
    tau_np = tau_np.reshape(count, tau_np.shape[-1])
    c_np = c_np.reshape(count, *c_np.shape[-2:])
    out = [_apply_q(ai, ti, ci, left, transpose) for ai, ti, ci in zip(a_np, tau_np, c_np)]
    return np.stack(out).reshape(c.shape)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "a_shape,c_shape,left",
    [
        ((5, 5), (5, 3), True),
        ((6, 4), (6, 2), True),
        ((4, 4), (3, 4), False),
        ((2, 5, 3), (2, 5, 4), True),
        ((0, 0), (0, 3), True),
        ((256, 256), (256, 64), True),
    ],
    ids=["square_left", "tall_left", "right", "batched", "empty", "large"],
)
@pytest.mark.parametrize("transpose", [False, True], ids=["Q", "QH"])
def test_ormqr_values(device, timed, dtype, a_shape, c_shape, left, transpose):
    a, tau = torch.geqrf(_rand(a_shape, dtype, device, 0))
    c = _rand(c_shape, dtype, device, 1)
    out = timed(torch.ormqr, a, tau, c, left=left, transpose=transpose)
    assert out.dtype == dtype and out.shape == c.shape
    expected = _expected(a, tau, c, left, transpose)
    if not dtype.is_complex:
        expected = expected.real
    tol = TOLS[dtype] * max(1, np.sqrt(a_shape[-1]))
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_ormqr_reconstructs_input(device, timed, dtype):
    m = _rand((7, 4), dtype, device, 2)
    a, tau = torch.geqrf(m)
    r = torch.zeros(7, 4, dtype=dtype, device=device)
    r[:4] = a[:4].triu()
    rebuilt = timed(torch.ormqr, a, tau, r)  # Q R = M
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(rebuilt.cpu().numpy(), m.cpu().numpy(), rtol=tol, atol=tol)


def test_ormqr_q_is_orthogonal(device, timed):
    a, tau = torch.geqrf(_rand((6, 6), torch.float64, device, 3))
    eye = torch.eye(6, dtype=torch.float64, device=device)
    q = timed(torch.ormqr, a, tau, eye)
    qtq = timed(torch.ormqr, a, tau, q, transpose=True)
    np.testing.assert_allclose(qtq.cpu().numpy(), np.eye(6), atol=1e-12)


def test_ormqr_rejects_bad_shapes(device, timed):
    a, tau = torch.geqrf(_rand((5, 5), torch.float64, device, 4))
    with pytest.raises(RuntimeError):
        timed(torch.ormqr, a, tau, _rand((4, 2), torch.float64, device, 5))
    with pytest.raises(RuntimeError):
        timed(torch.ormqr, a, tau, _rand((5, 2), torch.float32, device, 5))


def test_ormqr_gradient(device, timed):
    a, tau = torch.geqrf(_rand((4, 3), torch.float64, device, 6))
    c = _rand((4, 2), torch.float64, device, 7).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: timed(torch.ormqr, a, tau, x), (c,))
