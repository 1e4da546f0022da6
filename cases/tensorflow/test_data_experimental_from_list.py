"""tf.data.experimental.from_list: a dataset whose elements are the list's (nested) elements, in order."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("n,shape", [(1, ()), (5, (3,)), (9, (2, 3)), (4, (256, 256))], ids=str)
def test_from_list_elements(device, timed, dtype, n, shape):
    rng = np.random.default_rng(0)
    elements = [(rng.integers(0, 4, shape)).astype(dtype.as_numpy_dtype) for _ in range(n)]
    ds = timed(tf.data.experimental.from_list, elements)
    assert ds.element_spec == tf.TensorSpec(shape, dtype)
    assert int(ds.cardinality()) == n
    got = [e.numpy() for e in ds]
    for g, e in zip(got, elements, strict=True):
        np.testing.assert_array_equal(g, e)


def test_from_list_nested_elements(device, timed):
    elements = [{"x": np.float32(i), "y": (f"s{i}", np.arange(i, i + 2))} for i in range(4)]
    ds = timed(tf.data.experimental.from_list, elements)
    assert ds.element_spec["y"][0] == tf.TensorSpec((), tf.string)
    for i, e in enumerate(ds):
        assert e["x"].numpy() == i and e["y"][0].numpy() == f"s{i}".encode()
        np.testing.assert_array_equal(e["y"][1].numpy(), [i, i + 1])


def test_from_list_empty_raises(device, timed):
    with pytest.raises(ValueError):
        timed(tf.data.experimental.from_list, [])


def test_from_list_differing_shapes_relax_spec(device, timed):
    ds = timed(tf.data.experimental.from_list, [np.zeros(2), np.ones(3)])
    assert ds.element_spec == tf.TensorSpec((None,), tf.float64)
    got = [e.numpy() for e in ds]
    np.testing.assert_array_equal(got[0], [0.0, 0.0])
    np.testing.assert_array_equal(got[1], [1.0, 1.0, 1.0])


def test_from_list_mixed_structure_raises(device, timed):
    with pytest.raises((ValueError, TypeError)):
        timed(tf.data.experimental.from_list, [(1, 2), (1, 2, 3)])
