"""tf.compat.v1.reshape: same elements in row-major order under a new shape, against NumPy's reshape."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16]
DTYPES += [tf.int32, tf.int64, tf.uint8, tf.bool, tf.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_reshape_dtypes(device, timed, dtype):
    data = np.arange(24) % 5
    x = tf.constant(data.astype(dtype.as_numpy_dtype))
    out = timed(tf.compat.v1.reshape, x, [2, 3, 4])
    assert out.dtype == dtype and tuple(out.shape) == (2, 3, 4)
    np.testing.assert_array_equal(
        tf.cast(out, tf.float64).numpy() if dtype == tf.bfloat16 else out.numpy(),
        data.reshape(2, 3, 4).astype(np.float64 if dtype == tf.bfloat16 else dtype.as_numpy_dtype),
    )


@pytest.mark.parametrize(
    "src,new",
    [
        ((24,), (2, 3, 4)),
        ((2, 3, 4), (4, -1)),  # -1 is inferred: 6
        ((2, 3, 4), (-1,)),  # flatten
        ((7, 1, 3), (3, 7)),  # odd extents
        ((1,), ()),  # to a scalar
        ((), (1, 1, 1)),  # from a scalar
        ((0, 5), (5, 0)),  # empty
        ((0, 5), (-1, 10)),  # empty with an inferred extent: 0
        ((512, 512), (256, 1024)),  # 1 MB of float32
    ],
    ids=str,
)
def test_reshape_shapes(device, timed, src, new):
    data = np.random.default_rng(0).standard_normal(src).astype(np.float32)
    out = timed(tf.compat.v1.reshape, tf.constant(data), new)
    expected = data.reshape(new)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_reshape_keeps_special_values(device, timed):
    data = np.array([np.nan, -0.0, np.inf, -np.inf, 0.0, 1e-45], np.float32)
    out = timed(tf.compat.v1.reshape, tf.constant(data), [3, 2]).numpy()
    np.testing.assert_array_equal(out, data.reshape(3, 2))
    assert np.signbit(out[0, 1]) and not np.signbit(out[2, 0])


def test_reshape_tensor_shape_argument(device, timed):
    """The shape may itself be a tensor (int32 or int64)."""
    data = np.arange(12, dtype=np.float64)
    for index_dtype in (tf.int32, tf.int64):
        out = timed(tf.compat.v1.reshape, tf.constant(data), tf.constant([3, -1], index_dtype))
        np.testing.assert_array_equal(out.numpy(), data.reshape(3, 4))


def test_reshape_gradient(device, timed):
    x = tf.constant(np.arange(6, dtype=np.float32))
    weights = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) + 1)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(timed(tf.compat.v1.reshape, x, [2, 3]) * weights)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), np.arange(6) + 1.0)


@pytest.mark.parametrize("new", [(5, 5), (-1, -1), (7, -1), (-2, 12)], ids=str)
def test_reshape_refuses_incompatible_shape(device, timed, new):
    """24 elements fit neither 25, two unknowns, a non-divisor with -1, nor a negative extent."""
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.compat.v1.reshape, tf.zeros((2, 3, 4)), new)
