"""tf.compat.v1.distributions.Bernoulli: pmf, moments, entropy vs NumPy; sample statistics; validation."""

import numpy as np
import pytest
import tensorflow as tf

Bernoulli = tf.compat.v1.distributions.Bernoulli
TOL = {tf.float32: 1e-6, tf.float64: 1e-12, tf.float16: 2e-3}


def _pmf(probs, x):
    dist = Bernoulli(probs=probs)
    return dist.log_prob(x), dist.prob(x)


def _summary(probs):
    dist = Bernoulli(probs=probs)
    return {
        "mean": dist.mean(),
        "variance": dist.variance(),
        "stddev": dist.stddev(),
        "entropy": dist.entropy(),
        "mode": dist.mode(),
        "logits": dist.logits,
    }


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
def test_bernoulli_log_prob(device, timed, dtype):
    p = np.array([[0.2, 0.4, 0.9], [0.3, 0.6, 0.05]])
    x = np.array([[1, 0, 1], [0, 1, 1]], np.int32)
    probs = tf.constant(p, dtype)
    log_prob, prob = timed(_pmf, probs, tf.constant(x))
    assert log_prob.dtype == dtype and tuple(log_prob.shape) == (2, 3)
    pr = tf.cast(probs, tf.float64).numpy()
    expected = x * np.log(pr) + (1 - x) * np.log1p(-pr)
    tol = TOL[dtype]
    np.testing.assert_allclose(tf.cast(log_prob, tf.float64).numpy(), expected, rtol=tol, atol=tol)
    np.testing.assert_allclose(tf.cast(prob, tf.float64).numpy(), np.exp(expected), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
def test_bernoulli_moments_and_entropy(device, timed, dtype):
    p = np.array([0.1, 0.5, 0.7, 0.99])
    out = timed(_summary, tf.constant(p, dtype))
    pr = tf.cast(tf.constant(p, dtype), tf.float64).numpy()
    tol = TOL[dtype]
    np.testing.assert_allclose(out["mean"].numpy(), pr, rtol=tol)
    np.testing.assert_allclose(out["variance"].numpy(), pr * (1 - pr), rtol=tol)
    np.testing.assert_allclose(out["stddev"].numpy(), np.sqrt(pr * (1 - pr)), rtol=tol)
    # Entropy goes through the logits (several roundings): allow a few tens of ulps.
    entropy = -pr * np.log(pr) - (1 - pr) * np.log1p(-pr)
    np.testing.assert_allclose(out["entropy"].numpy(), entropy, rtol=tol * 30)
    np.testing.assert_allclose(out["logits"].numpy(), np.log(pr) - np.log1p(-pr), rtol=tol * 10)
    assert out["mode"].dtype == tf.int32
    np.testing.assert_array_equal(out["mode"].numpy(), [0, 0, 1, 1])


def test_bernoulli_extreme_logits_are_stable(device, timed):
    logits = np.array([-42.0, 42.0, 0.0, -3.0], np.float32)
    fn = lambda lg, x: Bernoulli(logits=lg).log_prob(x)  # noqa: E731
    out = timed(fn, tf.constant(logits), tf.constant([1, 0, 1, 0])).numpy()
    # log sigmoid(l) for x=1, log sigmoid(-l) for x=0, computed stably.
    expected = -np.logaddexp(0.0, -np.array([-42.0, -42.0, 0.0, 3.0]))
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize(
    "probs_shape,x_shape",
    [((), (5,)), ((3,), (2, 1)), ((0,), (0,)), ((2, 0), (1,)), ((512, 512), (512, 512))],
    ids=str,
)
def test_bernoulli_broadcast_shapes(device, timed, probs_shape, x_shape):
    rng = np.random.default_rng(3)
    p = rng.uniform(0.01, 0.99, probs_shape).astype(np.float32)
    x = rng.integers(0, 2, x_shape).astype(np.int32)
    log_prob, _ = timed(_pmf, tf.constant(p), tf.constant(x))
    expected = x * np.log(p.astype(np.float64)) + (1 - x) * np.log1p(-p.astype(np.float64))
    assert tuple(log_prob.shape) == expected.shape
    np.testing.assert_allclose(log_prob.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("out_dtype", [tf.int32, tf.int64, tf.float32, tf.bool], ids=lambda d: d.name)
def test_bernoulli_sample_statistics(device, timed, out_dtype):
    p = np.array([0.0, 0.2, 0.6, 1.0], np.float32)
    fn = lambda probs: Bernoulli(probs=probs, dtype=out_dtype).sample(100_000, seed=7)  # noqa: E731
    samples = timed(fn, tf.constant(p))
    assert samples.dtype == out_dtype and tuple(samples.shape) == (100_000, 4)
    values = samples.numpy().astype(np.float64)
    assert set(np.unique(values)) <= {0.0, 1.0}
    # Standard error sqrt(p(1-p)/n) <= 0.0016: 0.01 is over six of them.
    np.testing.assert_allclose(values.mean(axis=0), p, atol=0.01)
    np.testing.assert_array_equal(values[:, 0], 0.0)
    np.testing.assert_array_equal(values[:, 3], 1.0)


@pytest.mark.parametrize("bad", [1.5, -0.25], ids=["above_one", "negative"])
def test_bernoulli_validate_args_refuses_bad_probs(device, timed, bad):
    fn = lambda probs: Bernoulli(probs=probs, validate_args=True).mean()  # noqa: E731
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(fn, tf.constant([0.5, bad]))


def test_bernoulli_validate_args_refuses_bad_events(device, timed):
    fn = lambda probs, x: Bernoulli(probs=probs, validate_args=True).prob(x)  # noqa: E731
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(fn, tf.constant([0.1, 0.2, 0.7]), tf.constant([2, 0, 1]))


def test_bernoulli_refuses_both_parameters(device):
    with pytest.raises(ValueError):
        Bernoulli(probs=[0.5], logits=[0.0])
