"""tf.compat.v1.nn.bias_add: a 1-D bias added along the channel axis (NHWC/NCHW), against NumPy."""

import numpy as np
import pytest
import tensorflow as tf

bias_add = tf.compat.v1.nn.bias_add
TOLERANCE = {
    tf.float32: 1e-6,
    tf.float64: 1e-15,
    tf.float16: 1e-3,
    tf.bfloat16: 8e-3,
    tf.int32: 0,
    tf.int64: 0,
}


def to_f64(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy()  # bfloat16 has no NumPy comparison of its own


@pytest.mark.parametrize("dtype", list(TOLERANCE), ids=lambda d: d.name)
def test_bias_add_by_dtype(device, timed, dtype):
    rng = np.random.default_rng(0)
    if dtype.is_integer:
        x, b = (
            tf.constant(rng.integers(-50, 50, (4, 3, 5)), dtype),
            tf.constant(rng.integers(-9, 9, 5), dtype),
        )
    else:
        x, b = tf.constant(rng.uniform(-2, 2, (4, 3, 5)), dtype), tf.constant(rng.uniform(-1, 1, 5), dtype)
    out = timed(bias_add, x, b)
    assert out.dtype == dtype and tuple(out.shape) == (4, 3, 5)
    # Reference from the inputs as rounded to the dtype: one rounding of the sum.
    expected = to_f64(x) + to_f64(b)
    np.testing.assert_allclose(to_f64(out), expected, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


@pytest.mark.parametrize("shape", [(0, 3), (2, 0), (4, 0, 3), (1, 7), (3, 5, 7, 11), (512, 512)], ids=str)
def test_bias_add_shapes_nhwc(device, timed, shape):
    rng = np.random.default_rng(1)
    data = rng.standard_normal(shape).astype(np.float32)
    bias = rng.standard_normal(shape[-1]).astype(np.float32)
    out = timed(bias_add, tf.constant(data), tf.constant(bias))
    assert tuple(out.shape) == shape
    np.testing.assert_array_equal(out.numpy(), data + bias)  # one float32 addition: exact match


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 5), (1, 6, 2, 3, 4)], ids=str)
def test_bias_add_nchw(device, timed, shape):
    rng = np.random.default_rng(2)
    data = rng.standard_normal(shape).astype(np.float32)
    bias = rng.standard_normal(shape[1]).astype(np.float32)
    out = timed(bias_add, tf.constant(data), tf.constant(bias), data_format="NCHW")
    expected = data + bias.reshape((1, -1) + (1,) * (len(shape) - 2))  # channel is axis 1
    np.testing.assert_array_equal(out.numpy(), expected)


def test_bias_add_special_values(device, timed):
    data = np.array([[np.inf, -np.inf, np.nan, -0.0], [1.0, 2.0, 3.0, -0.0]], np.float32)
    bias = np.array([-np.inf, 1.0, 0.0, -0.0], np.float32)
    out = timed(bias_add, tf.constant(data), tf.constant(bias)).numpy()
    assert np.isnan(out[0, 0]) and out[0, 1] == -np.inf and np.isnan(out[0, 2])
    assert out[1, 0] == -np.inf and out[1, 1] == 3.0
    assert out[0, 3] == 0.0 and np.signbit(out[0, 3])  # -0.0 + -0.0 = -0.0


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
def test_bias_add_gradient(device, timed, dtype):
    rng = np.random.default_rng(3)
    x = tf.constant(rng.standard_normal((3, 2, 4)), dtype)
    b = tf.constant(rng.standard_normal(4), dtype)
    weights = tf.constant(rng.standard_normal((3, 2, 4)), dtype)
    with tf.GradientTape() as tape:
        tape.watch([x, b])
        loss = tf.reduce_sum(timed(bias_add, x, b) * weights)
    gx, gb = tape.gradient(loss, [x, b])
    np.testing.assert_array_equal(gx.numpy(), weights.numpy())
    # The bias gradient sums the upstream gradient over every axis but the channel.
    np.testing.assert_allclose(gb.numpy(), weights.numpy().sum(axis=(0, 1)), rtol=1e-6)


@pytest.mark.parametrize(
    ("xs", "bs"),
    [((2,), (2,)), ((1, 2), (1, 2)), ((1, 2), (1,))],
    ids=["value_rank1", "bias_rank2", "bias_length"],
)
def test_bias_add_refusals(device, timed, xs, bs):
    x = tf.constant(np.ones(xs, np.float32))
    b = tf.constant(np.ones(bs, np.float32))
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(bias_add, x, b)
