"""tf.keras.layers.GlobalMaxPooling1D: max over the steps axis against np.max, data formats, keepdims, NaN."""

import numpy as np
import pytest
import tensorflow as tf

TOL_DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16]


@pytest.mark.parametrize("dtype", TOL_DTYPES, ids=lambda d: d.name)
def test_global_max_pooling_dtypes(device, timed, dtype):
    data = np.random.default_rng(0).standard_normal((4, 7, 5)).astype(np.float32)
    x = tf.constant(data, dtype)
    layer = tf.keras.layers.GlobalMaxPooling1D(dtype=dtype.name)
    out = timed(layer, x)
    assert out.dtype == dtype and tuple(out.shape) == (4, 5)
    # The max is one of the inputs: exact against np.max of the rounded input.
    expected = np.max(tf.cast(x, tf.float64).numpy(), axis=1)
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), expected)


@pytest.mark.parametrize(
    "data_format,keepdims,shape",
    [
        ("channels_last", False, (3, 5, 4)),
        ("channels_last", True, (3, 5, 4)),
        ("channels_first", False, (3, 5, 4)),
        ("channels_first", True, (2, 3, 9)),
        ("channels_last", False, (0, 5, 4)),  # empty batch
        ("channels_last", False, (1, 1, 1)),
        ("channels_last", False, (16, 1024, 16)),  # 1 MB
    ],
    ids=str,
)
def test_global_max_pooling_formats(device, timed, data_format, keepdims, shape):
    data = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    layer = tf.keras.layers.GlobalMaxPooling1D(data_format=data_format, keepdims=keepdims)
    out = timed(layer, tf.constant(data))
    axis = 1 if data_format == "channels_last" else 2
    expected = np.max(data, axis=axis, keepdims=keepdims)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_global_max_pooling_special_values(device, timed):
    data = np.array(
        [
            [[np.nan, 1.0], [2.0, 3.0], [0.5, -1.0]],  # NaN in channel 0
            [[-np.inf, -0.0], [-np.inf, -5.0], [-np.inf, -0.0]],  # all -inf, a -0.0 maximum
            [[np.inf, 1.0], [1.0, np.nan], [2.0, 2.0]],  # inf, NaN in channel 1
        ],
        np.float32,
    )
    out = timed(tf.keras.layers.GlobalMaxPooling1D(), tf.constant(data)).numpy()
    # np.max propagates NaN; a max pooling must not drop it.
    expected = np.max(data, axis=1)
    np.testing.assert_array_equal(out, expected)
    assert np.signbit(out[1, 1])


def test_global_max_pooling_gradient_goes_to_argmax(device, timed):
    data = np.array([[[1.0, 4.0], [3.0, 2.0], [2.0, 0.0]]], np.float32)
    x = tf.constant(data)
    layer = tf.keras.layers.GlobalMaxPooling1D()
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(timed(layer, x) * tf.constant([2.0, 3.0]))
    expected = np.array([[[0.0, 3.0], [2.0, 0.0], [0.0, 0.0]]], np.float32)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), expected)


def test_global_max_pooling_refuses_wrong_rank(device, timed):
    layer = tf.keras.layers.GlobalMaxPooling1D()
    with pytest.raises(ValueError):
        timed(layer, tf.zeros((2, 3)))
