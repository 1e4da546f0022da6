"""tf.data.experimental.dense_to_ragged_batch: batches elements of differing shapes into tf.RaggedTensors."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64]


def _ragged_dataset(lengths, dtype):
    return tf.data.Dataset.from_tensor_slices(np.array(lengths, np.int64)).map(
        lambda n: tf.cast(tf.range(n), dtype)
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("lengths,batch_size", [((3, 0, 5, 1, 2), 2), ((4,), 3), ((2, 2, 2), 3)], ids=str)
def test_ragged_batches(device, timed, dtype, lengths, batch_size):
    ds = _ragged_dataset(lengths, dtype)
    out = timed(ds.apply, tf.data.experimental.dense_to_ragged_batch(batch_size))
    batches = list(out)
    assert len(batches) == -(-len(lengths) // batch_size)
    rows = []
    for batch in batches:
        assert isinstance(batch, tf.RaggedTensor) and batch.dtype == dtype
        rows.extend(r.numpy().astype(np.float64) for r in batch)
    for row, n in zip(rows, lengths, strict=True):
        np.testing.assert_array_equal(row, np.arange(n))


def test_drop_remainder(device, timed):
    ds = _ragged_dataset((1, 2, 3, 4, 5), tf.int32)
    out = timed(ds.apply, tf.data.experimental.dense_to_ragged_batch(2, drop_remainder=True))
    batches = list(out)
    assert len(batches) == 2 and out.element_spec.shape.as_list() == [2, None]
    assert batches[1].to_list() == [[0, 1, 2], [0, 1, 2, 3]]


def test_uniform_elements_stay_dense(device, timed):
    data = np.arange(600 * 512, dtype=np.float32).reshape(600, 512)  # 1.2 MB
    ds = tf.data.Dataset.from_tensor_slices(data)
    out = timed(ds.apply, tf.data.experimental.dense_to_ragged_batch(256))
    batches = list(out)
    assert isinstance(batches[0], tf.Tensor) and batches[0].shape == (256, 512)
    np.testing.assert_array_equal(np.concatenate([b.numpy() for b in batches]), data)


def test_nested_elements(device, timed):
    ds = tf.data.Dataset.range(1, 5).map(lambda n: {"v": tf.range(n), "n": n})
    out = timed(ds.apply, tf.data.experimental.dense_to_ragged_batch(4))
    batch = next(iter(out))
    assert batch["v"].to_list() == [[0], [0, 1], [0, 1, 2], [0, 1, 2, 3]]
    np.testing.assert_array_equal(batch["n"].numpy(), [1, 2, 3, 4])
