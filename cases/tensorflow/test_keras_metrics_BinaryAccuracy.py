"""tf.keras.metrics.BinaryAccuracy: weighted share of (y_pred > threshold) == y_true, against NumPy."""

import numpy as np
import pytest
import tensorflow as tf


def _reference(y_true: np.ndarray, y_pred: np.ndarray, threshold: float = 0.5, weight=None) -> float:
    match = ((y_pred.astype(np.float64) > threshold) == (y_true > 0.5)).astype(np.float64)
    w = np.ones(y_true.shape[0]) if weight is None else np.asarray(weight, np.float64)
    w = np.broadcast_to(w.reshape(w.shape + (1,) * (match.ndim - w.ndim)), match.shape)
    return float((match * w).sum() / w.sum()) if w.sum() else 0.0


def _data(shape: tuple, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    return (rng.random(shape) < 0.5).astype(np.float32), rng.random(shape).astype(np.float32)


def _evaluate(metric: tf.keras.metrics.Metric):
    """A fresh evaluation per call: the timed function resets, updates and reads the metric."""

    def run(y_true, y_pred, *weight):
        metric.reset_state()
        metric.update_state(y_true, y_pred, sample_weight=weight[0] if weight else None)
        return metric.result()

    return run


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_binary_accuracy_dtypes(device, timed, dtype):
    y_true, y_pred = _data((8, 5), 0)
    metric = tf.keras.metrics.BinaryAccuracy(dtype=dtype)
    yp = tf.cast(tf.constant(y_pred), dtype)
    out = timed(_evaluate(metric), tf.cast(tf.constant(y_true), dtype), yp)
    assert out.dtype == tf.as_dtype(dtype) and tuple(out.shape) == ()
    # The reference thresholds the rounded predictions, as the metric sees them.
    expected = _reference(y_true, tf.cast(yp, tf.float64).numpy())
    np.testing.assert_allclose(
        float(tf.cast(out, tf.float64)), expected, rtol=1e-2 if "16" in dtype else 1e-6
    )


@pytest.mark.parametrize("threshold", [0.5, 0.0, 0.9, 0.25])
def test_binary_accuracy_threshold(device, timed, threshold):
    # Predictions exactly at the threshold count as negative (strictly greater).
    y_pred = np.array([[threshold, threshold + 0.05, threshold - 0.05, 1.0, -1.0]], np.float32)
    y_true = np.array([[0.0, 1.0, 0.0, 1.0, 0.0]], np.float32)
    metric = tf.keras.metrics.BinaryAccuracy(threshold=threshold)
    out = timed(_evaluate(metric), tf.constant(y_true), tf.constant(y_pred))
    np.testing.assert_allclose(out.numpy(), _reference(y_true, y_pred, threshold), rtol=1e-6)
    assert out.numpy() == 1.0


@pytest.mark.parametrize(
    "weight",
    [[1.0, 3.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.5]],
    ids=["mixed", "zeros", "uniform"],
)
def test_binary_accuracy_sample_weight(device, timed, weight):
    y_true, y_pred = _data((4, 3), 1)
    metric = tf.keras.metrics.BinaryAccuracy()
    out = timed(_evaluate(metric), tf.constant(y_true), tf.constant(y_pred), tf.constant(weight))
    # All-zero weights give 0 (the metric divides with divide_no_nan).
    np.testing.assert_allclose(out.numpy(), _reference(y_true, y_pred, 0.5, weight), rtol=1e-6)


@pytest.mark.parametrize("shape", [(0, 3), (1,), (7, 13), (512, 512)], ids=["empty", "one", "odd", "1MB"])
def test_binary_accuracy_shapes(device, timed, shape):
    """(512, 512) float32 predictions are 1 MB."""
    y_true, y_pred = _data(shape, 2)
    metric = tf.keras.metrics.BinaryAccuracy()
    out = timed(_evaluate(metric), tf.constant(y_true), tf.constant(y_pred))
    np.testing.assert_allclose(out.numpy(), _reference(y_true, y_pred) if y_true.size else 0.0, rtol=1e-5)


def test_binary_accuracy_accumulates(device, timed):
    # Two updates accumulate: the result is the accuracy over both batches together.
    (t1, p1), (t2, p2) = _data((5, 2), 3), _data((3, 2), 4)
    metric = tf.keras.metrics.BinaryAccuracy()
    metric.update_state(t1, p1)
    out = timed.once(
        lambda t, p: (metric.update_state(t, p), metric.result())[1], tf.constant(t2), tf.constant(p2)
    )
    expected = _reference(np.concatenate([t1, t2]), np.concatenate([p1, p2]))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_binary_accuracy_nan_and_inf(device, timed):
    # NaN > threshold is False: a NaN prediction counts as negative; +inf as positive.
    y_pred = np.array([np.nan, np.nan, np.inf, -np.inf], np.float32)
    y_true = np.array([0.0, 1.0, 1.0, 0.0], np.float32)
    metric = tf.keras.metrics.BinaryAccuracy()
    out = timed(_evaluate(metric), tf.constant(y_true), tf.constant(y_pred))
    np.testing.assert_allclose(out.numpy(), 0.75)


def test_binary_accuracy_rank_mismatch_squeezed(device, timed):
    # y_true (N, 1) against y_pred (N,) is squeezed to the same rank, not broadcast to (N, N).
    y_true, y_pred = _data((6,), 5)
    metric = tf.keras.metrics.BinaryAccuracy()
    out = timed(_evaluate(metric), tf.constant(y_true[:, None]), tf.constant(y_pred))
    np.testing.assert_allclose(out.numpy(), _reference(y_true, y_pred), rtol=1e-6)


def test_binary_accuracy_refuses_mismatched_shapes(device, timed):
    metric = tf.keras.metrics.BinaryAccuracy()
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(_evaluate(metric), tf.zeros([4, 3]), tf.zeros([5, 2]))
