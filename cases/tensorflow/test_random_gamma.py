"""tf.random.gamma: Gamma(alpha, beta) samples: shape, dtype, moments, KS test, seeding, reparam gradient."""

import numpy as np
import pytest
import scipy.special
import scipy.stats
import tensorflow as tf


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16], ids=lambda d: d.name)
@pytest.mark.parametrize("alpha,beta", [(0.5, 1.0), (2.0, 3.0), (9.0, 0.5)], ids=str)
def test_gamma_distribution(device, timed, dtype, alpha, beta):
    tf.random.set_seed(1234)
    out = timed(tf.random.gamma, [20000], tf.constant(alpha, dtype), tf.constant(beta, dtype), dtype=dtype)
    assert out.dtype == dtype and out.shape == (20000,)
    samples = out.numpy().astype(np.float64)
    assert (samples >= 0).all()
    ks = scipy.stats.kstest(samples, scipy.stats.gamma(alpha, scale=1.0 / beta).cdf)
    assert ks.pvalue > 1e-4 if dtype != tf.float16 else ks.statistic < 0.02
    np.testing.assert_allclose(samples.mean(), alpha / beta, rtol=0.05)


@pytest.mark.parametrize("shape", [[0], [3, 5], [300, 1000]], ids=str)
def test_gamma_output_shape_broadcasts_params(device, timed, shape):
    alpha = tf.constant([[1.0], [4.0]], tf.float32)
    beta = tf.constant([1.0, 2.0, 8.0], tf.float32)
    out = timed(tf.random.gamma, shape, alpha, beta, seed=7)
    assert tuple(out.shape) == (*shape, 2, 3)
    if np.prod(shape) > 1000:
        means = out.numpy().reshape(-1, 2, 3).mean(axis=0)
        np.testing.assert_allclose(means, alpha.numpy() / beta.numpy(), rtol=0.02)


def test_gamma_seed_reproducible(device, timed):
    tf.random.set_seed(5)
    a = timed.once(tf.random.gamma, [64], tf.constant(2.0), seed=11)
    tf.random.set_seed(5)
    b = timed.once(tf.random.gamma, [64], tf.constant(2.0), seed=11)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_gamma_reparameterization_gradient(device, timed):
    """d sample / d alpha = -(dF/dalpha) / (dF/dx) with F the Gamma CDF (implicit differentiation)."""
    alpha = tf.Variable([0.7, 2.0, 5.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        x = timed.once(tf.random.gamma, [], alpha, dtype=tf.float64, seed=3)
    grad = tape.gradient(x, alpha).numpy()
    a, xv, h = alpha.numpy(), x.numpy(), 1e-6
    dfda = (scipy.special.gammainc(a + h, xv) - scipy.special.gammainc(a - h, xv)) / (2 * h)
    dfdx = scipy.stats.gamma(a).pdf(xv)
    np.testing.assert_allclose(grad, -dfda / dfdx, rtol=1e-4)
