"""tf.linalg.set_diag: replaces a (batched) matrix diagonal or band of diagonals, against NumPy."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.complex64, tf.bool]


def _cast(data, dtype):
    return tf.cast(tf.constant(data), dtype)


def _as_f64(t):
    return t.numpy() if t.dtype in (tf.bool, tf.complex64) else tf.cast(t, tf.float64).numpy()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (6, 2), (2, 3, 3)], ids=str)
def test_set_main_diagonal(device, timed, dtype, shape):
    base = np.arange(int(np.prod(shape))).reshape(shape) % 3 + 1
    k = min(shape[-2:])
    diag = np.zeros((*shape[:-2], k), dtype=base.dtype)
    out = timed(tf.linalg.set_diag, _cast(base, dtype), _cast(diag, dtype))
    assert out.dtype == dtype and tuple(out.shape) == shape
    expected = base.copy()
    idx = np.arange(k)
    expected[..., idx, idx] = 0
    if dtype == tf.bool:
        expected = expected.astype(bool)
    np.testing.assert_array_equal(_as_f64(out), expected)


@pytest.mark.parametrize("k", [1, -2, (-1, 1)], ids=str)
def test_set_off_diagonals(device, timed, k):
    base = np.zeros((4, 5), np.float64)
    if isinstance(k, tuple):
        # A band: diagonals from k[1] (top row) down to k[0], each padded to the longest (4) on the right.
        diagonals = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 0.0]])
        expected = base.copy()
        for row, d in zip(diagonals, range(k[1], k[0] - 1, -1)):
            length = len(np.diagonal(base, d))
            rows, cols = (
                (np.arange(length), np.arange(length) + d)
                if d >= 0
                else (np.arange(length) - d, np.arange(length))
            )
            expected[rows, cols] = row[:length]
    else:
        length = len(np.diagonal(base, k))
        diagonals = np.arange(1.0, length + 1)
        expected = base.copy()
        rows, cols = (
            (np.arange(length), np.arange(length) + k)
            if k >= 0
            else (np.arange(length) - k, np.arange(length))
        )
        expected[rows, cols] = diagonals
    out = timed(tf.linalg.set_diag, tf.constant(base), tf.constant(diagonals), k=k)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_set_diag_large(device, timed):
    """A batch of 8 512x512 float32 matrices (8 MB)."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((8, 512, 512)).astype(np.float32)
    diag = rng.standard_normal((8, 512)).astype(np.float32)
    out = timed(tf.linalg.set_diag, tf.constant(base), tf.constant(diag))
    expected = base.copy()
    idx = np.arange(512)
    expected[:, idx, idx] = diag
    np.testing.assert_array_equal(out.numpy(), expected)


def test_set_diag_empty(device, timed):
    out = timed(tf.linalg.set_diag, tf.zeros((0, 3, 3)), tf.zeros((0, 3)))
    assert tuple(out.shape) == (0, 3, 3)
    out = timed(tf.linalg.set_diag, tf.zeros((3, 0)), tf.zeros((0,)))
    assert tuple(out.shape) == (3, 0)


def test_set_diag_gradient(device, timed):
    x = tf.constant(np.arange(9.0).reshape(3, 3))
    d = tf.constant([10.0, 20.0, 30.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([x, d])
        out = timed(tf.linalg.set_diag, x, d)
        loss = tf.reduce_sum(out * tf.constant(np.arange(1.0, 10.0).reshape(3, 3)))
    gx, gd = tape.gradient(loss, [x, d])
    weights = np.arange(1.0, 10.0).reshape(3, 3)
    np.testing.assert_array_equal(gx.numpy(), weights * (1 - np.eye(3)))
    np.testing.assert_array_equal(gd.numpy(), np.diagonal(weights))


def test_set_diag_wrong_length_raises(device, timed):
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.linalg.set_diag, tf.zeros((3, 3)), tf.zeros((2,)))
