"""torch.nn.Conv2d: construction, weight layout and init, and the forward pass (timed) against NumPy."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype in (torch.bfloat16, torch.float16) else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-4, torch.float64: 1e-11, torch.float16: 1e-2, torch.bfloat16: 6e-2}


def _conv2d_ref(x, w, b, stride, padding, dilation, groups):
    """Direct 2-D cross-correlation in float64: one einsum per kernel offset and group."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    ph, pw = padding
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs, ws = x[:, g * cg : (g + 1) * cg], w[g * og : (g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                hi, wj = i * dilation[0], j * dilation[1]
                patch = xs[:, :, hi : hi + stride[0] * oh : stride[0], wj : wj + stride[1] * ow : stride[1]]
                out[:, g * og : (g + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    if b is not None:
        out += b.astype(np.float64)[None, :, None, None]
    return out


def _build(device, dtype, *args, **kwargs):
    return torch.nn.Conv2d(*args, dtype=dtype, **kwargs).to(device)


def _tensor(shape, dtype, device, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(device=device, dtype=dtype)


CONFIGS = {
    "basic": ((3, 4, 3), {}, (2, 3, 9, 11)),
    "stride_pad": ((3, 5, (3, 2)), {"stride": 2, "padding": (1, 2)}, (2, 3, 10, 7)),
    "dilation_groups": ((4, 6, 3), {"dilation": 2, "groups": 2, "padding": 1}, (1, 4, 12, 13)),
    "no_bias_1x1": ((8, 3, 1), {"bias": False}, (3, 8, 5, 5)),
    "empty_batch": ((3, 4, 3), {}, (0, 3, 9, 11)),
    "large": ((16, 16, 3), {"padding": 1}, (4, 16, 64, 64)),
}


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("name", list(CONFIGS))
def test_conv2d_forward(device, timed, dtype, name):
    args, kwargs, shape = CONFIGS[name]
    conv = _build(device, dtype, *args, **kwargs)
    in_c, out_c, k = args
    k = (k, k) if isinstance(k, int) else k
    assert conv.weight.shape == (out_c, in_c // kwargs.get("groups", 1), *k)
    assert conv.weight.dtype == dtype and conv.weight.device.type == torch.device(device).type
    x = _tensor(shape, dtype, device)
    with torch.no_grad():
        y = timed(conv, x)
    pad = kwargs.get("padding", 0)
    expected = _conv2d_ref(
        _np(x),
        _np(conv.weight),
        None if conv.bias is None else _np(conv.bias),
        conv.stride,
        (pad, pad) if isinstance(pad, int) else pad,
        conv.dilation,
        conv.groups,
    )
    assert y.dtype == dtype and tuple(y.shape) == expected.shape
    tol = TOLS[dtype] * np.sqrt(conv.weight[0].numel())
    np.testing.assert_allclose(_np(y), expected, rtol=tol, atol=tol)


def test_conv2d_same_padding_and_circular(device, timed):
    conv = _build(device, torch.float64, 2, 3, (3, 5), padding="same")
    x = _tensor((1, 2, 8, 9), torch.float64, device)
    y = timed(conv, x)
    assert y.shape == (1, 3, 8, 9)
    ref = _conv2d_ref(_np(x), _np(conv.weight), _np(conv.bias), (1, 1), (1, 2), (1, 1), 1)
    np.testing.assert_allclose(_np(y), ref, rtol=1e-11, atol=1e-11)
    circ = _build(device, torch.float64, 2, 3, 3, padding=1, padding_mode="circular")
    y = timed(circ, x)
    wrapped = np.pad(_np(x), ((0, 0), (0, 0), (1, 1), (1, 1)), mode="wrap")
    ref = _conv2d_ref(wrapped, _np(circ.weight), _np(circ.bias), (1, 1), (0, 0), (1, 1), 1)
    np.testing.assert_allclose(_np(y), ref, rtol=1e-11, atol=1e-11)


def test_conv2d_init_bounds(device, timed):
    conv = _build(device, torch.float32, 6, 10, 3)
    bound = 1 / np.sqrt(6 * 9)
    for p in (conv.weight, conv.bias):
        assert -bound <= p.min().item() and p.max().item() <= bound
    x = _tensor((2, 6, 7, 8), torch.float32, device)
    with torch.no_grad():
        y = timed(conv, x)
    ref = _conv2d_ref(_np(x), _np(conv.weight), _np(conv.bias), (1, 1), (0, 0), (1, 1), 1)
    np.testing.assert_allclose(_np(y), ref, rtol=1e-4, atol=1e-4)


def test_conv2d_invalid_arguments(device, timed):
    with pytest.raises(ValueError):
        torch.nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError):
        torch.nn.Conv2d(3, 4, 3, stride=2, padding="same")
    conv = _build(device, torch.float32, 3, 4, 3)
    with pytest.raises(RuntimeError):
        timed(conv, torch.zeros(1, 2, 8, 8, device=device))


def test_conv2d_gradients(device, timed):
    conv = _build(device, torch.float64, 2, 3, 3, stride=2, padding=1)
    x = _tensor((2, 2, 5, 6), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(conv, (x,))
    conv.zero_grad()
    timed(conv, x).sum().backward()
    np.testing.assert_allclose(_np(conv.bias.grad), np.full(3, 2 * 3 * 3.0))
