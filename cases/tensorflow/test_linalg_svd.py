"""tf.linalg.svd: singular values against NumPy, reconstruction and orthonormal factors."""

import numpy as np
import pytest
import tensorflow as tf

TOLERANCE = {tf.float32: 1e-4, tf.float64: 1e-10, tf.complex64: 1e-4, tf.float16: 5e-2}


def _matrix(shape, dtype):
    rng = np.random.default_rng(0)
    data = rng.standard_normal(shape)
    if dtype.is_complex:
        data = data + 1j * rng.standard_normal(shape)
    return tf.constant(data.astype(dtype.as_numpy_dtype))


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.complex64], ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(4, 4), (7, 3), (3, 7), (2, 5, 4), (96, 80)], ids=str)
def test_svd_reconstructs(device, timed, dtype, shape):
    a = _matrix(shape, dtype)
    s, u, v = timed(tf.linalg.svd, a, full_matrices=False)
    k = min(shape[-2:])
    assert (
        s.shape == (*shape[:-2], k) and u.shape == (*shape[:-1], k) and v.shape == (*shape[:-2], shape[-1], k)
    )
    rebuilt = tf.matmul(u * tf.cast(s[..., None, :], u.dtype), v, adjoint_b=True)
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(rebuilt.numpy(), a.numpy(), rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a.numpy(), compute_uv=False), rtol=tol, atol=tol)
    eye = np.broadcast_to(np.eye(k), (*shape[:-2], k, k))
    np.testing.assert_allclose(tf.matmul(u, u, adjoint_a=True).numpy(), eye, atol=tol * 10)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
def test_svd_values_only_full_matrices(device, timed, dtype):
    a = _matrix((6, 4), dtype)
    s = timed(tf.linalg.svd, a, compute_uv=False)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a.numpy(), compute_uv=False), rtol=TOLERANCE[dtype])
    s_full, u, v = timed(tf.linalg.svd, a, full_matrices=True)
    assert u.shape == (6, 6) and v.shape == (4, 4)
    np.testing.assert_allclose(s_full.numpy(), s.numpy(), rtol=TOLERANCE[dtype])


def test_svd_empty(device, timed):
    s, u, v = timed(tf.linalg.svd, tf.zeros((0, 3), tf.float32))
    assert s.shape == (0,) and u.shape == (0, 0) and v.shape == (3, 0)


def test_svd_half_precision(device, timed):
    """float16 SVD: devices differ here (a missing kernel is a type failure, not a crash)."""
    a = _matrix((4, 4), tf.float16)
    s = timed(tf.linalg.svd, a, compute_uv=False)
    assert s.dtype == tf.float16
    expected = np.linalg.svd(a.numpy().astype(np.float64), compute_uv=False)
    np.testing.assert_allclose(s.numpy().astype(np.float64), expected, rtol=5e-2)
