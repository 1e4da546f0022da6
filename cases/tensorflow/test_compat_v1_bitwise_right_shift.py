"""tf.compat.v1.bitwise.right_shift: elementwise shifts for 8 integer dtypes against NumPy's right_shift."""

import numpy as np
import pytest
import tensorflow as tf

right_shift = tf.compat.v1.bitwise.right_shift
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_right_shift_dtypes(device, timed, dtype):
    info = np.iinfo(dtype)
    bits = info.bits
    rng = np.random.default_rng(0)
    x = rng.integers(info.min, info.max, size=(7, 5), dtype=dtype, endpoint=True)
    # Shift amounts within [0, bits): beyond that the result is documented as implementation defined.
    y = rng.integers(0, bits, size=(7, 5)).astype(dtype)
    out = timed(right_shift, tf.constant(x), tf.constant(y))
    assert out.dtype == tf.as_dtype(dtype) and tuple(out.shape) == (7, 5)
    np.testing.assert_array_equal(out.numpy(), np.right_shift(x, y))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_right_shift_negative_is_arithmetic(device, timed, dtype):
    # Signed shifts keep the sign bit: -1 >> k stays -1, the minimum halves.
    info = np.iinfo(dtype)
    x = np.array([-1, -1, -8, -7, info.min, info.min, info.max, 0], dtype)
    y = np.array([0, info.bits - 1, 1, 1, 1, info.bits - 1, info.bits - 2, 3], dtype)
    out = timed(right_shift, tf.constant(x), tf.constant(y)).numpy()
    expected = np.array([-1, -1, -4, -4, info.min // 2, -1, 1, 0], dtype)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(out, np.right_shift(x, y))


@pytest.mark.parametrize(
    "xshape,yshape",
    [((0,), (0,)), ((3, 0), (1,)), ((4, 1), (1, 6)), ((), (5,)), ((512, 512), (512, 512))],
    ids=str,
)
def test_right_shift_shapes_and_broadcast(device, timed, xshape, yshape):
    rng = np.random.default_rng(1)
    x = rng.integers(-(2**31), 2**31 - 1, size=xshape, dtype=np.int32)
    y = rng.integers(0, 32, size=yshape, dtype=np.int32)
    out = timed(right_shift, tf.constant(x), tf.constant(y))
    expected = np.right_shift(x, y)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_right_shift_unsigned_top_bit(device, timed):
    # Unsigned shifts are logical: the top bit moves down, zeros come in.
    x = np.array([0x80, 0xFF, 0x81], np.uint8)
    y = np.array([7, 4, 1], np.uint8)
    out = timed(right_shift, tf.constant(x), tf.constant(y))
    np.testing.assert_array_equal(out.numpy(), np.array([1, 0x0F, 0x40], np.uint8))


@pytest.mark.parametrize(
    "x,y",
    [
        (np.array([1.0, 2.0], np.float32), np.array([1.0, 1.0], np.float32)),
        (np.array([1, 2], np.int32), np.array([1, 1], np.int64)),
    ],
    ids=["float", "mixed_ints"],
)
def test_right_shift_refuses_bad_dtypes(device, timed, x, y):
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError, ValueError)):
        timed(right_shift, tf.constant(x), tf.constant(y))
