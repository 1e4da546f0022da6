"""tf.logical_and: elementwise boolean AND against NumPy's logical_and, broadcasting, operator, refusals."""

import numpy as np
import pytest
import tensorflow as tf


def test_logical_and_truth_table(device, timed):
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    out = timed(tf.logical_and, tf.constant(a), tf.constant(b))
    assert out.dtype == tf.bool and tuple(out.shape) == (4,)
    np.testing.assert_array_equal(out.numpy(), [False, False, False, True])


@pytest.mark.parametrize(
    ("xs", "ys"),
    [
        ((), ()),
        ((0,), (0,)),
        ((2, 0, 5), (2, 0, 1)),
        ((1, 3, 2), (3, 1)),
        ((2, 1, 5), (2, 3, 1)),
        ((7,), ()),
        ((1031,), (1031,)),
        ((1024, 1024), (1024,)),  # 1 MB of bool
    ],
    ids=str,
)
def test_logical_and_shapes_and_broadcast(device, timed, xs, ys):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, xs).astype(bool)
    b = rng.integers(0, 2, ys).astype(bool)
    out = timed(tf.logical_and, tf.constant(a), tf.constant(b))
    expected = np.logical_and(a, b)
    assert out.dtype == tf.bool and tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("other", [True, False], ids=lambda v: f"python_{v}")
def test_logical_and_python_bool(device, timed, other):
    a = np.array([[True, False], [False, True]])
    out = timed(tf.logical_and, tf.constant(a), other)
    np.testing.assert_array_equal(out.numpy(), a & other)


def test_logical_and_operator_matches(device, timed):
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2, (3, 9)).astype(bool), rng.integers(0, 2, (3, 9)).astype(bool)
    x, y = tf.constant(a), tf.constant(b)
    out = timed(tf.logical_and, x, y)
    np.testing.assert_array_equal(out.numpy(), (x & y).numpy())  # Tensor.__and__ is logical_and for bool


@pytest.mark.parametrize("dtype", [tf.int32, tf.float32], ids=lambda d: d.name)
def test_logical_and_refuses_non_bool(device, timed, dtype):
    x = tf.constant([1, 0, 1], dtype)
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError)):
        timed(tf.logical_and, x, x)


def test_logical_and_refuses_mismatched_shapes(device, timed):
    x = tf.constant(np.ones((1, 3, 2), bool))
    y = tf.constant(np.ones((3, 2, 1), bool))
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.logical_and, x, y)
