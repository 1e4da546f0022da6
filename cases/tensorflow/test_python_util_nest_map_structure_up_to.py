"""nest.map_structure_up_to (tensorflow.python.util.nest): maps a function over inputs down to the
depth of a shallow structure, passing deeper parts whole."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.util import nest


def test_map_up_to_shallow_tuple(device, timed):
    shallow = (None, None)
    inputs = ((1, 2), [3, 4, 5])
    assert timed(nest.map_structure_up_to, shallow, len, inputs) == (2, 3)


def test_map_up_to_dict_and_multiple_inputs(device, timed):
    shallow = {"a": None, "b": (None, None)}
    first = {"a": [1, 2], "b": (3, {"deep": 4})}
    second = {"a": [10, 20], "b": (30, {"deep": 40})}
    out = timed(nest.map_structure_up_to, shallow, lambda x, y: (x, y), first, second)
    assert out == {"a": ([1, 2], [10, 20]), "b": ((3, 30), ({"deep": 4}, {"deep": 40}))}


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.int32], ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(0,), (3, 5), (512, 1024)], ids=str)
def test_map_up_to_tensor_leaves(device, timed, dtype, shape):
    """Each shallow leaf gets a (tensor, scale) pair; the op runs on the device under test."""
    data = np.arange(int(np.prod(shape))).reshape(shape) % 11
    structure = {"x": tf.cast(tf.constant(data), dtype), "pair": (tf.cast(tf.constant(data + 1), dtype), 2)}
    scales = {"x": 3, "pair": 5}
    out = timed(
        nest.map_structure_up_to,
        scales,
        lambda s, v: tf.cast(v[0] if isinstance(v, tuple) else v, dtype) * s,
        scales,
        structure,
    )
    assert set(out) == {"x", "pair"}
    np.testing.assert_array_equal(tf.cast(out["x"], tf.float64).numpy(), data * 3)
    np.testing.assert_array_equal(tf.cast(out["pair"], tf.float64).numpy(), (data + 1) * 5)


def test_map_up_to_namedtuple_kept(device, timed):
    from collections import namedtuple

    Point = namedtuple("Point", ["x", "y"])
    out = timed(nest.map_structure_up_to, Point(None, None), sum, Point([1, 2], (3, 4, 5)))
    assert isinstance(out, Point) and out == Point(3, 12)


def test_map_up_to_mismatched_structures_raise(device, timed):
    with pytest.raises((ValueError, TypeError)):
        timed(nest.map_structure_up_to, (None, None, None), lambda x: x, (1, 2))
    with pytest.raises((ValueError, TypeError)):
        nest.map_structure_up_to({"a": None}, lambda x: x, {"b": 1})
    with pytest.raises((ValueError, TypeError)):
        nest.map_structure_up_to((None, None), lambda x: x, 5)
