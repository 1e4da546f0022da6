"""tf.range: arithmetic sequences against numpy.arange, dtypes, negative/fractional deltas, empty, errors."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize(
    "args",
    [(5,), (2, 9), (1, 20, 3), (10, 0, -2), (4, 4), (0, 1 << 20)],
    ids=["limit", "start-limit", "delta", "negative", "empty", "large"],
)
def test_range_matches_numpy(device, timed, dtype, args):
    if dtype in (tf.float16, tf.bfloat16) and args[-1] > 256:
        args = (0, 256)  # beyond 256 (bfloat16) the half types cannot represent every integer
    out = timed(tf.range, *args, dtype=dtype)
    expected = np.arange(*args)
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), expected)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
def test_range_fractional_delta(device, timed, dtype):
    # Binary-exact start, limit and delta: the element count does not depend on rounding.
    out = timed(tf.range, -0.75, 3.2, 0.25, dtype=dtype)
    expected = np.arange(-0.75, 3.2, 0.25)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_range_tensor_arguments_infer_dtype(device, timed):
    out = timed(tf.range, tf.constant(3, tf.int64), tf.constant(11, tf.int64), tf.constant(2, tf.int64))
    assert out.dtype == tf.int64
    np.testing.assert_array_equal(out.numpy(), [3, 5, 7, 9])
    assert timed(tf.range, 4.0).dtype == tf.float32
    assert timed(tf.range, 4).dtype == tf.int32


def test_range_zero_delta_raises(device, timed):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(tf.range, 0, 5, 0)


def test_range_wrong_direction_raises(device, timed):
    """Unlike numpy.arange (empty result), the kernel requires start <= limit for delta > 0."""
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(tf.range, tf.constant(5), tf.constant(0), tf.constant(1))
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(tf.range, tf.constant(0), tf.constant(5), tf.constant(-1))
