"""tf.nest.map_structure: applies a function leafwise over one or more same-shaped nested structures."""

import collections

import numpy as np
import pytest
import tensorflow as tf

Point = collections.namedtuple("Point", ["x", "y"])


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32], ids=lambda d: d.name
)
def test_map_structure_over_tensors(device, timed, dtype):
    rng = np.random.default_rng(0)
    data = {"a": rng.integers(0, 9, (3,)), "b": (rng.integers(0, 9, (2, 2)), rng.integers(0, 9, (0,)))}
    structure = tf.nest.map_structure(lambda v: tf.constant(v.astype(dtype.as_numpy_dtype)), data)
    out = timed(tf.nest.map_structure, lambda t: t * tf.constant(2, dtype) + tf.constant(1, dtype), structure)
    assert set(out) == {"a", "b"} and isinstance(out["b"], tuple) and len(out["b"]) == 2
    for got, ref in zip(tf.nest.flatten(out), tf.nest.flatten(data)):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy().astype(np.float64), ref * 2 + 1)


def test_map_structure_multiple_structures_namedtuple(device, timed):
    s1 = [Point(tf.constant([1.0, 2.0]), 3), {"k": tf.constant(4.0)}]
    s2 = [Point(tf.constant([10.0, 20.0]), 30), {"k": tf.constant(40.0)}]
    out = timed(tf.nest.map_structure, lambda a, b: a + b, s1, s2)
    assert isinstance(out[0], Point) and out[0].y == 33
    np.testing.assert_array_equal(out[0].x.numpy(), [11.0, 22.0])
    assert out[1]["k"].numpy() == 44.0


def test_map_structure_large_flat_list(device, timed):
    leaves = [tf.fill([256], float(i)) for i in range(1024)]  # 1 MB of float32 leaves
    out = timed(tf.nest.map_structure, tf.reduce_sum, leaves)
    np.testing.assert_array_equal(np.array([t.numpy() for t in out]), np.arange(1024) * 256.0)


def test_map_structure_mismatch_raises(device, timed):
    with pytest.raises((ValueError, TypeError)):
        timed(tf.nest.map_structure, lambda a, b: a, [1, 2], [1, 2, 3])
    with pytest.raises(TypeError):
        timed(tf.nest.map_structure, lambda a, b: a, (1, 2), [1, 2])
    out = timed(tf.nest.map_structure, lambda a, b: a + b, (1, 2), [3, 4], check_types=False)
    assert out == (4, 6)


def test_map_structure_empty_and_none(device, timed):
    out = timed(tf.nest.map_structure, lambda t: t + 1, {"a": [], "b": ()})
    assert out == {"a": [], "b": ()}
    assert tf.nest.map_structure(lambda t: t, None) is None
