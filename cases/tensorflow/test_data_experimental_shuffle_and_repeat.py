"""tf.data.experimental.shuffle_and_repeat: each epoch a fresh permutation of the input, count epochs."""

import numpy as np
import pytest
import tensorflow as tf


@pytest.mark.parametrize("n,buffer_size,count", [(10, 10, 3), (10, 4, 2), (1, 5, 4)], ids=str)
def test_each_epoch_is_a_permutation(device, timed, n, buffer_size, count):
    ds = tf.data.Dataset.range(n)
    out = timed(ds.apply, tf.data.experimental.shuffle_and_repeat(buffer_size, count, seed=1))
    got = np.fromiter(out.as_numpy_iterator(), dtype=np.int64)
    assert got.shape == (n * count,)
    epochs = got.reshape(count, n)
    for epoch in epochs:
        np.testing.assert_array_equal(np.sort(epoch), np.arange(n))
    if n >= 10:
        assert not np.array_equal(epochs[0], np.arange(n))  # actually shuffled
        assert not np.array_equal(epochs[0], epochs[1])  # reshuffled per epoch


def test_large_elements_stay_intact(device, timed):
    data = np.repeat(np.arange(1024, dtype=np.float32)[:, None], 256, axis=1)  # 1 MB, row i filled with i
    ds = tf.data.Dataset.from_tensor_slices(data)
    out = timed(ds.apply, tf.data.experimental.shuffle_and_repeat(1024, 2, seed=3))
    got = np.concatenate([b.numpy() for b in out.batch(512)])
    assert got.shape == (2048, 256)
    np.testing.assert_array_equal(got, np.repeat(got[:, :1], 256, axis=1))
    for epoch in got[:, 0].reshape(2, 1024):
        np.testing.assert_array_equal(np.sort(epoch), np.arange(1024))
    assert not np.array_equal(got[:1024, 0], np.arange(1024))


def test_seed_is_deterministic(device, timed):
    ds = tf.data.Dataset.range(100)
    a = timed(ds.apply, tf.data.experimental.shuffle_and_repeat(100, 2, seed=42))
    b = ds.apply(tf.data.experimental.shuffle_and_repeat(100, 2, seed=42))
    c = ds.apply(tf.data.experimental.shuffle_and_repeat(100, 2, seed=43))
    la, lb, lc = list(a.as_numpy_iterator()), list(b.as_numpy_iterator()), list(c.as_numpy_iterator())
    assert la == lb and la != lc


def test_buffer_one_keeps_order(device, timed):
    ds = tf.data.Dataset.from_tensor_slices(np.arange(6, dtype=np.float32))
    out = timed(ds.apply, tf.data.experimental.shuffle_and_repeat(1, 2, seed=0))
    np.testing.assert_array_equal(list(out.as_numpy_iterator()), np.tile(np.arange(6, dtype=np.float32), 2))


def test_count_none_repeats_forever(device, timed):
    ds = tf.data.Dataset.range(3)
    out = timed(ds.apply, tf.data.experimental.shuffle_and_repeat(3, seed=5))
    assert int(out.cardinality()) == tf.data.INFINITE_CARDINALITY
    got = np.array(list(out.take(30).as_numpy_iterator())).reshape(10, 3)
    assert all(sorted(row) == [0, 1, 2] for row in got)


def test_invalid_buffer_raises(device, timed):
    # The kernel's own message: a compiled call that fails for another reason must not pass here.
    with pytest.raises(
        (tf.errors.InvalidArgumentError, ValueError), match="buffer_size must be greater than zero"
    ):
        out = timed(tf.data.Dataset.range(3).apply, tf.data.experimental.shuffle_and_repeat(0, 1))
        list(out)
