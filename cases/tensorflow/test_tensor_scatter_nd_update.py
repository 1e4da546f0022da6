"""tf.tensor_scatter_nd_update: a copy of the tensor with indexed elements or slices replaced, vs NumPy."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool, tf.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_scatter_update_elements(device, timed, dtype):
    base = np.arange(8) % 3
    tensor = tf.cast(tf.constant(base), dtype)
    indices = tf.constant([[4], [3], [1], [7]])
    updates = tf.cast(tf.constant([9, 10, 11, 12]), dtype)
    out = timed(tf.tensor_scatter_nd_update, tensor, indices, updates)
    assert out.dtype == dtype and tuple(out.shape) == (8,)
    expected = base.copy()
    expected[[4, 3, 1, 7]] = [9, 10, 11, 12]
    if dtype == tf.bool:
        expected = expected.astype(bool)
    got = out.numpy() if dtype == tf.bool else tf.cast(out, tf.float64).numpy()
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("index_dtype", [tf.int32, tf.int64], ids=lambda d: d.name)
def test_scatter_update_slices(device, timed, index_dtype):
    base = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    indices = tf.constant([[0], [2]], index_dtype)
    updates = np.full((2, 5, 6), -1.0, np.float32)
    updates[1] *= 2
    out = timed(tf.tensor_scatter_nd_update, tf.constant(base), indices, tf.constant(updates))
    expected = base.copy()
    expected[[0, 2]] = updates
    np.testing.assert_array_equal(out.numpy(), expected)


def test_scatter_update_partial_index_depth(device, timed):
    base = np.zeros((3, 4, 2), np.float64)
    indices = tf.constant([[0, 1], [2, 3], [1, 0]])
    updates = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out = timed(tf.tensor_scatter_nd_update, tf.constant(base), indices, tf.constant(updates))
    expected = base.copy()
    expected[0, 1], expected[2, 3], expected[1, 0] = updates
    np.testing.assert_array_equal(out.numpy(), expected)


def test_scatter_update_large(device, timed):
    """512x1024 float32 (2 MB), every other row replaced."""
    base = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
    rows = np.arange(0, 512, 2)
    updates = np.random.default_rng(1).standard_normal((rows.size, 1024)).astype(np.float32)
    out = timed(
        tf.tensor_scatter_nd_update, tf.constant(base), tf.constant(rows[:, None]), tf.constant(updates)
    )
    expected = base.copy()
    expected[rows] = updates
    np.testing.assert_array_equal(out.numpy(), expected)


def test_scatter_update_empty_updates(device, timed):
    base = np.arange(6, dtype=np.float32)
    out = timed(
        tf.tensor_scatter_nd_update, tf.constant(base), tf.zeros((0, 1), tf.int32), tf.zeros((0,), tf.float32)
    )
    np.testing.assert_array_equal(out.numpy(), base)


def test_scatter_update_does_not_modify_input_and_gradient(device, timed):
    tensor = tf.constant(np.arange(5, dtype=np.float64))
    updates = tf.constant([10.0, 20.0], tf.float64)
    indices = tf.constant([[1], [3]])
    with tf.GradientTape() as tape:
        tape.watch([tensor, updates])
        out = timed(tf.tensor_scatter_nd_update, tensor, indices, updates)
        loss = tf.reduce_sum(out * tf.constant([1.0, 2.0, 3.0, 4.0, 5.0], tf.float64))
    g_tensor, g_updates = tape.gradient(loss, [tensor, updates])
    np.testing.assert_array_equal(tensor.numpy(), np.arange(5))
    np.testing.assert_array_equal(g_tensor.numpy(), [1.0, 0.0, 3.0, 0.0, 5.0])
    np.testing.assert_array_equal(g_updates.numpy(), [2.0, 4.0])


def test_scatter_update_out_of_range_raises(device, timed):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(tf.tensor_scatter_nd_update, tf.zeros((4,)), tf.constant([[5]]), tf.constant([1.0]))
