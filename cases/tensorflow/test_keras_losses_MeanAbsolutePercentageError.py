"""tf.keras.losses.MeanAbsolutePercentageError: values, reductions and weights against a NumPy formula."""

import numpy as np
import pytest
import tensorflow as tf

MAPE = tf.keras.losses.MeanAbsolutePercentageError
EPS = 1e-7  # keras.config.epsilon(), the floor on |y_true|


def _per_sample(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    y_true, y_pred = y_true.astype(np.float64), y_pred.astype(np.float64)
    return 100.0 * np.mean(np.abs(y_true - y_pred) / np.maximum(np.abs(y_true), EPS), axis=-1)


TOL = {tf.float32: 1e-6, tf.float64: 1e-12, tf.float16: 2e-3, tf.bfloat16: 2e-2}


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
def test_mape_dtypes(device, timed, dtype):
    rng = np.random.default_rng(0)
    y_true = rng.uniform(0.5, 4.0, (6, 5)) * rng.choice([-1.0, 1.0], (6, 5))
    y_pred = y_true + rng.standard_normal((6, 5))
    loss = MAPE(dtype=dtype.name)
    yt, yp = tf.constant(y_true, dtype), tf.constant(y_pred, dtype)
    out = timed(loss, yt, yp)
    assert out.dtype == dtype and tuple(out.shape) == ()
    # Reference on the values as rounded to the dtype.
    expected = np.mean(_per_sample(tf.cast(yt, tf.float64).numpy(), tf.cast(yp, tf.float64).numpy()))
    np.testing.assert_allclose(float(tf.cast(out, tf.float64)), expected, rtol=TOL[dtype])


@pytest.mark.parametrize(
    "reduction", ["sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None]
)
def test_mape_reductions_with_weights(device, timed, reduction):
    rng = np.random.default_rng(1)
    y_true = rng.uniform(1.0, 3.0, (4, 3))
    y_pred = rng.uniform(1.0, 3.0, (4, 3))
    weights = np.array([1.0, 0.0, 2.5, 0.5])
    loss = MAPE(reduction=reduction, dtype="float64")
    out = timed(loss, tf.constant(y_true), tf.constant(y_pred), tf.constant(weights)).numpy()
    weighted = _per_sample(y_true, y_pred) * weights
    expected = {
        "sum_over_batch_size": weighted.sum() / 4,
        "sum": weighted.sum(),
        "mean": weighted.sum() / 4,
        "mean_with_sample_weight": weighted.sum() / weights.sum(),
        "none": weighted,
        None: weighted,
    }[reduction]
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (7,), (2, 3, 5), (256, 1024)], ids=str)
def test_mape_shapes(device, timed, shape):
    rng = np.random.default_rng(2)
    y_true = rng.uniform(0.5, 2.0, shape).astype(np.float32)
    y_pred = rng.uniform(0.5, 2.0, shape).astype(np.float32)
    out = timed(MAPE(reduction="none"), tf.constant(y_true), tf.constant(y_pred))
    expected = _per_sample(y_true, y_pred)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5)


def test_mape_zero_and_special_targets(device, timed):
    # |y_true| is floored at epsilon: a zero target gives a huge but finite loss, -0.0 like +0.0.
    y_true = np.array([[0.0, 1.0], [-0.0, 2.0], [4.0, 4.0], [np.inf, 1.0], [np.nan, 1.0]], np.float64)
    y_pred = np.array([[1.0, 1.0], [1e-7, 2.0], [4.0, 4.0], [1.0, 1.0], [1.0, 1.0]], np.float64)
    out = timed(MAPE(reduction="none", dtype="float64"), tf.constant(y_true), tf.constant(y_pred)).numpy()
    np.testing.assert_allclose(out[:3], [100.0 / EPS / 2, 50.0, 0.0], rtol=1e-12)
    assert np.isnan(out[3]) and np.isnan(out[4])  # inf/inf and NaN propagate


def test_mape_gradient(device, timed):
    y_true = tf.constant([[2.0, -4.0]], tf.float64)
    y_pred = tf.constant([[3.0, -3.0]], tf.float64)
    loss = MAPE(dtype="float64")
    with tf.GradientTape() as tape:
        tape.watch(y_pred)
        value = timed(loss, y_true, y_pred)
    # d/dp 100/2 * |t - p| / |t| = 50 * sign(p - t) / |t|
    np.testing.assert_allclose(tape.gradient(value, y_pred).numpy(), [[25.0, 12.5]], rtol=1e-12)


def test_mape_refuses_bad_reduction(device):
    with pytest.raises(ValueError):
        MAPE(reduction="median")
