"""tf.sequence_mask: mask[i, j] = j < lengths[i], against NumPy, with maxlen, dtypes and nested lengths."""

import numpy as np
import pytest
import tensorflow as tf


def _reference(lengths, maxlen=None):
    lengths = np.asarray(lengths)
    maxlen = int(lengths.max()) if maxlen is None else maxlen
    return np.arange(maxlen) < lengths[..., None]


@pytest.mark.parametrize("length_dtype", [tf.int32, tf.int64], ids=lambda d: d.name)
@pytest.mark.parametrize("maxlen", [None, 3, 8])
def test_sequence_mask_values(device, timed, length_dtype, maxlen):
    lengths = [1, 3, 2, 0, 5]
    out = timed(tf.sequence_mask, tf.constant(lengths, length_dtype), maxlen=maxlen)
    assert out.dtype == tf.bool
    expected = _reference(lengths, maxlen)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.uint8], ids=lambda d: d.name
)
def test_sequence_mask_output_dtype(device, timed, dtype):
    lengths = [2, 0, 4]
    out = timed(tf.sequence_mask, tf.constant(lengths), maxlen=5, dtype=dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), _reference(lengths, 5).astype(np.float64))


def test_sequence_mask_nd_lengths(device, timed):
    lengths = np.array([[1, 3], [2, 0], [4, 4]])
    out = timed(tf.sequence_mask, tf.constant(lengths), maxlen=4)
    assert tuple(out.shape) == (3, 2, 4)
    np.testing.assert_array_equal(out.numpy(), _reference(lengths, 4))


def test_sequence_mask_large(device, timed):
    """4096 sequences of up to 1024 steps, float32 output (16 MB)."""
    lengths = np.random.default_rng(0).integers(0, 1025, 4096)
    out = timed(tf.sequence_mask, tf.constant(lengths), maxlen=1024, dtype=tf.float32)
    np.testing.assert_array_equal(out.numpy(), _reference(lengths, 1024).astype(np.float32))


def test_sequence_mask_empty(device, timed):
    out = timed(tf.sequence_mask, tf.zeros((0,), tf.int32), maxlen=6)
    assert tuple(out.shape) == (0, 6)
    out = timed(tf.sequence_mask, tf.constant([3, 1]), maxlen=0)
    assert tuple(out.shape) == (2, 0)
