"""tf.sets.intersection: per-row set intersection of the last dimension, against numpy.intersect1d."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.int8, tf.int16, tf.uint8, tf.uint16, tf.int32, tf.int64]


def _rows(sparse, n_rows):
    dense = tf.sparse.to_dense(sparse).numpy()
    counts = np.bincount(sparse.indices.numpy()[:, 0], minlength=n_rows) if n_rows else []
    return [list(dense[i, : counts[i]]) for i in range(n_rows)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_intersection_dense_rows(device, timed, dtype):
    a = np.array([[1, 2, 3, 9], [4, 5, 5, 6], [7, 8, 7, 7]])
    b = np.array([[2, 9, 9, 0], [6, 4, 1, 1], [0, 1, 2, 3]])
    out = timed(tf.sets.intersection, tf.constant(a, dtype), tf.constant(b, dtype))
    assert isinstance(out, tf.SparseTensor) and out.dtype == dtype
    assert out.dense_shape.numpy().tolist() == [3, 2]
    assert _rows(out, 3) == [list(np.intersect1d(a[i], b[i])) for i in range(3)]


def test_intersection_strings(device, timed):
    a = tf.constant([[b"a", b"b", b"c"], [b"x", b"y", b"z"]])
    b = tf.constant([[b"c", b"a", b"q"], [b"q", b"r", b"s"]])
    out = timed(tf.sets.intersection, a, b)
    assert out.indices.numpy().tolist() == [[0, 0], [0, 1]]
    assert out.values.numpy().tolist() == [b"a", b"c"]
    assert out.dense_shape.numpy().tolist() == [2, 2]


def test_intersection_sparse_operand(device, timed):
    """Rows of different lengths as a SparseTensor, intersected with a dense tensor."""
    a = tf.sparse.from_dense(tf.constant([[1, 2, 0], [3, 0, 0], [5, 6, 7]], tf.int64))  # zeros are absent
    b = tf.constant([[2, 1, 9], [4, 4, 4], [7, 5, 5]], tf.int64)
    out = timed(tf.sets.intersection, a, b)
    assert _rows(out, 3) == [[1, 2], [], [5, 7]]


def test_intersection_3d(device, timed):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 10, (2, 3, 6))
    b = rng.integers(0, 10, (2, 3, 5))
    out = timed(tf.sets.intersection, tf.constant(a, tf.int32), tf.constant(b, tf.int32))
    dense = tf.sparse.to_dense(out, default_value=-1).numpy()
    for i in range(2):
        for j in range(3):
            row = dense[i, j]
            assert list(row[row >= 0]) == list(np.intersect1d(a[i, j], b[i, j]))


def test_intersection_large(device, timed):
    """1024 rows of 256 int64 values (2 MB per operand)."""
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2000, (1024, 256))
    b = rng.integers(0, 2000, (1024, 256))
    out = timed(tf.sets.intersection, tf.constant(a), tf.constant(b))
    sizes = tf.sets.size(out).numpy()
    expected = [np.intersect1d(a[i], b[i]) for i in range(1024)]
    np.testing.assert_array_equal(sizes, [e.size for e in expected])
    dense = tf.sparse.to_dense(out).numpy()
    for i in (0, 511, 1023):
        np.testing.assert_array_equal(dense[i, : sizes[i]], expected[i])


def test_intersection_empty_sets(device, timed):
    out = timed(tf.sets.intersection, tf.zeros((3, 0), tf.int32), tf.constant([[1], [2], [3]], tf.int32))
    assert out.values.shape == (0,)
    assert out.dense_shape.numpy().tolist() == [3, 0]


def test_intersection_dtype_mismatch_raises(device, timed):
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.sets.intersection, tf.constant([[1]], tf.int32), tf.constant([[1]], tf.int64))
