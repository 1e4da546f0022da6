"""tf.TensorArray.concat: the written elements joined along their first axis (like numpy.concatenate)."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool, tf.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize(
    "lengths,tail", [((2, 3, 1), (4,)), ((1,), ()), ((0, 2, 0), (3, 2)), ((256, 256, 512), (256,))], ids=str
)
def test_concat_matches_numpy(device, timed, dtype, lengths, tail):
    rng = np.random.default_rng(0)
    parts = [(rng.integers(0, 5, (n, *tail))).astype(dtype.as_numpy_dtype) for n in lengths]
    ta = tf.TensorArray(dtype, size=len(parts), infer_shape=False)
    for i, part in enumerate(parts):
        ta = ta.write(i, tf.constant(part))
    out = timed(ta.concat)
    expected = np.concatenate(parts, axis=0)
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_concat_after_scatter_and_split(device, timed):
    values = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    ta = tf.TensorArray(tf.float32, size=3, infer_shape=False).split(values, [1, 3, 2])
    out = timed(ta.concat)
    np.testing.assert_array_equal(out.numpy(), values.numpy())
    ta2 = tf.TensorArray(tf.float32, size=3, infer_shape=False).scatter(
        [2, 0, 1], tf.constant([[1.0], [2.0], [3.0]])
    )
    np.testing.assert_array_equal(timed(ta2.concat).numpy(), [2.0, 3.0, 1.0])


def test_concat_scalar_elements_raise(device, timed):
    ta = tf.TensorArray(tf.float32, size=2).write(0, 1.0).write(1, 2.0)
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(ta.concat)


def test_concat_dynamic_size(device, timed):
    ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True, infer_shape=False)
    for i in range(4):
        ta = ta.write(i, tf.fill([i + 1], tf.cast(i, tf.float64)))
    out = timed(ta.concat)
    np.testing.assert_array_equal(out.numpy(), np.repeat(np.arange(4.0), np.arange(1, 5)))


def test_concat_gradient(device, timed):
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=tf.float64)
    with tf.GradientTape() as tape:
        ta = tf.TensorArray(tf.float64, size=2, infer_shape=False)
        ta = ta.write(0, x[:1] * 2.0).write(1, x[1:] * 3.0)
        out = timed(ta.concat)
        loss = tf.reduce_sum(out)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [[2.0, 2.0], [3.0, 3.0], [3.0, 3.0]])
