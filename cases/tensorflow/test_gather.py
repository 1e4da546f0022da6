"""tf.gather: slices picked by index along an axis (batch_dims too), against NumPy's take."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool, tf.complex64]


def _np(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy() if t.dtype == tf.bfloat16 else t.numpy()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("index_dtype", [tf.int32, tf.int64], ids=lambda d: d.name)
def test_gather_dtypes(device, timed, dtype, index_dtype):
    data = (np.arange(35).reshape(7, 5) % 6).astype(dtype.as_numpy_dtype)
    indices = np.array([6, 0, 3, 3, 1])
    out = timed(tf.gather, tf.constant(data), tf.constant(indices, index_dtype))
    assert out.dtype == dtype and tuple(out.shape) == (5, 5)
    np.testing.assert_array_equal(_np(out), np.take(data, indices, axis=0).astype(_np(out).dtype))


@pytest.mark.parametrize("axis", [0, 1, 2, -1], ids=str)
@pytest.mark.parametrize("index_shape", [(), (4,), (2, 3), (0,)], ids=str)
def test_gather_axes_and_index_shapes(device, timed, axis, index_shape):
    """The result shape is params.shape[:axis] + indices.shape + params.shape[axis+1:]."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 5, 7)).astype(np.float32)
    indices = rng.integers(0, data.shape[axis], index_shape)
    out = timed(tf.gather, tf.constant(data), tf.constant(indices, tf.int32), axis=axis)
    expected = np.take(data, indices, axis=axis)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_gather_batch_dims(device, timed):
    """batch_dims=1: row b of the result gathers from row b of params with row b of indices."""
    rng = np.random.default_rng(1)
    data = rng.standard_normal((4, 6, 3)).astype(np.float64)
    indices = rng.integers(0, 6, (4, 5))
    out = timed(tf.gather, tf.constant(data), tf.constant(indices), axis=1, batch_dims=1)
    expected = np.stack([np.take(data[b], indices[b], axis=0) for b in range(4)])
    np.testing.assert_array_equal(out.numpy(), expected)


def test_gather_from_empty_params_with_no_indices(device, timed):
    out = timed(tf.gather, tf.zeros((0, 3)), tf.zeros((0,), tf.int32))
    assert tuple(out.shape) == (0, 3)


def test_gather_special_values(device, timed):
    data = np.array([np.nan, -0.0, np.inf, -np.inf, 0.0], np.float32)
    out = timed(tf.gather, tf.constant(data), tf.constant([1, 0, 2, 3, 4, 1])).numpy()
    assert np.isnan(out[1]) and out[2] == np.inf and out[3] == -np.inf
    assert np.signbit(out[0]) and np.signbit(out[5]) and not np.signbit(out[4])


def test_gather_large(device, timed):
    """Rows of a 1 MB table in a random order (every row once), past the cache."""
    rng = np.random.default_rng(2)
    data = rng.standard_normal((1024, 256)).astype(np.float32)
    perm = rng.permutation(1024)
    out = timed(tf.gather, tf.constant(data), tf.constant(perm))
    np.testing.assert_array_equal(out.numpy(), data[perm])


def test_gather_gradient(device, timed):
    """The gradient scatters-adds back: a row picked twice gets twice the upstream gradient."""
    x = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(timed(tf.gather, x, tf.constant([2, 0, 2])))
    grad = tf.convert_to_tensor(tape.gradient(loss, x))
    np.testing.assert_array_equal(grad.numpy(), [[1, 1], [0, 0], [2, 2], [0, 0]])


@pytest.mark.parametrize("bad", [5, 100, -1], ids=str)
def test_gather_refuses_out_of_range_index(device, timed, bad):
    """Documented: on CPU an out-of-range index raises an error (on GPU a 0 is stored)."""
    params = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(tf.gather, params, tf.constant([0, bad]))


def test_gather_refuses_float_indices(device, timed):
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError, tf.errors.NotFoundError)):
        timed(tf.gather, tf.constant([1.0, 2.0]), tf.constant([0.0, 1.0]))
