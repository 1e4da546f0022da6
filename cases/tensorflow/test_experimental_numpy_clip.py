"""tf.experimental.numpy.clip: elementwise clipping against numpy.clip, broadcasting bounds, dtypes."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow.experimental.numpy as tnp

DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64]


def _data(shape, dtype):
    data = np.random.default_rng(0).standard_normal(shape) * 10
    return data.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(0,), (7,), (5, 13), (512, 1024)], ids=str)
def test_clip_matches_numpy(device, timed, dtype, shape):
    data = _data(shape, dtype)
    out = timed(tnp.clip, tf.constant(data), -3, 4)
    expected = np.clip(data, -3, 4)
    assert out.shape == expected.shape
    assert np.dtype(out.dtype.as_numpy_dtype) == expected.dtype
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_clip_bfloat16(device, timed):
    x = tf.cast(tf.constant(_data((6, 7), np.float32)), tf.bfloat16)
    low, high = tf.constant(-2.5, tf.bfloat16), tf.constant(2.5, tf.bfloat16)
    out = timed(tnp.clip, x, low, high)
    assert out.dtype == tf.bfloat16
    reference = tf.cast(x, tf.float32).numpy()
    np.testing.assert_array_equal(tf.cast(out, tf.float32).numpy(), np.clip(reference, -2.5, 2.5))


def test_clip_broadcast_array_bounds(device, timed):
    data = _data((4, 5), np.float64)
    low = np.linspace(-5, 0, 5)
    high = np.array([[1.0], [2.0], [3.0], [8.0]])
    out = timed(tnp.clip, tf.constant(data), tf.constant(low), tf.constant(high))
    np.testing.assert_array_equal(np.asarray(out), np.clip(data, low, high))


@pytest.mark.parametrize("bounds", [(None, 1.0), (-1.0, None)], ids=["upper-only", "lower-only"])
def test_clip_one_sided(device, timed, bounds):
    data = _data((3, 9), np.float32)
    out = timed(tnp.clip, tf.constant(data), *bounds)
    np.testing.assert_array_equal(np.asarray(out), np.clip(data, *bounds))


def test_clip_edge_values(device, timed):
    data = np.array([np.inf, -np.inf, 0.0, -0.0, 1e30, np.nan], np.float32)
    out = np.asarray(timed(tnp.clip, tf.constant(data), -1.0, 1.0))
    np.testing.assert_array_equal(out[:5], [1.0, -1.0, 0.0, 0.0, 1.0])
    assert np.isnan(out[5])


def test_clip_gradient(device, timed):
    x = tf.constant([-3.0, -0.5, 0.25, 2.0, 5.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = timed(tnp.clip, x, -1.0, 1.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 1.0, 1.0, 0.0, 0.0])
