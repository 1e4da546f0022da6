"""tf.cast: dtype conversion against NumPy's astype, truncation, complex, bool, empty/large, gradient."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.uint8, tf.bool]


@pytest.mark.parametrize("target", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("source", DTYPES, ids=lambda d: d.name)
def test_cast_between_dtypes(device, timed, source, target):
    # Small non-negative integers are exact in every type, so the result is unambiguous.
    data = np.arange(12).reshape(3, 4) % 5
    x = tf.constant(data.astype(bool) if source == tf.bool else data, dtype=source)
    out = timed(tf.cast, x, target)
    assert out.dtype == target and tuple(out.shape) == (3, 4)
    expected = data.astype(bool) if tf.bool in (source, target) else data
    if target == tf.bool:
        got = out.numpy()
    else:
        got = tf.cast(out, tf.float64).numpy()  # bfloat16 has no NumPy comparison of its own
        expected = expected.astype(np.float64)
    np.testing.assert_array_equal(got, expected)


def test_cast_float_to_int_truncates(device, timed):
    data = np.array([-2.7, -1.5, -0.4, 0.0, 0.4, 1.5, 2.7, 100.99], np.float32)
    out = timed(tf.cast, tf.constant(data), tf.int32)
    np.testing.assert_array_equal(out.numpy(), np.trunc(data).astype(np.int32))


@pytest.mark.parametrize("target", [tf.float16, tf.bfloat16], ids=lambda d: d.name)
def test_cast_rounds_to_nearest_half(device, timed, target):
    data = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    out = timed(tf.cast, tf.constant(data), target)
    if target == tf.float16:
        np.testing.assert_array_equal(out.numpy(), data.astype(np.float16))
    else:
        # bfloat16 keeps 8 significant bits: relative error at most 2**-9 with round-to-nearest.
        back = tf.cast(out, tf.float32).numpy()
        assert np.all(np.abs(back - data) <= np.abs(data) * 2.0**-8 + 1e-30)


def test_cast_complex(device, timed):
    z = tf.constant([1 + 2j, -3.5 - 1j], tf.complex64)
    np.testing.assert_array_equal(timed(tf.cast, z, tf.float32).numpy(), [1.0, -3.5])
    w = timed(tf.cast, tf.constant([1.5, -2.0], tf.float64), tf.complex128)
    assert w.dtype == tf.complex128
    np.testing.assert_array_equal(w.numpy(), [1.5 + 0j, -2.0 + 0j])


def test_cast_special_values(device, timed):
    data = np.array([np.inf, -np.inf, np.nan, -0.0, 1e-40, 70000.0], np.float32)
    out = timed(tf.cast, tf.constant(data), tf.float16).numpy()
    np.testing.assert_array_equal(out[[0, 1, 3, 4]], [np.inf, -np.inf, 0.0, 0.0])
    assert np.isnan(out[2]) and out[5] == np.inf
    assert np.signbit(out[3])


@pytest.mark.parametrize("shape", [(0,), (0, 3), (1024, 1024)], ids=str)
def test_cast_empty_and_large(device, timed, shape):
    data = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    out = timed(tf.cast, tf.constant(data), tf.float64)
    assert tuple(out.shape) == shape
    np.testing.assert_array_equal(out.numpy(), data.astype(np.float64))


def test_cast_gradient(device, timed):
    x = tf.constant([1.0, 2.0, 3.0], tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = timed(tf.cast, x, tf.float64)
        loss = tf.reduce_sum(y * y)
    grad = tape.gradient(loss, x)
    assert grad.dtype == tf.float32
    np.testing.assert_array_equal(grad.numpy(), [2.0, 4.0, 6.0])
