"""tf.reduce_sum: sums over axes (keepdims, empty, NaN/inf, integer, complex) against NumPy."""

import numpy as np
import pytest
import tensorflow as tf

# (dtype, relative tolerance of the sum of 1000 standard normals against a float64 sum)
FLOAT_DTYPES = [(tf.float32, 1e-5), (tf.float64, 1e-12), (tf.float16, 1e-2), (tf.bfloat16, 4e-2)]


def _f64(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy()


@pytest.mark.parametrize("dtype,rtol", FLOAT_DTYPES, ids=lambda v: getattr(v, "name", ""))
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)], ids=str)
def test_reduce_sum_float_axes(device, timed, dtype, rtol, axis):
    data = np.random.default_rng(0).standard_normal((40, 25)).astype(np.float32)
    x = tf.constant(data, dtype)
    exact = _f64(x).sum(axis=axis)  # the rounded inputs, summed in float64
    out = timed(tf.reduce_sum, x, axis=axis)
    assert out.dtype == dtype and out.shape == np.shape(exact)
    # The error of a sum is relative to the sum of magnitudes, not to the (possibly tiny) sum.
    scale = np.abs(_f64(x)).sum(axis=axis)
    assert np.all(np.abs(_f64(out) - exact) <= rtol * scale + 1e-30)


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64, tf.uint8, tf.complex64], ids=lambda d: d.name)
def test_reduce_sum_exact_dtypes(device, timed, dtype):
    data = np.arange(24).reshape(2, 3, 4) % 7
    x = tf.constant(data.astype(dtype.as_numpy_dtype) * (1 + 1j if dtype.is_complex else 1))
    out = timed(tf.reduce_sum, x, axis=1)
    expected = (data * (1 + 1j if dtype.is_complex else 1)).sum(axis=1).astype(dtype.as_numpy_dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
def test_reduce_sum_keepdims(device, timed, axis):
    data = np.arange(15, dtype=np.float32).reshape(3, 5)
    out = timed(tf.reduce_sum, tf.constant(data), axis=axis, keepdims=True)
    np.testing.assert_array_equal(out.numpy(), data.sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("shape,axis", [((0,), None), ((0, 3), 0), ((0, 3), 1), ((4, 0), None)], ids=str)
def test_reduce_sum_empty(device, timed, shape, axis):
    """The sum over nothing is 0 (the additive identity), shaped as NumPy's."""
    data = np.zeros(shape, np.float32)
    out = timed(tf.reduce_sum, tf.constant(data), axis=axis)
    expected = data.sum(axis=axis)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_reduce_sum_special_values(device, timed):
    rows = [[np.nan, 1.0], [np.inf, 1.0], [np.inf, -np.inf], [-0.0, -0.0], [np.inf, np.inf], [3e38, 3e38]]
    data = np.array(rows, np.float32)
    out = timed(tf.reduce_sum, tf.constant(data), axis=1).numpy()
    assert np.isnan(out[0]) and out[1] == np.inf and np.isnan(out[2])
    assert out[3] == 0.0 and out[4] == np.inf and out[5] == np.inf  # float32 overflow goes to inf


def test_reduce_sum_large(device, timed):
    """512x512 float32 (1 MB), past the cache: every row sum and the total, against float64."""
    data = np.random.default_rng(1).uniform(-1, 1, (512, 512)).astype(np.float32)
    x = tf.constant(data)
    rows = timed(tf.reduce_sum, x, axis=1)
    np.testing.assert_allclose(rows.numpy(), data.astype(np.float64).sum(axis=1), atol=1e-4)
    total = timed(tf.reduce_sum, x)
    assert abs(float(total.numpy()) - data.astype(np.float64).sum()) < 1e-2


def test_reduce_sum_tensor_axis(device, timed):
    data = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    out = timed(tf.reduce_sum, tf.constant(data), tf.constant([0, 2]))
    np.testing.assert_array_equal(out.numpy(), data.sum(axis=(0, 2)))


def test_reduce_sum_gradient(device, timed):
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = timed(tf.reduce_sum, x * x, axis=0)
        loss = tf.reduce_sum(y)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), 2 * x.numpy())


@pytest.mark.parametrize("axis", [2, -3, (0, 5)], ids=str)
def test_reduce_sum_refuses_bad_axis(device, timed, axis):
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.reduce_sum, tf.zeros((2, 3)), axis=axis)
