"""tf.keras.backend.random_normal: shape/dtype, and sample moments and tails against the normal law."""

import numpy as np
import pytest
import tensorflow as tf

random_normal = tf.keras.backend.random_normal
N = 1 << 16  # samples for the statistics: standard errors of about 0.4 %


def _f64(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy()


def _check_normal(sample: np.ndarray, mean: float, stddev: float, rounding: float) -> None:
    """Mean, standard deviation and the mass within one sigma, each within 6 standard errors (plus
    the dtype's rounding): a wrong law, scale or shift fails; a correct one essentially never does."""
    n = sample.size
    assert np.all(np.isfinite(sample))
    assert abs(sample.mean() - mean) <= 6 * stddev / np.sqrt(n) + rounding * (abs(mean) + stddev)
    assert abs(sample.std() - stddev) <= 6 * stddev / np.sqrt(2 * n) + rounding * (abs(mean) + stddev)
    inside = np.mean(np.abs(sample - mean) <= stddev)
    p = 0.682689492  # P(|Z| <= 1)
    assert abs(inside - p) <= 6 * np.sqrt(p * (1 - p) / n) + 4 * rounding


@pytest.mark.parametrize(
    "dtype,rounding",
    [(tf.float32, 1e-7), (tf.float64, 1e-15), (tf.float16, 1e-3), (tf.bfloat16, 8e-3)],
    ids=lambda v: getattr(v, "name", ""),
)
def test_random_normal_dtypes(device, timed, dtype, rounding):
    out = timed(random_normal, (N,), 0.0, 1.0, dtype, 1234)
    assert out.dtype == dtype and tuple(out.shape) == (N,)
    _check_normal(_f64(out), 0.0, 1.0, rounding)


def test_random_normal_default_dtype_is_floatx(device, timed):
    out = timed(random_normal, (4, 3), seed=7)
    assert out.dtype == tf.as_dtype(tf.keras.backend.floatx()) == tf.float32


@pytest.mark.parametrize("shape", [(), (0,), (0, 4), (3, 5, 7), (512, 512)], ids=str)
def test_random_normal_shapes(device, timed, shape):
    """Any shape, empty included; 512x512 float32 is 1 MB and gets the statistical check."""
    out = timed(random_normal, shape, seed=11)
    assert tuple(out.shape) == shape
    values = out.numpy()
    assert np.all(np.isfinite(values))
    if values.size >= N:
        _check_normal(values.ravel().astype(np.float64), 0.0, 1.0, 1e-7)


@pytest.mark.parametrize("mean,stddev", [(3.0, 0.5), (-100.0, 10.0), (0.0, 1e-3)], ids=str)
def test_random_normal_mean_and_stddev(device, timed, mean, stddev):
    out = timed(random_normal, (N,), mean, stddev, "float64", 21)
    _check_normal(out.numpy(), mean, stddev, 1e-15)


def test_random_normal_zero_stddev_is_the_mean(device, timed):
    out = timed(random_normal, (5, 5), -2.5, 0.0, "float32", 3)
    np.testing.assert_array_equal(out.numpy(), np.full((5, 5), -2.5, np.float32))


def test_random_normal_samples_are_not_constant(device, timed):
    """Independent draws: no repeated values among 4096 float64 samples."""
    out = timed(random_normal, (4096,), 0.0, 1.0, "float64", 5).numpy()
    assert np.unique(out).size == out.size


@pytest.mark.parametrize("dtype", ["int32", "bool"])
def test_random_normal_refuses_non_float_dtype(device, timed, dtype):
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
        timed(random_normal, (3,), 0.0, 1.0, dtype, 1)


def test_random_normal_refuses_negative_extent(device, timed):
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(random_normal, (2, -3), seed=1)
