"""tf.lookup.KeyValueTensorInitializer: a table's contents from key and value tensors; lookups agree.

The timed function builds the initializer, a StaticHashTable from it and looks keys up (in compiled
mode all of it inside tf.function(jit_compile=True)), as a user builds a vocabulary table in a function."""

import numpy as np
import pytest
import tensorflow as tf


def _build(keys, values, **kwargs):
    return tf.lookup.KeyValueTensorInitializer(keys, values, **kwargs)


def _table_lookup(seen, default, **kwargs):
    """A function of (keys, values, query): initializer -> StaticHashTable -> (lookup, size)."""

    def f(keys, values, query):
        init = _build(keys, values, **kwargs)
        seen.append(init)
        table = tf.lookup.StaticHashTable(init, default_value=default)
        return table.lookup(query), table.size()

    return f


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
    unknown = tf.constant([b"nope"]) if key_dtype == tf.string else tf.constant([999], key_dtype)
    query = tf.concat([tf.gather(keys, [2, 0, 3, 1]), unknown], 0)
    default = "missing" if value_dtype == tf.string else -1
    seen = []
    found, size = timed(_table_lookup(seen, default), keys, values, query)
    init = seen[-1]
    assert init.key_dtype == key_dtype and init.value_dtype == value_dtype
    assert int(size) == 4
    np.testing.assert_array_equal(found.numpy()[:4], tf.gather(values, [2, 0, 3, 1]).numpy())
    assert found.numpy()[4] == (b"missing" if value_dtype == tf.string else -1)


def test_initializer_explicit_dtypes_convert(device, timed):
    """key_dtype/value_dtype convert Python lists of a different type."""
    seen = []

    def f(query):
        init = _build([1, 2, 3], [10, 20, 30], key_dtype=tf.int64, value_dtype=tf.float64)
        seen.append(init)
        return tf.lookup.StaticHashTable(init, default_value=0.0).lookup(query)

    found = timed(f, tf.constant([3, 1, 7], tf.int64))
    assert seen[-1].key_dtype == tf.int64 and seen[-1].value_dtype == tf.float64
    np.testing.assert_array_equal(found.numpy(), [30.0, 10.0, 0.0])


def test_initializer_large(device, timed):
    """A table of 262144 int64 -> float32 entries (3 MB of keys and values)."""
    n = 1 << 18
    keys = tf.constant(np.random.default_rng(0).permutation(n).astype(np.int64) * 7)
    values = tf.constant(np.arange(n, dtype=np.float32))
    found, size = timed(_table_lookup([], -1.0), keys, values, keys)
    assert int(size) == n
    np.testing.assert_array_equal(found.numpy(), values.numpy())


def test_initializer_empty(device, timed):
    """An empty initializer builds, but importing it into a table is rejected by the kernel."""
    init = _build(tf.zeros((0,), tf.int64), tf.zeros((0,), tf.int64))
    assert init.key_dtype == tf.int64
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
        empty = tf.zeros((0,), tf.int64)
        timed(_table_lookup([], -5), empty, empty, tf.constant([1], tf.int64))


def test_initializer_mismatched_lengths_raise(device, timed):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(
            _table_lookup([], 0),
            tf.constant([1, 2, 3], tf.int64),
            tf.constant([1, 2], tf.int64),
            tf.constant([1], tf.int64),
        )
