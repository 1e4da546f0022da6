"""tf.lookup.KeyValueTensorInitializer: a table's contents from key and value tensors; lookups agree."""

import numpy as np
import pytest
import tensorflow as tf


def _build(keys, values, **kwargs):
    return tf.lookup.KeyValueTensorInitializer(keys, values, **kwargs)


@pytest.mark.parametrize(
    "key_dtype,value_dtype",
    [
        (tf.string, tf.int64),
        (tf.int64, tf.float32),
        (tf.int32, tf.float64),
        (tf.int64, tf.string),
        (tf.string, tf.float32),
    ],
    ids=lambda d: d.name,
)
def test_initializer_contents(device, timed, key_dtype, value_dtype):
    raw_keys = [3, 11, 5, 42]
    raw_values = [0, 1, 2, 3]
    keys = (
        tf.constant([str(k).encode() for k in raw_keys])
        if key_dtype == tf.string
        else tf.constant(raw_keys, key_dtype)
    )
    values = (
        tf.constant([f"v{v}".encode() for v in raw_values])
        if value_dtype == tf.string
        else tf.constant(raw_values, value_dtype)
    )
    with timed.region() as region:
        region.result = init = _build(keys, values)
    assert init.key_dtype == key_dtype and init.value_dtype == value_dtype
    default = "missing" if value_dtype == tf.string else -1
    table = tf.lookup.StaticHashTable(init, default_value=default)
    assert int(table.size()) == 4
    query = tf.gather(keys, [2, 0, 3, 1])
    np.testing.assert_array_equal(table.lookup(query).numpy(), tf.gather(values, [2, 0, 3, 1]).numpy())
    unknown = tf.constant([b"nope"]) if key_dtype == tf.string else tf.constant([999], key_dtype)
    assert table.lookup(unknown).numpy()[0] == (b"missing" if value_dtype == tf.string else -1)


def test_initializer_explicit_dtypes_convert(device, timed):
    """key_dtype/value_dtype convert Python lists of a different type."""
    with timed.region() as region:
        region.result = init = _build([1, 2, 3], [10, 20, 30], key_dtype=tf.int64, value_dtype=tf.float64)
    assert init.key_dtype == tf.int64 and init.value_dtype == tf.float64
    table = tf.lookup.StaticHashTable(init, default_value=0.0)
    np.testing.assert_array_equal(table.lookup(tf.constant([3, 1, 7], tf.int64)).numpy(), [30.0, 10.0, 0.0])


def test_initializer_large(device, timed):
    """A table of 262144 int64 -> float32 entries (3 MB of keys and values)."""
    n = 1 << 18
    keys = tf.constant(np.random.default_rng(0).permutation(n).astype(np.int64) * 7)
    values = tf.constant(np.arange(n, dtype=np.float32))
    with timed.region() as region:
        region.result = init = _build(keys, values)
    table = tf.lookup.StaticHashTable(init, default_value=-1.0)
    assert int(table.size()) == n
    np.testing.assert_array_equal(table.lookup(keys).numpy(), values.numpy())


def test_initializer_empty(device, timed):
    """An empty initializer builds, but importing it into a table is rejected by the kernel."""
    with timed.region() as region:
        region.result = init = _build(tf.zeros((0,), tf.int64), tf.zeros((0,), tf.int64))
    assert init.key_dtype == tf.int64
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
        tf.lookup.StaticHashTable(init, default_value=-5)


def test_initializer_mismatched_lengths_raise(device, timed):
    init = _build(tf.constant([1, 2, 3], tf.int64), tf.constant([1, 2], tf.int64))
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)), timed.region():
        tf.lookup.StaticHashTable(init, default_value=0)
