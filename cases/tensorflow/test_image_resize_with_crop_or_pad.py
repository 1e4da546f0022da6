"""tf.image.resize_with_crop_or_pad: central crop / zero pad against NumPy slicing and padding."""

import numpy as np
import pytest
import tensorflow as tf


def _reference(image: np.ndarray, th: int, tw: int) -> np.ndarray:
    """Crop centrally (extra row/column dropped at the end), then zero-pad centrally (extra at the end)."""
    h, w = image.shape[-3], image.shape[-2]
    top, left = max(h - th, 0) // 2, max(w - tw, 0) // 2
    cropped = image[..., top : top + min(h, th), left : left + min(w, tw), :]
    ch, cw = cropped.shape[-3], cropped.shape[-2]
    pad_top, pad_left = (th - ch) // 2, (tw - cw) // 2
    spatial = [(pad_top, th - ch - pad_top), (pad_left, tw - cw - pad_left), (0, 0)]
    pads = [(0, 0)] * (image.ndim - 3) + spatial
    return np.pad(cropped, pads)


DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.uint8, tf.int32]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_crop_or_pad_dtypes(device, timed, dtype):
    data = (np.arange(5 * 6 * 3) % 200 + 1).reshape(5, 6, 3)
    image = tf.constant(data, dtype)
    # Crop the height (5 -> 3) and pad the width (6 -> 9) at once.
    out = timed(tf.image.resize_with_crop_or_pad, image, 3, 9)
    expected = _reference(data, 3, 9)
    assert out.dtype == dtype and tuple(out.shape) == (3, 9, 3)
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), expected.astype(np.float64))


@pytest.mark.parametrize(
    "shape,target",
    [
        ((4, 4, 1), (4, 4)),  # unchanged
        ((7, 5, 2), (2, 3)),  # odd crops: the extra row/column goes at the end
        ((3, 2, 1), (8, 7)),  # odd pads
        ((2, 5, 7, 3), (6, 4)),  # a batch of images
        ((0, 5, 7, 3), (6, 4)),  # an empty batch
        ((512, 512, 1), (500, 530)),  # 1 MB float32
    ],
    ids=str,
)
def test_crop_or_pad_shapes(device, timed, shape, target):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = timed(tf.image.resize_with_crop_or_pad, tf.constant(data), *target)
    expected = _reference(data, *target)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_crop_or_pad_keeps_special_values(device, timed):
    data = np.array([[np.nan, -0.0], [np.inf, -np.inf]], np.float32).reshape(2, 2, 1)
    out = timed(tf.image.resize_with_crop_or_pad, tf.constant(data), 4, 2).numpy()
    expected = _reference(data, 4, 2)
    # Bit for bit: NaN stays NaN, -0.0 keeps its sign, the padding is +0.0.
    np.testing.assert_array_equal(out.view(np.uint32), expected.view(np.uint32))


def test_crop_or_pad_gradient(device, timed):
    data = np.arange(12, dtype=np.float32).reshape(3, 4, 1)
    x = tf.constant(data)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = timed(tf.image.resize_with_crop_or_pad, x, 5, 2)
        loss = tf.reduce_sum(y)
    # Only the kept (central) pixels receive gradient 1.
    expected = np.zeros_like(data)
    expected[:, 1:3, :] = 1.0
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), expected)


@pytest.mark.parametrize(
    "shape,target",
    [
        ((3, 3, 1), (0, 2)),
        ((3, 3, 1), (2, -1)),
        ((3, 3), (2, 2)),
        ((1, 1, 3, 3, 1), (2, 2)),
        ((4, 0, 0, 1), (2, 3)),  # documented: the inner 3 dims must be > 0
    ],
    ids=["zero_height", "negative_width", "rank2", "rank5", "empty_image"],
)
def test_crop_or_pad_refuses_bad_input(device, timed, shape, target):
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.image.resize_with_crop_or_pad, tf.zeros(shape), *target)
