"""tf.compat.v1.orthogonal_initializer: drawn matrices have orthonormal rows/columns times gain, by NumPy."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1
# Largest tolerated |Q^T Q - I| entry: a few units of rounding of an inner product of length n.
TOL = {tf.float32: 1e-5, tf.float64: 1e-12, tf.float16: 2e-2, tf.bfloat16: 1e-1}


def _flat(q: np.ndarray) -> np.ndarray:
    return q.reshape(int(np.prod(q.shape[:-1])), q.shape[-1])


def _gram_error(q: np.ndarray, gain: float = 1.0) -> float:
    """|Q^T Q - gain^2 I| (or Q Q^T for wide matrices) of the shape flattened to 2-D as documented."""
    flat = _flat(q).astype(np.float64)
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    return float(np.abs(gram - gain**2 * np.eye(gram.shape[0])).max(initial=0.0))


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16], ids=lambda d: d.name)
def test_orthogonal_dtypes(device, timed, dtype):
    init = v1.orthogonal_initializer(seed=1)
    out = timed(init, (16, 16), dtype)
    assert out.dtype == dtype and tuple(out.shape) == (16, 16)
    q = tf.cast(out, tf.float64).numpy()
    assert np.all(np.isfinite(q))
    assert _gram_error(q) <= TOL[dtype] * 16


@pytest.mark.parametrize(
    "shape",
    [(1, 1), (7, 3), (3, 7), (3, 3, 4, 8), (0, 3), (3, 0), (512, 512)],
    ids=str,
)
def test_orthogonal_shapes(device, timed, shape):
    """Tall: orthonormal columns; wide: orthonormal rows; >2-D: flattened to (prod(shape[:-1]), shape[-1]);
    512x512 float32 is 1 MB."""
    init = v1.orthogonal_initializer(seed=2)
    out = timed(init, shape)
    assert out.dtype == tf.float32 and tuple(out.shape) == shape
    q = out.numpy()
    assert _gram_error(q) <= 1e-5 * max(8, max(shape))
    if q.size:
        # Not a trivial orthogonal matrix: every column has mixed entries (a random rotation).
        flat = _flat(q)
        if min(flat.shape) > 1:
            assert np.count_nonzero(np.abs(flat) > 1e-3) > flat.size // 2


@pytest.mark.parametrize("gain", [0.5, 2.0, 0.0], ids=str)
def test_orthogonal_gain(device, timed, gain):
    init = v1.orthogonal_initializer(gain=gain, seed=3, dtype=tf.float64)
    q = timed(init, (9, 6)).numpy()
    assert _gram_error(q, gain) <= 1e-12


def test_orthogonal_preserves_norms(device, timed):
    """An orthogonal square matrix keeps every vector's Euclidean length."""
    q = timed(v1.orthogonal_initializer(seed=4, dtype=tf.float64), (32, 32)).numpy()
    vectors = np.random.default_rng(0).standard_normal((32, 10))
    lengths = np.linalg.norm(vectors, axis=0)
    np.testing.assert_allclose(np.linalg.norm(q @ vectors, axis=0), lengths, rtol=1e-12)
    assert abs(abs(np.linalg.det(q)) - 1.0) < 1e-10


def test_orthogonal_refuses_rank_below_two(device, timed):
    with pytest.raises(ValueError):
        timed(v1.orthogonal_initializer(seed=5), (5,))


@pytest.mark.parametrize("dtype", [tf.int32, tf.bool, tf.string], ids=lambda d: d.name)
def test_orthogonal_refuses_non_float_dtype(device, timed, dtype):
    with pytest.raises((ValueError, TypeError)):
        timed(v1.orthogonal_initializer(seed=6), (3, 3), dtype)
