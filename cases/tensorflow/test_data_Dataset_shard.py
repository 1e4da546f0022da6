"""tf.data.Dataset.shard: keeps every num_shards-th element from index on (like range[index::num_shards])."""

import numpy as np
import pytest
import tensorflow as tf


@pytest.mark.parametrize(
    "n,num_shards,index", [(10, 3, 0), (10, 3, 2), (7, 1, 0), (0, 4, 1), (5, 8, 6), (100000, 7, 3)], ids=str
)
def test_shard_matches_slicing(device, timed, n, num_shards, index):
    ds = tf.data.Dataset.range(n)
    sharded = timed(ds.shard, num_shards, index)
    got = np.concatenate([b.numpy() for b in sharded.batch(4096)] or [np.zeros(0, np.int64)])
    np.testing.assert_array_equal(got, np.arange(n)[index::num_shards])
    assert int(sharded.cardinality()) == len(got)


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32], ids=lambda d: d.name
)
def test_shard_tensor_elements(device, timed, dtype):
    data = np.arange(24).reshape(8, 3).astype(dtype.as_numpy_dtype)
    ds = tf.data.Dataset.from_tensor_slices(data)
    sharded = timed(ds.shard, tf.constant(3, tf.int64), tf.constant(1, tf.int64))
    got = np.stack([e.numpy() for e in sharded])
    assert sharded.element_spec == tf.TensorSpec((3,), dtype)
    np.testing.assert_array_equal(got, data[1::3])


def test_shard_shards_partition_dataset(device, timed):
    ds = tf.data.Dataset.range(23)
    seen = []
    for i in range(4):
        sharded = timed(ds.shard, 4, i)
        seen.extend(sharded.as_numpy_iterator())
    assert sorted(seen) == list(range(23))


@pytest.mark.parametrize("num_shards,index", [(0, 0), (3, 3), (3, -1)], ids=str)
def test_shard_invalid_arguments_raise(device, timed, num_shards, index):
    # The kernel's own message: a compiled call that fails for another reason must not pass here.
    with pytest.raises(
        (tf.errors.InvalidArgumentError, ValueError),
        match=r"Number of shards must be greater than zero|Index must be between",
    ):
        sharded = timed(tf.data.Dataset.range(5).shard, num_shards, index)
        list(sharded)
