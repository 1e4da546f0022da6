"""tf.compat.v1.image.convert_image_dtype: rescaling casts between [0, 1) floats and [0, MAX] ints."""

import numpy as np
import pytest
import tensorflow as tf

convert = tf.compat.v1.image.convert_image_dtype
FLOATS = [tf.float32, tf.float64, tf.float16, tf.bfloat16]
# One unit in the last place at 1.0 for each float type: the tolerance of x / MAX.
ULP = {tf.float32: 2.0**-23, tf.float64: 2.0**-52, tf.float16: 2.0**-10, tf.bfloat16: 2.0**-7}


def _f64(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy()


@pytest.mark.parametrize("target", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("source", [tf.uint8, tf.uint16, tf.int16, tf.int32], ids=lambda d: d.name)
def test_int_to_float_divides_by_max(device, timed, source, target):
    top = source.max
    data = np.array([0, 1, top // 3, top // 2, top - 1, top], dtype=source.as_numpy_dtype)
    out = timed(convert, tf.constant(data), target)
    assert out.dtype == target and tuple(out.shape) == data.shape
    expected = data.astype(np.float64) / top
    np.testing.assert_allclose(_f64(out), expected, rtol=ULP[target], atol=0)
    assert _f64(out)[0] == 0.0 and _f64(out)[-1] == 1.0  # the range's ends map exactly


@pytest.mark.parametrize("target", [tf.uint8, tf.uint16, tf.int16, tf.int32], ids=lambda d: d.name)
@pytest.mark.parametrize("source", [tf.float32, tf.float64, tf.float16], ids=lambda d: d.name)
def test_float_to_int_scales_by_max(device, timed, source, target):
    """Values in [0, 1) land within one count of x * MAX; 0 maps to 0 and 1 - eps to MAX (or MAX - 1)."""
    grid = np.linspace(0, 1, 101)[:-1]
    data = np.concatenate([grid, [1 - ULP[source]]]).astype(source.as_numpy_dtype)
    out = timed(convert, tf.constant(data), target)
    assert out.dtype == target
    got = out.numpy().astype(np.float64)
    assert np.all(np.abs(got - data.astype(np.float64) * target.max) <= 1.0 + target.max * ULP[source])
    assert got[0] == 0 and got[-1] >= target.max - 1 - target.max * ULP[source]
    assert np.all(np.diff(got) >= 0)  # monotone


@pytest.mark.parametrize(
    "source,target,factor",
    [(tf.uint8, tf.uint16, 256), (tf.uint8, tf.int32, 2**23), (tf.int16, tf.int32, 2**16)],
    ids=["u8_u16", "u8_i32", "i16_i32"],
)
def test_int_widening_multiplies(device, timed, source, target, factor):
    """A wider integer type: multiply by (MAX_out + 1) / (MAX_in + 1), a power of two."""
    data = np.array([0, 1, 100, source.max], source.as_numpy_dtype)
    out = timed(convert, tf.constant(data), target)
    np.testing.assert_array_equal(out.numpy(), data.astype(np.int64) * factor)


@pytest.mark.parametrize(
    "source,target,shift",
    [(tf.uint16, tf.uint8, 8), (tf.int32, tf.uint8, 23), (tf.int32, tf.int16, 16)],
    ids=["u16_u8", "i32_u8", "i32_i16"],
)
def test_int_narrowing_shifts(device, timed, source, target, shift):
    data = np.array([0, 1, 255, 256, 12345, source.max], source.as_numpy_dtype)
    out = timed(convert, tf.constant(data), target)
    np.testing.assert_array_equal(out.numpy(), data.astype(np.int64) >> shift)


@pytest.mark.parametrize("target", FLOATS, ids=lambda d: d.name)
def test_float_to_float_is_a_plain_cast(device, timed, target):
    data = np.array([0.0, 0.25, 0.5, 0.999, np.nan, -0.0, 1.5], np.float32)
    out = timed(convert, tf.constant(data), target)
    assert out.dtype == target
    np.testing.assert_array_equal(_f64(out), _f64(tf.cast(tf.constant(data), target)))
    assert np.isnan(_f64(out)[4]) and np.signbit(_f64(out)[5])


def test_float_to_int_saturate_clips(device, timed):
    data = np.array([-0.5, 0.0, 0.5, 1.0, 1.5, 1e6], np.float32)
    out = timed(convert, tf.constant(data), tf.uint8, saturate=True)
    np.testing.assert_array_equal(out.numpy(), [0, 0, 127, 255, 255, 255])


def test_int_narrowing_saturate(device, timed):
    data = np.array([-(2**31), -1, 0, 2**31 - 1], np.int32)
    out = timed(convert, tf.constant(data), tf.uint8, saturate=True)
    np.testing.assert_array_equal(out.numpy(), [0, 0, 0, 255])


def test_same_dtype_is_identity(device, timed):
    data = np.array([[0.1, 7.0, -3.0]], np.float32)  # out of range on purpose: nothing is touched
    np.testing.assert_array_equal(timed(convert, tf.constant(data), tf.float32).numpy(), data)


@pytest.mark.parametrize("shape", [(0, 0, 3), (7, 5, 3), (256, 256, 4)], ids=str)
def test_image_shapes_round_trip(device, timed, shape):
    """uint8 -> float32 -> uint8 gives back every pixel (256x256x4 is 1 MB of float32)."""
    data = np.random.default_rng(0).integers(0, 256, shape).astype(np.uint8)
    as_float = timed(convert, tf.constant(data), tf.float32)
    assert tuple(as_float.shape) == shape
    np.testing.assert_allclose(as_float.numpy(), data / 255.0, rtol=1e-6)
    back = timed(convert, as_float, tf.uint8)
    np.testing.assert_array_equal(back.numpy(), data)


@pytest.mark.parametrize("image,target", [(["a"], tf.uint8), ([1.0 + 1j], tf.float32), ([0.5], tf.string)])
def test_refuses_non_numeric_types(device, timed, image, target):
    """Documented: an AttributeError when a dtype is neither floating point nor integer."""
    with pytest.raises(AttributeError):
        timed(convert, tf.constant(image), target)
