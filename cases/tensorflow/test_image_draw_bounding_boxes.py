"""tf.image.draw_bounding_boxes: box outlines painted into images, against an independent NumPy drawing."""

import numpy as np
import pytest
import tensorflow as tf


def _reference(images, boxes, colors):
    """Outline of each box: rows/cols are trunc(coord * (size - 1)), clipped; colors cycle over boxes."""
    out = images.astype(np.float64).copy()
    _, height, width, depth = images.shape
    for b in range(images.shape[0]):
        for i, (y0, x0, y1, x1) in enumerate(boxes[b].astype(np.float64)):
            r0, r1 = int(y0 * (height - 1)), int(y1 * (height - 1))
            c0, c1 = int(x0 * (width - 1)), int(x1 * (width - 1))
            if r0 > r1 or c0 > c1 or r1 < 0 or c1 < 0 or r0 >= height or c0 >= width:
                continue
            color = colors[i % len(colors)][:depth]
            rs, re_ = max(r0, 0), min(r1, height - 1)
            cs, ce = max(c0, 0), min(c1, width - 1)
            if r0 >= 0:
                out[b, r0, cs : ce + 1] = color
            if r1 < height:
                out[b, r1, cs : ce + 1] = color
            if c0 >= 0:
                out[b, rs : re_ + 1, c0] = color
            if c1 < width:
                out[b, rs : re_ + 1, c1] = color
    return out


def _case(batch, height, width, depth, nboxes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.uniform(0, 1, (batch, height, width, depth)).astype(dtype)
    corners = np.sort(rng.uniform(-0.1, 1.1, (batch, nboxes, 2, 2)), axis=2)
    boxes = np.stack([corners[..., 0, 0], corners[..., 0, 1], corners[..., 1, 0], corners[..., 1, 1]], -1)
    colors = rng.uniform(0, 1, (3, 4))
    return images, boxes.astype(np.float32), colors.astype(np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("depth", [1, 3, 4], ids=lambda d: f"depth{d}")
@pytest.mark.parametrize("size", [(2, 7, 9, 4), (1, 1, 1, 1), (2, 400, 360, 3)], ids=str)
def test_draw_matches_reference(device, timed, dtype, depth, size):
    batch, height, width, nboxes = size
    images, boxes, colors = _case(batch, height, width, depth, nboxes, dtype)
    out = timed(tf.image.draw_bounding_boxes, tf.constant(images), tf.constant(boxes), tf.constant(colors))
    assert out.dtype == tf.as_dtype(dtype) and tuple(out.shape) == images.shape
    expected = _reference(images, boxes, colors).astype(dtype)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_draw_known_outline(device, timed):
    images = tf.zeros((1, 5, 6, 1), tf.float32)
    boxes = tf.constant([[[0.1, 0.2, 0.7, 0.9]]], tf.float32)  # rows 0..2, cols 1..4
    out = timed(tf.image.draw_bounding_boxes, images, boxes, tf.constant([[1.0, 0.0, 0.0, 1.0]]))
    expected = np.zeros((5, 6))
    expected[0, 1:5] = expected[2, 1:5] = expected[0:3, 1] = expected[0:3, 4] = 1.0
    np.testing.assert_array_equal(out.numpy()[0, :, :, 0], expected)


def test_draw_no_boxes_is_identity(device, timed):
    images = tf.random.stateless_uniform((2, 8, 8, 3), seed=(1, 2))
    out = timed(
        tf.image.draw_bounding_boxes, images, tf.zeros((2, 0, 4)), tf.constant([[1.0, 1.0, 1.0, 1.0]])
    )
    np.testing.assert_array_equal(out.numpy(), images.numpy())


def test_draw_rejects_bad_box_shape(device, timed):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(tf.image.draw_bounding_boxes, tf.zeros((1, 4, 4, 3)), tf.zeros((1, 2, 3)), tf.ones((1, 4)))
