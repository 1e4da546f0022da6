"""tf.reshape: element order against NumPy, inferred dimensions, errors and gradient."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool, tf.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize(
    "source,target",
    [((6,), (2, 3)), ((4, 6), (-1,)), ((3, 5, 7), (7, -1)), ((0, 4), (2, 0, 2)), ((512, 1024), (1024, 512))],
    ids=["simple", "flatten", "infer", "empty", "large"],
)
def test_reshape_matches_numpy(device, timed, dtype, source, target):
    data = np.arange(int(np.prod(source))).reshape(source) % 7
    x = tf.cast(tf.constant(data), dtype)
    out = timed(tf.reshape, x, target)
    assert out.dtype == dtype
    expected = data.reshape(target)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(
        tf.cast(out, tf.float64).numpy() if dtype != tf.bool else out.numpy(),
        expected.astype(bool) if dtype == tf.bool else expected,
    )


def test_reshape_wrong_size_raises(device, timed):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(tf.reshape, tf.zeros((2, 3)), (4, 2))


def test_reshape_gradient(device, timed):
    x = tf.Variable(np.arange(12, dtype=np.float64).reshape(3, 4))
    with tf.GradientTape() as tape:
        y = timed(tf.reshape, x, (2, 6))
        loss = tf.reduce_sum(y * tf.constant(np.arange(12, dtype=np.float64).reshape(2, 6)))
    grad = tape.gradient(loss, x)
    np.testing.assert_array_equal(grad.numpy(), np.arange(12, dtype=np.float64).reshape(3, 4))
