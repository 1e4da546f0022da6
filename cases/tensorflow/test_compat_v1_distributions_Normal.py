"""tf.compat.v1.distributions.Normal: construction, batch shapes, moments and log_prob against scipy.stats."""

import numpy as np
import pytest
import tensorflow as tf
from scipy import stats

Normal = tf.compat.v1.distributions.Normal
TOL = {tf.float32: 1e-5, tf.float64: 1e-12, tf.float16: 5e-3}


def _log_prob_and_prob(loc, scale, x):
    dist = Normal(loc=loc, scale=scale)
    return dist.log_prob(x), dist.prob(x)


def _moments(loc, scale):
    dist = Normal(loc=loc, scale=scale)
    return {
        "mean": dist.mean(),
        "stddev": dist.stddev(),
        "variance": dist.variance(),
        "entropy": dist.entropy(),
        "cdf": dist.cdf(tf.constant(0.5, tf.float64)),
    }


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
def test_normal_construct_and_log_prob(device, timed, dtype):
    loc = tf.constant([0.0, 1.5, -2.0], dtype)
    scale = tf.constant([1.0, 0.5, 3.0], dtype)
    x = tf.constant([[0.3], [-1.0]], dtype)
    log_prob, prob = timed(_log_prob_and_prob, loc, scale, x)
    dist = Normal(loc=loc, scale=scale)  # the object itself, for its static properties
    assert dist.dtype == dtype
    assert dist.batch_shape == (3,) and dist.event_shape == ()
    assert log_prob.dtype == dtype and tuple(log_prob.shape) == (2, 3)
    expected = stats.norm(loc.numpy().astype(np.float64), scale.numpy().astype(np.float64)).logpdf(
        x.numpy().astype(np.float64)
    )
    tol = TOL[dtype]
    np.testing.assert_allclose(log_prob.numpy().astype(np.float64), expected, rtol=tol, atol=tol)
    np.testing.assert_allclose(prob.numpy().astype(np.float64), np.exp(expected), rtol=tol, atol=tol)


def test_normal_moments_and_entropy(device, timed):
    loc, scale = np.array([[1.0], [-3.0]]), np.array([0.5, 2.0, 4.0])
    out = timed(_moments, tf.constant(loc), tf.constant(scale))
    assert Normal(loc=tf.constant(loc), scale=tf.constant(scale)).batch_shape == (2, 3)
    np.testing.assert_allclose(out["mean"].numpy(), np.broadcast_to(loc, (2, 3)))
    np.testing.assert_allclose(out["stddev"].numpy(), np.broadcast_to(scale, (2, 3)))
    np.testing.assert_allclose(out["variance"].numpy(), np.broadcast_to(scale**2, (2, 3)))
    np.testing.assert_allclose(out["entropy"].numpy(), stats.norm(loc, scale).entropy(), rtol=1e-12)
    np.testing.assert_allclose(out["cdf"].numpy(), stats.norm(loc, scale).cdf(0.5))


def test_normal_sample_statistics(device, timed):
    samples = timed(
        lambda loc, scale: Normal(loc=loc, scale=scale).sample(200_000, seed=7),
        tf.constant([2.0, -1.0]),
        tf.constant([0.5, 3.0]),
    ).numpy()
    assert samples.shape == (200_000, 2) and samples.dtype == np.float32
    np.testing.assert_allclose(samples.mean(axis=0), [2.0, -1.0], atol=0.03)
    np.testing.assert_allclose(samples.std(axis=0), [0.5, 3.0], rtol=0.01)


def test_normal_large_batch(device, timed):
    """A batch of 512x1024 normals (2 MB of parameters each)."""
    rng = np.random.default_rng(0)
    loc = rng.standard_normal((512, 1024)).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, (512, 1024)).astype(np.float32)
    assert Normal(loc=tf.constant(loc), scale=tf.constant(scale)).batch_shape == (512, 1024)
    out = timed(
        lambda loc, scale: Normal(loc=loc, scale=scale).log_prob(0.0), tf.constant(loc), tf.constant(scale)
    )
    np.testing.assert_allclose(out.numpy(), stats.norm(loc, scale).logpdf(0.0), rtol=1e-5)


def test_normal_validate_args_rejects_bad_scale(device, timed):
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(lambda scale: Normal(loc=0.0, scale=scale, validate_args=True).mean(), tf.constant([1.0, -1.0]))


def test_normal_gradient_of_log_prob(device, timed):
    loc, scale = tf.constant(0.5, tf.float64), tf.constant(2.0, tf.float64)
    x = tf.constant([1.0, -1.0, 3.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([loc, scale])
        total = timed(
            lambda loc, scale, x: tf.reduce_sum(Normal(loc=loc, scale=scale).log_prob(x)), loc, scale, x
        )
    g_loc, g_scale = tape.gradient(total, [loc, scale])
    z = (x.numpy() - 0.5) / 2.0
    np.testing.assert_allclose(g_loc.numpy(), np.sum(z / 2.0), rtol=1e-12)
    np.testing.assert_allclose(g_scale.numpy(), np.sum((z**2 - 1.0) / 2.0), rtol=1e-12)
