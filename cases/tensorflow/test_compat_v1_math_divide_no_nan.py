"""tf.compat.v1.math.divide_no_nan: x / y with 0 wherever y == 0, against NumPy division and IEEE rules."""

import numpy as np
import pytest
import tensorflow as tf

FLOAT_DTYPES = [tf.float16, tf.bfloat16, tf.float32, tf.float64]
TOL = {tf.float16: 2e-3, tf.bfloat16: 1e-2, tf.float32: 1e-6, tf.float64: 1e-12}


def _np(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy() if t.dtype == tf.bfloat16 else t.numpy()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.name)
def test_divide_no_nan_values(device, timed, dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(-10, 10, (6, 9))
    y = rng.uniform(0.5, 4, (6, 9)) * rng.choice([-1, 1], (6, 9))
    y[::2, ::3] = 0.0  # a regular pattern of zero divisors
    xt, yt = tf.cast(tf.constant(x), dtype), tf.cast(tf.constant(y), dtype)
    out = timed(tf.compat.v1.math.divide_no_nan, xt, yt)
    assert out.dtype == dtype and tuple(out.shape) == (6, 9)
    # Reference from the rounded operands, so only the division's own rounding counts.
    xr, yr = _np(xt).astype(np.float64), _np(yt).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.where(yr == 0, 0.0, xr / yr)
    np.testing.assert_allclose(_np(out), expected, rtol=TOL[dtype], atol=0)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16], ids=lambda d: d.name)
def test_divide_no_nan_special_values(device, timed, dtype):
    npd = dtype.as_numpy_dtype
    x = np.array([0.0, 1.0, np.inf, np.nan, -3.0, 1.0, np.nan, np.inf, 2.0, 1.0], npd)
    y = np.array([0.0, -0.0, 0.0, 0.0, np.inf, np.nan, 2.0, 2.0, -0.0, -np.inf], npd)
    out = timed(tf.compat.v1.math.divide_no_nan, tf.constant(x), tf.constant(y)).numpy()
    # y == 0 (either sign) gives 0 whatever x is, NaN and inf included.
    np.testing.assert_array_equal(out[:4], [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(out[8:9], [0.0])
    # Otherwise IEEE division: -3/inf = -0, 1/nan = nan, nan/2 = nan, inf/2 = inf, 1/-inf = -0.
    assert out[4] == 0 and np.signbit(out[4])
    assert np.isnan(out[5]) and np.isnan(out[6]) and out[7] == np.inf
    assert out[9] == 0 and np.signbit(out[9])


@pytest.mark.parametrize("shape", [(0,), (0, 5), (7, 13), (256, 1024)], ids=str)
def test_divide_no_nan_shapes(device, timed, shape):
    """(256, 1024) float32 is 1 MB per operand."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape).astype(np.float32)
    y[rng.random(shape) < 0.1] = 0.0
    out = timed(tf.compat.v1.math.divide_no_nan, tf.constant(x), tf.constant(y))
    assert tuple(out.shape) == shape
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.where(y == 0, np.float32(0), x / y)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_divide_no_nan_broadcast(device, timed):
    x = np.arange(-6, 6, dtype=np.float64).reshape(4, 3)
    y = np.array([2.0, 0.0, -4.0])
    out = timed(tf.compat.v1.math.divide_no_nan, tf.constant(x), tf.constant(y))
    np.testing.assert_array_equal(out.numpy(), np.stack([x[:, 0] / 2, np.zeros(4), x[:, 2] / -4], 1))


@pytest.mark.parametrize("dtype", [tf.complex64, tf.complex128], ids=lambda d: d.name)
def test_divide_no_nan_complex(device, timed, dtype):
    x = np.array([1 + 2j, 3 - 1j, np.nan + 0j], dtype.as_numpy_dtype)
    y = np.array([0j, 1 + 1j, 0j], dtype.as_numpy_dtype)
    out = timed(tf.compat.v1.math.divide_no_nan, tf.constant(x), tf.constant(y)).numpy()
    np.testing.assert_allclose(out, [0, (3 - 1j) / (1 + 1j), 0], rtol=1e-6)


def test_divide_no_nan_integers_true_divide(device, timed):
    # The v1 endpoint divides integers as truediv does: int32 operands give a float64 result.
    x, y = tf.constant([7, -3, 5], tf.int32), tf.constant([2, 0, -4], tf.int32)
    out = timed(tf.compat.v1.math.divide_no_nan, x, y)
    assert out.dtype == tf.float64
    np.testing.assert_array_equal(out.numpy(), [3.5, 0.0, -1.25])


def test_divide_no_nan_gradient(device, timed):
    x = tf.constant([3.0, 4.0, 5.0], tf.float64)
    y = tf.constant([2.0, 0.0, -0.5], tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = timed(tf.compat.v1.math.divide_no_nan, x, y)
        loss = tf.reduce_sum(z)
    gx, gy = tape.gradient(loss, [x, y])
    # d/dx = 1/y and d/dy = -x/y**2 where y != 0; both 0 where y == 0.
    np.testing.assert_allclose(gx.numpy(), [0.5, 0.0, -2.0])
    np.testing.assert_allclose(gy.numpy(), [-0.75, 0.0, -20.0])


def test_divide_no_nan_refuses_mixed_dtypes(device, timed):
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.compat.v1.math.divide_no_nan, tf.constant([1.0], tf.float32), tf.constant([1.0], tf.float64))
