"""tf.compat.v1.image.resize_nearest_neighbor: copies of the nearest source pixel, against NumPy indexing."""

import numpy as np
import pytest
import tensorflow as tf


def _src_index(out: int, inp: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """TensorFlow's nearest-neighbour source indices, with its float32 scale."""
    dst = np.arange(out, dtype=np.float32)
    if align_corners and out > 1:
        scale = np.float32(inp - 1) / np.float32(out - 1)
        idx = np.floor(dst * scale + np.float32(0.5))  # round half away from zero, values >= 0
    else:
        scale = np.float32(inp) / np.float32(out)
        idx = np.floor((dst + np.float32(0.5)) * scale) if half_pixel else np.floor(dst * scale)
    return np.clip(idx.astype(np.int64), 0, inp - 1)


def _reference(
    x: np.ndarray, size: tuple, align_corners: bool = False, half_pixel: bool = False
) -> np.ndarray:
    rows = _src_index(size[0], x.shape[1], align_corners, half_pixel)
    cols = _src_index(size[1], x.shape[2], align_corners, half_pixel)
    return x[:, rows][:, :, cols]


DTYPES = [tf.uint8, tf.int32, tf.float16, tf.bfloat16, tf.float32, tf.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_resize_nearest_dtypes(device, timed, dtype):
    x = np.random.default_rng(0).integers(0, 100, (2, 5, 7, 3)).astype(np.float64)
    xt = tf.cast(tf.constant(x), dtype)
    out = timed(tf.compat.v1.image.resize_nearest_neighbor, xt, [8, 11])
    assert out.dtype == dtype and tuple(out.shape) == (2, 8, 11, 3)
    # Small integers are exact in every dtype: the result is a plain copy.
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), _reference(x, (8, 11)))


@pytest.mark.parametrize(
    ("size", "align_corners", "half_pixel"),
    [
        ((10, 14), False, False),
        ((10, 14), True, False),
        ((10, 14), False, True),
        ((3, 2), False, False),
        ((3, 2), True, False),
        ((3, 2), False, True),
        ((1, 1), True, False),
    ],
    ids=["up", "up_align", "up_half_pixel", "down", "down_align", "down_half_pixel", "to_1x1_align"],
)
def test_resize_nearest_modes(device, timed, size, align_corners, half_pixel):
    x = np.arange(1 * 5 * 7 * 2, dtype=np.float32).reshape(1, 5, 7, 2)
    out = timed(
        tf.compat.v1.image.resize_nearest_neighbor,
        tf.constant(x),
        list(size),
        align_corners=align_corners,
        half_pixel_centers=half_pixel,
    )
    np.testing.assert_array_equal(out.numpy(), _reference(x, size, align_corners, half_pixel))


@pytest.mark.parametrize(
    ("shape", "size"),
    [
        ((0, 4, 4, 1), (8, 8)),
        ((1, 1, 1, 1), (3, 5)),
        ((3, 13, 9, 5), (7, 20)),
        ((2, 128, 128, 8), (256, 128)),
    ],
    ids=["empty_batch", "1x1", "odd", "1MB"],
)
def test_resize_nearest_shapes(device, timed, shape, size):
    """(2, 128, 128, 8) float32 is 1 MB in, 2 MB out."""
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    out = timed(tf.compat.v1.image.resize_nearest_neighbor, tf.constant(x), list(size))
    assert tuple(out.shape) == (shape[0], *size, shape[3])
    np.testing.assert_array_equal(out.numpy(), _reference(x, size))


def test_resize_nearest_special_values(device, timed):
    # Copies keep NaN, infinities and the sign of zero.
    x = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32).reshape(1, 2, 2, 1)
    out = timed(tf.compat.v1.image.resize_nearest_neighbor, tf.constant(x), [4, 4]).numpy()
    ref = _reference(x, (4, 4))
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(ref))


def test_resize_nearest_gradient(device, timed):
    # The gradient adds each output gradient to the source pixel it was copied from.
    x = tf.constant(np.zeros((1, 3, 4, 1), np.float32))
    g = np.random.default_rng(2).standard_normal((1, 7, 5, 1)).astype(np.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(timed(tf.compat.v1.image.resize_nearest_neighbor, x, [7, 5]) * g)
    grad = tape.gradient(loss, x).numpy()
    expected = np.zeros((1, 3, 4, 1), np.float64)
    rows, cols = _src_index(7, 3, False, False), _src_index(5, 4, False, False)
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            expected[0, r, c, 0] += g[0, i, j, 0]
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["align_and_half_pixel", "negative_size", "size_rank"])
def test_resize_nearest_refusals(device, timed, case):
    x = tf.constant(np.ones((1, 4, 4, 1), np.float32))
    kwargs, size = {}, [8, 8]
    if case == "align_and_half_pixel":
        kwargs = {"align_corners": True, "half_pixel_centers": True}
    elif case == "negative_size":
        size = [-2, 3]
    else:
        size = [8, 8, 8]
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.compat.v1.image.resize_nearest_neighbor, x, size, **kwargs)
