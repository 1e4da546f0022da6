"""tf.math.reduce_logsumexp: log(sum(exp(x))) against scipy.special.logsumexp, stability and gradient."""

import numpy as np
import pytest
import tensorflow as tf
from scipy.special import logsumexp, softmax

TOL = {tf.float32: 1e-5, tf.float64: 1e-12, tf.float16: 5e-3, tf.bfloat16: 3e-2}
DTYPES = list(TOL)


def _data(shape, dtype):
    rng = np.random.default_rng(0)
    data = rng.standard_normal(shape) * 3
    return tf.cast(tf.constant(data), dtype), data


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize(
    "shape,axis",
    [((7,), None), ((5, 9), 1), ((3, 4, 5), (0, 2)), ((512, 640), 0), ((0, 4), 1)],
    ids=["vector", "rows", "two-axes", "large", "empty"],
)
def test_reduce_logsumexp_matches_scipy(device, timed, dtype, shape, axis):
    x, _ = _data(shape, dtype)
    reference = tf.cast(x, tf.float64).numpy()
    out = timed(tf.math.reduce_logsumexp, x, axis=axis)
    assert out.dtype == dtype
    expected = logsumexp(reference, axis=axis)
    assert tuple(out.shape) == np.shape(expected)
    tol = TOL[dtype]
    np.testing.assert_allclose(tf.cast(out, tf.float64).numpy(), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
def test_reduce_logsumexp_keepdims(device, timed, dtype):
    x, data = _data((4, 6, 3), dtype)
    out = timed(tf.math.reduce_logsumexp, x, axis=-1, keepdims=True)
    assert tuple(out.shape) == (4, 6, 1)
    np.testing.assert_allclose(out.numpy(), logsumexp(data, axis=-1, keepdims=True), rtol=TOL[dtype])


def test_reduce_logsumexp_stable_for_large_and_infinite(device, timed):
    x = tf.constant([[1000.0, 1000.0, -1000.0], [-np.inf, -np.inf, -np.inf], [np.inf, 1.0, 2.0]], tf.float32)
    out = timed(tf.math.reduce_logsumexp, x, axis=1).numpy()
    np.testing.assert_allclose(out[0], 1000.0 + np.log(2.0), rtol=1e-6)
    assert out[1] == -np.inf
    assert out[2] == np.inf


def test_reduce_logsumexp_gradient_is_softmax(device, timed):
    x, data = _data((3, 8), tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = timed(tf.math.reduce_logsumexp, x, axis=1)
    grad = tape.gradient(y, x)
    np.testing.assert_allclose(grad.numpy(), softmax(data, axis=1), rtol=1e-12)
