"""tf.experimental.numpy.cumprod: cumulative product (flattened or along an axis) against numpy.cumprod."""

import numpy as np
import pytest
import tensorflow as tf

tnp = tf.experimental.numpy
TOL = {
    tf.float32: 1e-5,
    tf.float64: 1e-12,
    tf.float16: 1e-2,
    tf.bfloat16: 5e-2,
    tf.int32: 0,
    tf.int64: 0,
    tf.complex64: 1e-5,
}


def _data(shape, dtype):
    rng = np.random.default_rng(0)
    data = rng.uniform(0.8, 1.25, shape)
    if dtype.is_integer:
        data = rng.integers(-2, 3, shape)
    elif dtype.is_complex:
        data = data * np.exp(1j * rng.uniform(-0.3, 0.3, shape))
    return data.astype(dtype.as_numpy_dtype)


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
@pytest.mark.parametrize(
    "shape,axis",
    [
        ((0,), None),
        ((7,), None),
        ((3, 5), 0),
        ((3, 5), 1),
        ((2, 3, 4), -1),
        ((2, 3, 4), None),
        ((4096, 64), 1),
    ],
    ids=str,
)
def test_cumprod_matches_numpy(device, timed, dtype, shape, axis):
    data = _data(shape, dtype)
    out = np.asarray(timed(tnp.cumprod, tf.constant(data), axis=axis))
    expected = np.cumprod(data.astype(np.complex128 if dtype.is_complex else np.float64), axis=axis)
    assert out.shape == expected.shape
    # rounding error of a running product grows with its length (sqrt-like for random rounding)
    length = int(np.prod(shape)) if axis is None else shape[axis]
    tol = TOL[dtype] * max(1.0, np.sqrt(length) / 2)
    np.testing.assert_allclose(out.astype(expected.dtype), expected, rtol=tol, atol=tol)


def test_cumprod_bool_promotes(device, timed):
    data = np.array([True, True, False, True])
    out = timed(tnp.cumprod, tf.constant(data))
    np.testing.assert_array_equal(np.asarray(out), np.cumprod(data))


def test_cumprod_dtype_argument(device, timed):
    data = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    out = timed(tnp.cumprod, tf.constant(data), axis=1, dtype=np.float64)
    assert out.dtype == tf.float64
    np.testing.assert_array_equal(np.asarray(out), np.cumprod(data, axis=1, dtype=np.float64))


def test_cumprod_gradient(device, timed):
    x = tf.Variable([2.0, 3.0, 4.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        y = timed(tnp.cumprod, x)
    # d/dx of sum(x0, x0 x1, x0 x1 x2)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1 + 3 + 12, 2 + 8, 6])
