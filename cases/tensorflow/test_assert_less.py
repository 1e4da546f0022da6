"""tf.assert_less: passes iff x < y elementwise (broadcast), else InvalidArgumentError; checked by hand."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int8, tf.int32, tf.int64, tf.uint8]


def _guarded_double(x: tf.Tensor, y: tf.Tensor, **kwargs) -> tf.Tensor:
    """2*x, guarded by the assertion as the docs prescribe inside tf.function (a control dependency):
    eagerly the assertion raises at once; compiled, the graph must honour it before the result."""
    with tf.control_dependencies([tf.assert_less(x, y, **kwargs)]):
        return x + x


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_assert_less_holds(device, timed, dtype):
    x = tf.constant([[0, 1, 2], [3, 4, 5]], dtype)
    y = tf.constant([[1, 2, 3], [4, 5, 6]], dtype)
    out = timed(_guarded_double, x, y)
    assert out.dtype == dtype
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), [[0, 2, 4], [6, 8, 10]])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_assert_less_fails_when_one_element_is_not_less(device, timed, dtype):
    x = tf.constant([0, 7, 2], dtype)
    y = tf.constant([1, 6, 3], dtype)  # 7 < 6 is false
    with pytest.raises(tf.errors.InvalidArgumentError, match="ordering violated"):
        timed(_guarded_double, x, y, message="ordering violated")


@pytest.mark.parametrize(
    "x,y,holds",
    [
        (np.array([-0.0]), np.array([0.0]), False),  # -0.0 == 0.0: not strictly less
        (np.array([-np.inf]), np.array([np.finfo(np.float32).min]), True),
        (np.array([np.finfo(np.float32).max]), np.array([np.inf]), True),
        (np.array([np.nan]), np.array([np.inf]), False),  # every comparison with NaN is false
        (np.array([1.0]), np.array([np.nan]), False),
        (np.array([1.0]), np.array([np.nextafter(np.float32(1), np.float32(2))]), True),  # one ulp above
    ],
    ids=["neg_zero", "neg_inf", "pos_inf", "nan_x", "nan_y", "one_ulp"],
)
def test_assert_less_edge_values(device, timed, x, y, holds):
    xt, yt = tf.constant(x.astype(np.float32)), tf.constant(y.astype(np.float32))
    if holds:
        with np.errstate(over="ignore"):  # 2 * float32 max is inf, as in TensorFlow
            expected = 2 * x.astype(np.float32)
        np.testing.assert_array_equal(timed(_guarded_double, xt, yt).numpy(), expected)
    else:
        with pytest.raises(tf.errors.InvalidArgumentError):
            timed(_guarded_double, xt, yt)


@pytest.mark.parametrize("shape", [(0,), (0, 4), (7, 1, 3), (256, 1024)], ids=str)
def test_assert_less_shapes(device, timed, shape):
    """Holds for y = x + 1 (including empty tensors, vacuously); the 1 MB case then breaks it in
    the last element, which the check must still see."""
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    out = timed(_guarded_double, tf.constant(x), tf.constant(x + 1))
    assert tuple(out.shape) == shape
    if x.size > 100:
        y = x + 1
        y.reshape(-1)[-1] = x.reshape(-1)[-1] - 1
        with pytest.raises(tf.errors.InvalidArgumentError):
            timed(_guarded_double, tf.constant(x), tf.constant(y))


def test_assert_less_broadcasts_scalar_bound(device, timed):
    x = tf.constant(np.arange(12, dtype=np.int32).reshape(3, 4))
    np.testing.assert_array_equal(timed(_guarded_double, x, tf.constant(12)).numpy(), 2 * x.numpy())
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(_guarded_double, x, tf.constant(11))


def test_assert_less_static_inputs_fail_at_trace(device, timed):
    """With constant inputs the check is decided while the function is built: it raises in both modes."""

    def constant_check() -> tf.Tensor:
        return _guarded_double(tf.constant([1.0, 3.0]), tf.constant([2.0, 3.0]))

    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(constant_check)


def test_assert_less_refuses_mismatched_dtypes_and_shapes(device, timed):
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
        timed(_guarded_double, tf.zeros((2,)), tf.ones((2,), tf.float64))
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(_guarded_double, tf.zeros((2, 3)), tf.ones((4,)))
