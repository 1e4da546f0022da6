"""torch.nn.PixelUnshuffle: (*, C, H*r, W*r) -> (*, C*r*r, H, W) against NumPy reshape/transpose; refusals."""

import numpy as np
import pytest
import torch
from torch import nn

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _np(t: torch.Tensor) -> np.ndarray:
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _tensor(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> torch.Tensor:
    data = np.random.default_rng(0).standard_normal(shape) * 100
    return torch.from_numpy(data).to(device=device, dtype=dtype)


def _unshuffle(a: np.ndarray, r: int) -> np.ndarray:
    """The documented rearrangement: out[..., c*r*r + i*r + j, h, w] = in[..., c, h*r + i, w*r + j]."""
    *batch, c, hr, wr = a.shape
    h, w = hr // r, wr // r
    blocks = a.reshape(*batch, c, h, r, w, r)
    nb = len(batch)
    order = (*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)  # (..., c, i, j, h, w)
    return blocks.transpose(order).reshape(*batch, c * r * r, h, w)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape,r", [((2, 3, 4, 6), 2), ((16, 4, 64, 64), 4)], ids=["small", "large"])
def test_pixel_unshuffle_values(device, timed, dtype, shape, r):
    module = nn.PixelUnshuffle(r)
    x = _tensor(shape, dtype, device)
    out = timed(module, x)
    n, c, h, w = shape
    assert out.shape == (n, c * r * r, h // r, w // r) and out.dtype == dtype
    np.testing.assert_array_equal(_np(out), _unshuffle(_np(x), r))


@pytest.mark.parametrize("dtype", [torch.int64, torch.float64], ids=_ids)
def test_pixel_unshuffle_odd_factor(device, timed, dtype):
    x = _tensor((1, 1, 9, 15), dtype, device)
    out = timed(nn.PixelUnshuffle(3), x)
    assert out.shape == (1, 9, 3, 5) and out.dtype == dtype
    np.testing.assert_array_equal(_np(out), _unshuffle(_np(x), 3))


def test_pixel_unshuffle_hand_example(device, timed):
    # A 1x1x4x4 ramp with r=2: channel k = i*2 + j holds the pixels at (2h + i, 2w + j).
    x = torch.arange(16.0, device=device).reshape(1, 1, 4, 4)
    out = timed(nn.PixelUnshuffle(2), x)
    expected = [
        [[0.0, 2.0], [8.0, 10.0]],
        [[1.0, 3.0], [9.0, 11.0]],
        [[4.0, 6.0], [12.0, 14.0]],
        [[5.0, 7.0], [13.0, 15.0]],
    ]
    assert out.tolist() == [expected]


@pytest.mark.parametrize(
    "shape", [(0, 3, 4, 4), (2, 0, 4, 4), (2, 3, 0, 4)], ids=["empty_batch", "empty_channels", "empty_height"]
)
def test_pixel_unshuffle_empty(device, timed, shape):
    x = torch.zeros(shape, device=device)
    out = timed(nn.PixelUnshuffle(2), x)
    n, c, h, w = shape
    # The documented output shape holds for empty inputs too.
    assert tuple(out.shape) == (n, c * 4, h // 2, w // 2)


@pytest.mark.parametrize("shape", [(3, 4, 6), (2, 2, 3, 4, 6)], ids=["unbatched", "two_batch_dims"])
def test_pixel_unshuffle_batch_dims(device, timed, shape):
    x = _tensor(shape, torch.float32, device)
    out = timed(nn.PixelUnshuffle(2), x)
    np.testing.assert_array_equal(_np(out), _unshuffle(_np(x), 2))


def test_pixel_unshuffle_special_values_and_factor_one(device, timed):
    data = np.array([[[[-0.0, np.nan], [np.inf, -np.inf]]]])
    x = torch.from_numpy(data).to(device)
    out = _np(timed(nn.PixelUnshuffle(2), x)).ravel()
    np.testing.assert_array_equal(out, data.ravel())
    assert np.signbit(out[0])
    same = timed(nn.PixelUnshuffle(1), x)  # r = 1 is the identity
    np.testing.assert_array_equal(_np(same), data)


def test_pixel_unshuffle_inverts_pixel_shuffle(device, timed):
    x = _tensor((2, 8, 5, 3), torch.float64, device)
    up = nn.PixelShuffle(2)(x)
    out = timed(nn.PixelUnshuffle(2), up)
    np.testing.assert_array_equal(_np(out), _np(x))


def test_pixel_unshuffle_gradient(device, timed):
    x = _tensor((1, 2, 4, 6), torch.float64, device).requires_grad_()
    weights = torch.arange(48, dtype=torch.float64, device=device).reshape(1, 8, 2, 3)
    out = timed(nn.PixelUnshuffle(2), x)
    (grad,) = torch.autograd.grad((out * weights).sum(), x)
    # A permutation: the gradient is the upstream gradient put back (pixel shuffle of the weights).
    np.testing.assert_array_equal(_np(grad), _np(nn.PixelShuffle(2)(weights)))


@pytest.mark.parametrize(
    "shape,r",
    [
        ((1, 1, 5, 4), 2),
        ((1, 1, 4, 5), 2),
        ((0, 1, 5, 4), 2),
        ((4, 4), 2),
        ((1, 1, 4, 4), 0),
        ((1, 1, 4, 4), -2),
    ],
    ids=[
        "height_indivisible",
        "width_indivisible",
        "empty_indivisible",
        "two_dims",
        "zero_factor",
        "negative_factor",
    ],
)
def test_pixel_unshuffle_refusals(device, timed, shape, r):
    x = torch.ones(shape, device=device)
    # Documented preconditions: >= 3 dims, a positive factor dividing H and W (checked for empty input too).
    with pytest.raises(RuntimeError):
        timed(nn.PixelUnshuffle(r), x)
