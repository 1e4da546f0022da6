"""tf.compat.v1.pad: CONSTANT/REFLECT/SYMMETRIC padding against NumPy's pad, dtypes, shapes, refusals."""

import numpy as np
import pytest
import tensorflow as tf

pad = tf.compat.v1.pad
NUMPY_MODE = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}


def to_f64(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy()  # bfloat16 has no NumPy comparison of its own


@pytest.mark.parametrize(
    "dtype",
    [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int8, tf.int32, tf.int64, tf.uint8, tf.bool],
    ids=lambda d: d.name,
)
def test_pad_constant_by_dtype(device, timed, dtype):
    data = np.arange(1, 7).reshape(2, 3) % 5
    x = tf.constant(data.astype(bool) if dtype == tf.bool else data, dtype)
    out = timed(pad, x, [[1, 2], [0, 3]])
    assert out.dtype == dtype and tuple(out.shape) == (5, 6)
    expected = np.pad(data, [[1, 2], [0, 3]])
    got = out.numpy() if dtype == tf.bool else to_f64(out)
    np.testing.assert_array_equal(got, expected.astype(bool) if dtype == tf.bool else expected)


@pytest.mark.parametrize("mode", list(NUMPY_MODE))
@pytest.mark.parametrize(
    ("shape", "paddings"),
    [
        ((4,), [[3, 2]]),
        ((3, 5), [[2, 1], [0, 4]]),
        ((2, 3, 4), [[1, 1], [2, 0], [0, 3]]),
        ((1, 5), [[0, 0], [1, 1]]),
    ],
    ids=["1d", "2d", "3d", "singleton"],
)
def test_pad_modes(device, timed, mode, shape, paddings):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = timed(pad, tf.constant(data), paddings, mode=mode)
    expected = np.pad(data, paddings, mode=NUMPY_MODE[mode])
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize(
    ("shape", "paddings"),
    [
        ((0,), [[2, 1]]),
        ((0, 3), [[1, 0], [0, 0]]),
        ((3, 2), [[0, 0], [0, 0]]),
        ((512, 512), [[1, 3], [5, 0]]),
    ],
    ids=["empty", "empty_2d", "no_padding", "large"],
)
def test_pad_shapes(device, timed, shape, paddings):
    data = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    out = timed(pad, tf.constant(data), paddings)
    expected = np.pad(data, paddings)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("value", [-1.5, np.inf, np.nan], ids=str)
def test_pad_constant_values(device, timed, value):
    data = np.array([[1.0, -0.0], [np.nan, 4.0]], np.float64)
    out = timed(pad, tf.constant(data), [[1, 0], [1, 1]], constant_values=value)
    np.testing.assert_array_equal(out.numpy(), np.pad(data, [[1, 0], [1, 1]], constant_values=value))
    assert np.signbit(out.numpy()[1, 2])  # the input's -0.0 is copied as is


def test_pad_paddings_tensor_int64(device, timed):
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    paddings = tf.constant([[0, 1], [2, 0]], tf.int64)
    out = timed(pad, tf.constant(data), paddings, mode="SYMMETRIC")
    np.testing.assert_array_equal(out.numpy(), np.pad(data, [[0, 1], [2, 0]], mode="symmetric"))


def test_pad_gradient(device, timed):
    x = tf.constant(np.arange(6, dtype=np.float64).reshape(2, 3))
    weights = tf.constant(np.random.default_rng(2).standard_normal((4, 6)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(timed(pad, x, [[1, 1], [2, 1]]) * weights)
    # The gradient of constant padding is the upstream gradient sliced back to the input.
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), weights.numpy()[1:3, 2:5])


@pytest.mark.parametrize(
    ("mode", "paddings"),
    [("REFLECT", [[0, 3]]), ("SYMMETRIC", [[4, 0]]), ("CONSTANT", [[-1, 0]])],
    ids=["reflect_too_wide", "symmetric_too_wide", "negative"],
)
def test_pad_refuses_bad_paddings(device, timed, mode, paddings):
    # Documented: REFLECT needs paddings <= dim - 1, SYMMETRIC <= dim; paddings must be >= 0.
    x = tf.constant(np.arange(3, dtype=np.float32))
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(pad, x, paddings, mode=mode)


def test_pad_refuses_bad_mode_and_rank(device, timed):
    x = tf.constant(np.ones((2, 2), np.float32))
    with pytest.raises(ValueError):
        timed(pad, x, [[1, 1], [1, 1]], mode="WRAP")
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(pad, x, [[1, 1]])  # one row of paddings per dimension
