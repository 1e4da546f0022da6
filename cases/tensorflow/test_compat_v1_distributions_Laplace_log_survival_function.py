"""tf.compat.v1.distributions.Laplace.log_survival_function: log P(X > x) vs scipy.stats.laplace.logsf."""

import numpy as np
import pytest
import scipy.stats
import tensorflow as tf

Laplace = tf.compat.v1.distributions.Laplace
TOL = {tf.float32: 1e-5, tf.float64: 1e-12, tf.float16: 5e-3, tf.bfloat16: 3e-2}


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 5), (512, 512)], ids=str)
def test_log_survival_matches_scipy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = rng.uniform(-6, 6, shape).astype(dtype.as_numpy_dtype)
    loc, scale = np.float64(0.5), np.float64(1.5)
    dist = Laplace(loc=tf.constant(loc, dtype), scale=tf.constant(scale, dtype))
    out = timed(dist.log_survival_function, tf.constant(x))
    assert out.dtype == dtype and tuple(out.shape) == shape
    expected = scipy.stats.laplace.logsf(x.astype(np.float64), loc, scale)
    tol = TOL[dtype]
    np.testing.assert_allclose(out.numpy().astype(np.float64), expected, rtol=tol, atol=tol)


def test_log_survival_batched_params(device, timed):
    loc = np.array([[-1.0], [0.0], [3.0]])
    scale = np.array([0.5, 1.0, 2.0, 4.0])
    dist = Laplace(loc=tf.constant(loc), scale=tf.constant(scale))
    x = tf.constant([0.25, -2.0, 1.0, 10.0], tf.float64)
    out = timed(dist.log_survival_function, x)
    assert out.shape == (3, 4)
    np.testing.assert_allclose(out.numpy(), scipy.stats.laplace.logsf(x.numpy(), loc, scale), rtol=1e-12)


def test_log_survival_tails(device, timed):
    dist = Laplace(loc=tf.constant(0.0, tf.float64), scale=tf.constant(1.0, tf.float64))
    x = tf.constant([-800.0, -40.0, 0.0, 40.0, 800.0], tf.float64)
    out = timed(dist.log_survival_function, x).numpy()
    # exact: log(1 - exp(x)/2) for x < 0, log(1/2) - x for x >= 0; stays finite deep in the right tail
    np.testing.assert_allclose(
        out,
        [0.0, np.log1p(-0.5 * np.exp(-40.0)), np.log(0.5), np.log(0.5) - 40.0, np.log(0.5) - 800.0],
        rtol=1e-12,
        atol=1e-300,
    )


def test_log_survival_gradient(device, timed):
    dist = Laplace(loc=tf.constant(0.0, tf.float64), scale=tf.constant(2.0, tf.float64))
    x = tf.Variable([-1.0, 0.5, 3.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        out = timed(dist.log_survival_function, x)
    grad = tape.gradient(out, x).numpy()
    z = x.numpy() / 2.0
    left = -0.25 * np.exp(z) / (1 - 0.5 * np.exp(z))
    np.testing.assert_allclose(grad, np.where(z < 0, left, -0.5), rtol=1e-10)
