"""tf.image.adjust_brightness: adds delta to every pixel (via float for integer images), vs NumPy."""

import numpy as np
import pytest
import tensorflow as tf

# float64 (like integer types) is adjusted in float32 by the implementation, so float32 tolerance.
TOL = {tf.float32: 1e-6, tf.float64: 1e-6, tf.float16: 2e-3, tf.bfloat16: 2e-2}


def _image(shape, dtype):
    data = np.random.default_rng(0).uniform(0.0, 1.0, shape)
    return tf.cast(tf.constant(data), dtype)


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
@pytest.mark.parametrize("delta", [0.2, -0.35, 0.0])
def test_adjust_brightness_float(device, timed, dtype, delta):
    x = _image((2, 5, 7, 3), dtype)
    out = timed(tf.image.adjust_brightness, x, delta)
    assert out.dtype == dtype and out.shape == x.shape
    reference = tf.cast(x, tf.float64).numpy() + delta
    tol = TOL[dtype]
    np.testing.assert_allclose(tf.cast(out, tf.float64).numpy(), reference, rtol=tol, atol=tol)


@pytest.mark.parametrize("delta", [10 / 255, -60 / 255, 1.0])
def test_adjust_brightness_uint8_saturates(device, timed, delta):
    data = np.array([[[0, 10, 128], [200, 250, 255]]], np.uint8)
    out = timed(tf.image.adjust_brightness, tf.constant(data), delta)
    assert out.dtype == tf.uint8
    # uint8 goes through float in [0, 1], adds delta, and saturates back to [0, 255].
    expected = np.clip(np.round((data / 255.0 + delta) * 255.0), 0, 255).astype(np.uint8)
    np.testing.assert_allclose(out.numpy().astype(int), expected.astype(int), atol=1)


def test_adjust_brightness_large(device, timed):
    """A 512x512x3 float32 image (3 MB)."""
    x = _image((512, 512, 3), tf.float32)
    out = timed(tf.image.adjust_brightness, x, 0.1)
    np.testing.assert_allclose(out.numpy(), x.numpy() + np.float32(0.1), rtol=1e-6)


def test_adjust_brightness_empty(device, timed):
    out = timed(tf.image.adjust_brightness, tf.zeros((0, 4, 3), tf.float32), 0.5)
    assert tuple(out.shape) == (0, 4, 3)


def test_adjust_brightness_tensor_delta_gradient(device, timed):
    x = _image((4, 4, 3), tf.float64)
    delta = tf.constant(0.3, tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([x, delta])
        y = timed(tf.image.adjust_brightness, x, delta)
        loss = tf.reduce_sum(y)
    gx, gd = tape.gradient(loss, [x, delta])
    np.testing.assert_array_equal(gx.numpy(), np.ones((4, 4, 3)))
    assert gd.numpy() == 48.0
