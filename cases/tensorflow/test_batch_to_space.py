"""tf.batch_to_space: values, shapes and crops against a NumPy reshape/transpose/crop reference."""

import numpy as np
import pytest
import tensorflow as tf


def _reference(x: np.ndarray, block: list[int], crops: list[list[int]]) -> np.ndarray:
    """The documented algorithm: reshape, interleave block and spatial axes, reshape, crop."""
    m = len(block)
    batch = x.shape[0] // int(np.prod(block))
    rest = x.shape[1:]
    r = x.reshape(*block, batch, *rest)
    # [batch, in_1, b_0, ..., in_M, b_{M-1}, remaining...]
    order = [m] + [a for i in range(m) for a in (m + 1 + i, i)] + list(range(2 * m + 1, r.ndim))
    p = r.transpose(order)
    spatial = [rest[i] * block[i] for i in range(m)]
    q = p.reshape(batch, *spatial, *rest[m:])
    index = (slice(None), *(slice(c0, s - c1) for (c0, c1), s in zip(crops, spatial)))
    return q[index]


DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.uint8]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_batch_to_space_dtypes(device, timed, dtype):
    data = (np.arange(8 * 3 * 5 * 2) % 97).reshape(8, 3, 5, 2)
    out = timed(tf.batch_to_space, tf.constant(data, dtype), [2, 2], [[0, 1], [2, 0]])
    expected = _reference(data, [2, 2], [[0, 1], [2, 0]])
    assert out.dtype == dtype and tuple(out.shape) == expected.shape == (2, 5, 8, 2)
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), expected.astype(np.float64))


@pytest.mark.parametrize(
    "shape,block,crops",
    [
        ((6, 4, 3), [3], [[1, 2]]),  # 1-D spatial, remaining channel axis
        ((12, 2, 3, 5), [2, 3], [[0, 0], [0, 0]]),
        ((8, 2, 2, 2, 1), [2, 2, 2], [[1, 0], [0, 1], [1, 1]]),  # 3-D spatial
        ((4, 0, 3), [2], [[0, 0]]),  # empty spatial axis
        ((0, 3, 2), [1], [[0, 0]]),  # empty batch
        ((16, 128, 128), [4, 4], [[0, 0], [0, 0]]),  # 1 MB of float32
    ],
    ids=str,
)
def test_batch_to_space_shapes(device, timed, shape, block, crops):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = timed(tf.batch_to_space, tf.constant(data), block, crops)
    expected = _reference(data, block, crops)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_batch_to_space_moves_special_values_bitwise(device, timed):
    # A pure data movement: NaN, inf and signed zeros come through bit for bit.
    data = np.array([np.nan, -0.0, np.inf, -np.inf, 0.0, 1.0, -1.0, 2.5], np.float32).reshape(4, 1, 2, 1)
    out = timed(tf.batch_to_space, tf.constant(data), [2, 2], [[0, 0], [0, 0]]).numpy()
    expected = _reference(data, [2, 2], [[0, 0], [0, 0]])
    np.testing.assert_array_equal(out.view(np.uint32), expected.view(np.uint32))


def test_batch_to_space_gradient_is_space_to_batch(device, timed):
    x = tf.constant(np.arange(16, dtype=np.float32).reshape(4, 2, 2, 1))
    weights = tf.constant(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1) + 1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = timed(tf.batch_to_space, x, [2, 2], [[0, 0], [0, 0]])
        loss = tf.reduce_sum(y * weights)
    grad = tape.gradient(loss, x).numpy()
    # d loss / d x[i] is the weight at the place x[i] was moved to.
    index = _reference(np.arange(16).reshape(4, 2, 2, 1), [2, 2], [[0, 0], [0, 0]]).ravel()
    expected = np.empty(16, np.float32)
    expected[index] = weights.numpy().ravel()
    np.testing.assert_array_equal(grad.ravel(), expected)


@pytest.mark.parametrize(
    "shape,block,crops",
    [
        ((3, 2, 2, 1), [2, 2], [[0, 0], [0, 0]]),  # batch not divisible by the block size
        ((4, 2, 2, 1), [2, 2], [[0, 5], [0, 0]]),  # crops larger than the output
        ((4, 2, 2, 1), [2, 2], [[-1, 0], [0, 0]]),  # negative crops
    ],
    ids=["indivisible", "crop_too_large", "negative_crop"],
)
def test_batch_to_space_refuses_bad_input(device, timed, shape, block, crops):
    x = tf.zeros(shape)
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(tf.batch_to_space, x, block, crops)
