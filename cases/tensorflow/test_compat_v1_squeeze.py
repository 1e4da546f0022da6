"""tf.compat.v1.squeeze: removal of size-1 dimensions (all, or the listed axes) against NumPy's squeeze."""

import numpy as np
import pytest
import tensorflow as tf

squeeze = tf.compat.v1.squeeze


@pytest.mark.parametrize(
    "dtype",
    [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.uint8, tf.bool, tf.complex64],
    ids=lambda d: d.name,
)
def test_squeeze_by_dtype(device, timed, dtype):
    data = (np.arange(6).reshape(1, 2, 1, 3, 1) % 4).astype(dtype.as_numpy_dtype)
    out = timed(squeeze, tf.constant(data, dtype))
    assert out.dtype == dtype and tuple(out.shape) == (2, 3)
    got = out.numpy().astype(data.dtype)  # small integers: exact in every dtype, bfloat16 included
    np.testing.assert_array_equal(got, np.squeeze(data))


@pytest.mark.parametrize(
    ("shape", "axis"),
    [
        ((1, 2, 1, 3, 1), [0]),
        ((1, 2, 1, 3, 1), [2, 4]),
        ((1, 2, 1, 3, 1), [0, 4, 2]),
        ((1, 2, 1, 3, 1), [-1]),
        ((1, 2, 1, 3, 1), [-3, -5]),
        ((1, 2, 1, 3, 1), []),  # an empty list squeezes every size-1 dimension
        ((1, 1, 1), None),
        ((2, 3), None),
        ((0, 1, 3), [1]),
        ((1, 0), None),
        ((1, 512, 1, 512), None),
    ],
    ids=str,
)
def test_squeeze_axes_and_shapes(device, timed, shape, axis):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = timed(squeeze, tf.constant(data), axis)
    expected = np.squeeze(data, axis=tuple(axis) if axis else None)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_squeeze_dims_alias(device, timed):
    # The deprecated squeeze_dims keyword is the same argument as axis.
    data = np.arange(6, dtype=np.float32).reshape(1, 6, 1)
    out = timed(squeeze, tf.constant(data), squeeze_dims=[2])
    assert tuple(out.shape) == (1, 6)
    np.testing.assert_array_equal(out.numpy(), data[:, :, 0])
    with pytest.raises(ValueError):
        squeeze(tf.constant(data), axis=[0], squeeze_dims=[2])  # both given: refused


def test_squeeze_keeps_special_values(device, timed):
    data = np.array([[[np.inf], [-np.inf], [np.nan], [-0.0]]], np.float64)
    out = timed(squeeze, tf.constant(data)).numpy()
    assert out.shape == (4,) and np.isnan(out[2]) and np.signbit(out[3])
    np.testing.assert_array_equal(out[:2], [np.inf, -np.inf])


def test_squeeze_gradient(device, timed):
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(1, 3, 1, 2))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = timed(squeeze, x, [0, 2])
        loss = tf.reduce_sum(y * tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    grad = tape.gradient(loss, x)
    assert tuple(grad.shape) == (1, 3, 1, 2)
    np.testing.assert_array_equal(grad.numpy().reshape(3, 2), [[1, 2], [3, 4], [5, 6]])


@pytest.mark.parametrize(
    "axis", [[1], [3], [-4]], ids=["not_size_one", "out_of_range", "negative_out_of_range"]
)
def test_squeeze_refusals(device, timed, axis):
    x = tf.constant(np.zeros((1, 2, 1), np.float32))
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(squeeze, x, axis)
