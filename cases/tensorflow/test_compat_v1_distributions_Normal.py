"""tf.compat.v1.distributions.Normal: construction, batch shapes, moments and log_prob against scipy.stats."""

import numpy as np
import pytest
import tensorflow as tf
from scipy import stats

Normal = tf.compat.v1.distributions.Normal
TOL = {tf.float32: 1e-5, tf.float64: 1e-12, tf.float16: 5e-3}


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
def test_normal_construct_and_log_prob(device, timed, dtype):
    loc = tf.constant([0.0, 1.5, -2.0], dtype)
    scale = tf.constant([1.0, 0.5, 3.0], dtype)
    with timed.region() as region:
        region.result = dist = Normal(loc=loc, scale=scale)
    assert dist.dtype == dtype
    assert dist.batch_shape == (3,) and dist.event_shape == ()
    x = tf.constant([[0.3], [-1.0]], dtype)
    expected = stats.norm(loc.numpy().astype(np.float64), scale.numpy().astype(np.float64)).logpdf(
        x.numpy().astype(np.float64)
    )
    tol = TOL[dtype]
    np.testing.assert_allclose(dist.log_prob(x).numpy().astype(np.float64), expected, rtol=tol, atol=tol)
    np.testing.assert_allclose(dist.prob(x).numpy().astype(np.float64), np.exp(expected), rtol=tol, atol=tol)


def test_normal_moments_and_entropy(device, timed):
    loc, scale = np.array([[1.0], [-3.0]]), np.array([0.5, 2.0, 4.0])
    with timed.region() as region:
        region.result = dist = Normal(loc=tf.constant(loc), scale=tf.constant(scale))
    assert dist.batch_shape == (2, 3)
    np.testing.assert_allclose(dist.mean().numpy(), np.broadcast_to(loc, (2, 3)))
    np.testing.assert_allclose(dist.stddev().numpy(), np.broadcast_to(scale, (2, 3)))
    np.testing.assert_allclose(dist.variance().numpy(), np.broadcast_to(scale**2, (2, 3)))
    np.testing.assert_allclose(dist.entropy().numpy(), stats.norm(loc, scale).entropy(), rtol=1e-12)
    np.testing.assert_allclose(
        dist.cdf(tf.constant(0.5, tf.float64)).numpy(), stats.norm(loc, scale).cdf(0.5)
    )


def test_normal_sample_statistics(device, timed):
    with timed.region() as region:
        region.result = dist = Normal(loc=tf.constant([2.0, -1.0]), scale=tf.constant([0.5, 3.0]))
    samples = dist.sample(200_000, seed=7).numpy()
    assert samples.shape == (200_000, 2) and samples.dtype == np.float32
    np.testing.assert_allclose(samples.mean(axis=0), [2.0, -1.0], atol=0.03)
    np.testing.assert_allclose(samples.std(axis=0), [0.5, 3.0], rtol=0.01)


def test_normal_large_batch(device, timed):
    """A batch of 512x1024 normals (2 MB of parameters each)."""
    rng = np.random.default_rng(0)
    loc = rng.standard_normal((512, 1024)).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, (512, 1024)).astype(np.float32)
    with timed.region() as region:
        region.result = dist = Normal(loc=tf.constant(loc), scale=tf.constant(scale))
    assert dist.batch_shape == (512, 1024)
    np.testing.assert_allclose(dist.log_prob(0.0).numpy(), stats.norm(loc, scale).logpdf(0.0), rtol=1e-5)


def test_normal_validate_args_rejects_bad_scale(device, timed):
    with pytest.raises(tf.errors.InvalidArgumentError), timed.region():
        Normal(loc=0.0, scale=tf.constant([1.0, -1.0]), validate_args=True).mean()


def test_normal_gradient_of_log_prob(device, timed):
    loc, scale = tf.constant(0.5, tf.float64), tf.constant(2.0, tf.float64)
    x = tf.constant([1.0, -1.0, 3.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([loc, scale])
        with timed.region() as region:
            region.result = dist = Normal(loc=loc, scale=scale)
        total = tf.reduce_sum(dist.log_prob(x))
    g_loc, g_scale = tape.gradient(total, [loc, scale])
    z = (x.numpy() - 0.5) / 2.0
    np.testing.assert_allclose(g_loc.numpy(), np.sum(z / 2.0), rtol=1e-12)
    np.testing.assert_allclose(g_scale.numpy(), np.sum((z**2 - 1.0) / 2.0), rtol=1e-12)
