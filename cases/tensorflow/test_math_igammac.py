"""tf.math.igammac: regularized upper incomplete gamma Q(a, x) against scipy.special.gammaincc."""

import numpy as np
import pytest
import scipy.special
import tensorflow as tf

TOL = {tf.float32: 1e-4, tf.float64: 1e-10}


def _inputs(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.1, 10.0, shape)
    x = rng.uniform(0.0, 15.0, shape)
    return a.astype(dtype.as_numpy_dtype), x.astype(dtype.as_numpy_dtype)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 5), (512, 512)], ids=str)
def test_igammac_matches_scipy(device, timed, dtype, shape):
    a, x = _inputs(shape, dtype)
    out = timed(tf.math.igammac, tf.constant(a), tf.constant(x))
    assert out.dtype == dtype and tuple(out.shape) == shape
    expected = scipy.special.gammaincc(a.astype(np.float64), x.astype(np.float64))
    np.testing.assert_allclose(out.numpy(), expected, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
def test_igammac_edge_values(device, timed, dtype):
    a = tf.constant([1.0, 2.0, 0.5, 3.0, -1.0, 1.0], dtype)
    x = tf.constant([0.0, 0.0, np.inf, 1e-30, 1.0, -1.0], dtype)
    out = timed(tf.math.igammac, a, x).numpy()
    np.testing.assert_allclose(out[:3], [1.0, 1.0, 0.0])
    np.testing.assert_allclose(out[3], 1.0, rtol=1e-6)
    assert np.isnan(out[4]) and np.isnan(out[5])  # a <= 0 or x < 0 are outside the domain


def test_igammac_broadcasts_and_complements_igamma(device, timed):
    a = tf.constant([[0.5], [1.0], [4.0]], tf.float64)
    x = tf.constant([0.1, 1.0, 2.5, 9.0], tf.float64)
    q = timed(tf.math.igammac, a, x)
    assert q.shape == (3, 4)
    np.testing.assert_allclose(q.numpy() + tf.math.igamma(a, x).numpy(), np.ones((3, 4)), atol=1e-12)
    np.testing.assert_allclose(q.numpy()[1], np.exp(-x.numpy()), rtol=1e-12)  # Q(1, x) = exp(-x)


def test_igammac_gradient_wrt_x(device, timed):
    a = tf.constant([0.5, 1.5, 3.0, 7.0], tf.float64)
    x = tf.Variable([0.3, 1.2, 2.0, 6.5], dtype=tf.float64)
    with tf.GradientTape() as tape:
        q = timed(tf.math.igammac, a, x)
    grad = tape.gradient(q, x).numpy()
    av, xv = a.numpy(), x.numpy()
    expected = -np.exp((av - 1) * np.log(xv) - xv - scipy.special.gammaln(av))
    np.testing.assert_allclose(grad, expected, rtol=1e-8)
