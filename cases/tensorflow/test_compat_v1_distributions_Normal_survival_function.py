"""Normal.survival_function (tf.compat.v1.distributions): P[X > x] = 1 - cdf against scipy.stats.norm.sf,
including the far tails where 1 - cdf would cancel."""

import numpy as np
import pytest
import tensorflow as tf
from scipy import stats

Normal = tf.compat.v1.distributions.Normal
# float16 is not among the dtypes its ndtr supports (float32, float64).
TOL = {tf.float32: 1e-5, tf.float64: 1e-12}


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(0,), (7,), (4, 9)], ids=str)
def test_survival_function_matches_scipy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = tf.cast(tf.constant(rng.uniform(-4, 4, shape)), dtype)
    dist = Normal(loc=tf.constant(0.5, dtype), scale=tf.constant(1.5, dtype))
    out = timed(dist.survival_function, x)
    assert out.dtype == dtype and out.shape == x.shape
    expected = stats.norm(0.5, 1.5).sf(tf.cast(x, tf.float64).numpy())
    tol = TOL[dtype]
    np.testing.assert_allclose(tf.cast(out, tf.float64).numpy(), expected, rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
def test_survival_function_upper_tail_keeps_relative_precision(device, timed, dtype):
    """Far in the upper tail sf is tiny but representable; 1 - cdf would round it to 0."""
    x = tf.constant([5.0, 8.0, 12.0], dtype)
    out = timed(Normal(loc=tf.constant(0.0, dtype), scale=tf.constant(1.0, dtype)).survival_function, x)
    expected = stats.norm.sf(x.numpy().astype(np.float64))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4 if dtype == tf.float32 else 1e-10)
    assert np.all(out.numpy() > 0)


def test_survival_function_batch_broadcast(device, timed):
    loc = tf.constant([[0.0], [2.0]], tf.float64)
    scale = tf.constant([1.0, 0.5, 3.0], tf.float64)
    x = tf.constant([1.0, 1.0, -2.0], tf.float64)
    out = timed(Normal(loc=loc, scale=scale).survival_function, x)
    assert tuple(out.shape) == (2, 3)
    np.testing.assert_allclose(out.numpy(), stats.norm(loc.numpy(), scale.numpy()).sf(x.numpy()), rtol=1e-12)


def test_survival_function_large(device, timed):
    """512x1024 float32 points (2 MB)."""
    x = np.random.default_rng(1).standard_normal((512, 1024)).astype(np.float32) * 3
    out = timed(Normal(loc=0.0, scale=1.0).survival_function, tf.constant(x))
    np.testing.assert_allclose(out.numpy(), stats.norm.sf(x.astype(np.float64)), rtol=1e-4, atol=1e-6)


def test_survival_function_edges_and_complement(device, timed):
    dist = Normal(loc=tf.constant(0.0, tf.float64), scale=tf.constant(2.0, tf.float64))
    x = tf.constant([-np.inf, 0.0, np.inf, -1.0, 3.0], tf.float64)
    out = timed(dist.survival_function, x).numpy()
    np.testing.assert_allclose(out[:3], [1.0, 0.5, 0.0], atol=1e-15)
    np.testing.assert_allclose(out[3:] + dist.cdf(x[3:]).numpy(), 1.0, rtol=1e-14)


def test_survival_function_gradient_is_minus_pdf(device, timed):
    dist = Normal(loc=tf.constant(1.0, tf.float64), scale=tf.constant(0.7, tf.float64))
    x = tf.constant([-0.5, 1.0, 2.3], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = timed(dist.survival_function, x)
    np.testing.assert_allclose(tape.gradient(out, x).numpy(), -dist.prob(x).numpy(), rtol=1e-12)
