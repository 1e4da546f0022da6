"""tf.nn.space_to_batch: zero-pads spatial dims and moves blocks into the batch dimension, against a
NumPy reshape/transpose reference; batch_to_space inverts it."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.uint8, tf.complex64]


def _reference(x, block_shape, paddings):
    """The documented algorithm: pad, split each spatial dim into (size/block, block), blocks to batch."""
    m = len(block_shape)
    padded = np.pad(x, [(0, 0), *map(tuple, paddings), *[(0, 0)] * (x.ndim - 1 - m)])
    batch = padded.shape[0]
    spatial = padded.shape[1 : 1 + m]
    rest = padded.shape[1 + m :]
    split = [batch]
    for size, block in zip(spatial, block_shape):
        split += [size // block, block]
    r = padded.reshape(*split, *rest)
    block_axes = [2 + 2 * i for i in range(m)]
    grid_axes = [1 + 2 * i for i in range(m)]
    rest_axes = list(range(1 + 2 * m, r.ndim))
    r = r.transpose(*block_axes, 0, *grid_axes, *rest_axes)
    return r.reshape(
        batch * int(np.prod(block_shape)), *[s // b for s, b in zip(spatial, block_shape)], *rest
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize(
    "shape,block,paddings",
    [
        ((1, 4, 4, 1), [2, 2], [[0, 0], [0, 0]]),
        ((2, 3, 5, 3), [2, 3], [[1, 0], [0, 1]]),
        ((3, 6, 2), [3], [[0, 0]]),
        ((1, 2, 2, 2, 2), [2, 2, 2], [[0, 0], [0, 0], [0, 0]]),
    ],
    ids=["simple", "padded", "1d", "3d"],
)
def test_space_to_batch_matches_reference(device, timed, dtype, shape, block, paddings):
    data = np.arange(int(np.prod(shape))).reshape(shape) % 11
    x = tf.cast(tf.constant(data), dtype)
    out = timed(tf.nn.space_to_batch, x, block, paddings)
    expected = _reference(data, block, paddings)
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    got = out.numpy() if dtype == tf.complex64 else tf.cast(out, tf.float64).numpy()
    np.testing.assert_array_equal(got, expected)


def test_space_to_batch_inverted_by_batch_to_space(device, timed):
    data = np.random.default_rng(0).standard_normal((2, 6, 9, 4)).astype(np.float32)
    out = timed(tf.nn.space_to_batch, tf.constant(data), [2, 3], [[1, 1], [0, 3]])
    back = tf.batch_to_space(out, [2, 3], [[1, 1], [0, 3]])
    np.testing.assert_array_equal(back.numpy(), data)


def test_space_to_batch_large(device, timed):
    """8x128x128x16 float32 (8 MB) with 4x4 blocks."""
    data = np.random.default_rng(1).standard_normal((8, 128, 128, 16)).astype(np.float32)
    out = timed(tf.nn.space_to_batch, tf.constant(data), [4, 4], [[0, 0], [0, 0]])
    np.testing.assert_array_equal(out.numpy(), _reference(data, [4, 4], [[0, 0], [0, 0]]))


def test_space_to_batch_empty_batch(device, timed):
    out = timed(tf.nn.space_to_batch, tf.zeros((0, 4, 4, 2)), [2, 2], [[0, 0], [0, 0]])
    assert tuple(out.shape) == (0, 2, 2, 2)


def test_space_to_batch_indivisible_raises(device, timed):
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.nn.space_to_batch, tf.zeros((1, 5, 4, 1)), [2, 2], [[0, 0], [0, 0]])


def test_space_to_batch_gradient(device, timed):
    x = tf.constant(np.random.default_rng(2).standard_normal((1, 4, 6, 2)))
    weights = tf.constant(np.random.default_rng(3).standard_normal((4, 3, 3, 2)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = timed(tf.nn.space_to_batch, x, [2, 2], [[1, 1], [0, 0]])
        loss = tf.reduce_sum(out * weights)
    grad = tape.gradient(loss, x)
    # The gradient is the weights sent back through the inverse permutation (padding dropped).
    expected = tf.batch_to_space(weights, [2, 2], [[1, 1], [0, 0]])
    np.testing.assert_array_equal(grad.numpy(), expected.numpy())
