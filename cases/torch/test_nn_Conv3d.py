"""torch.nn.Conv3d: construction, weight layout, and the forward pass (timed) against a NumPy reference."""

import itertools

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (half types widened to float32)."""
    return (t.float() if t.dtype in (torch.bfloat16, torch.float16) else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-4, torch.float64: 1e-11, torch.float16: 1e-2, torch.bfloat16: 6e-2}


def _conv3d_ref(x, w, b, stride, padding, dilation, groups):
    """Direct 3-D cross-correlation in float64, summed over kernel offsets (einsum per offset/group)."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), *[(p, p) for p in padding]))
    w = w.astype(np.float64)
    n, _, *spatial = x.shape
    o, cg, *kernel = w.shape
    out_sp = [(s - d * (k - 1) - 1) // st + 1 for s, k, d, st in zip(spatial, kernel, dilation, stride)]
    out = np.zeros((n, o, *out_sp))
    og = o // groups
    for g in range(groups):
        xs, ws = x[:, g * cg : (g + 1) * cg], w[g * og : (g + 1) * og]
        for offs in itertools.product(*[range(k) for k in kernel]):
            sl = tuple(
                slice(i * d, i * d + st * m, st) for i, d, st, m in zip(offs, dilation, stride, out_sp)
            )
            patch = xs[(slice(None), slice(None), *sl)]
            out[:, g * og : (g + 1) * og] += np.einsum("ncdhw,oc->nodhw", patch, ws[(..., *offs)])
    if b is not None:
        out += b.astype(np.float64)[None, :, None, None, None]
    return out


def _build(device, dtype, *args, **kwargs):
    return torch.nn.Conv3d(*args, dtype=dtype, **kwargs).to(device)


def _tensor(shape, dtype, device, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(device=device, dtype=dtype)


CONFIGS = {
    "basic": ((2, 3, 3), {}, (2, 2, 5, 6, 7)),
    "stride_pad": ((3, 4, (3, 1, 2)), {"stride": (2, 1, 2), "padding": (1, 0, 1)}, (1, 3, 7, 5, 6)),
    "dilation_groups": ((4, 6, 2), {"dilation": 2, "groups": 2}, (1, 4, 6, 7, 5)),
    "no_bias": ((3, 2, 1), {"bias": False}, (2, 3, 3, 4, 5)),
    "empty_batch": ((2, 3, 3), {}, (0, 2, 5, 6, 7)),
    "large": ((8, 8, 3), {"padding": 1}, (2, 8, 16, 32, 32)),
}


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("name", list(CONFIGS))
def test_conv3d_forward(device, timed, dtype, name):
    args, kwargs, shape = CONFIGS[name]
    conv = _build(device, dtype, *args, **kwargs)
    in_c, out_c, k = args
    k = (k,) * 3 if isinstance(k, int) else k
    assert conv.weight.shape == (out_c, in_c // kwargs.get("groups", 1), *k)
    assert conv.weight.dtype == dtype and conv.weight.device.type == torch.device(device).type
    x = _tensor(shape, dtype, device)
    with torch.no_grad():
        y = timed(conv, x)
    pad = kwargs.get("padding", 0)
    expected = _conv3d_ref(
        _np(x),
        _np(conv.weight),
        None if conv.bias is None else _np(conv.bias),
        conv.stride,
        (pad,) * 3 if isinstance(pad, int) else pad,
        conv.dilation,
        conv.groups,
    )
    assert y.dtype == dtype and tuple(y.shape) == expected.shape
    tol = TOLS[dtype] * np.sqrt(conv.weight[0].numel())
    np.testing.assert_allclose(_np(y), expected, rtol=tol, atol=tol)


def test_conv3d_unbatched_and_same_padding(device, timed):
    conv = _build(device, torch.float64, 2, 3, 3, padding="same")
    x = _tensor((2, 4, 5, 6), torch.float64, device)
    y = timed(conv, x)
    assert y.shape == (3, 4, 5, 6)
    ref = _conv3d_ref(_np(x)[None], _np(conv.weight), _np(conv.bias), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1)
    np.testing.assert_allclose(_np(y), ref[0], rtol=1e-11, atol=1e-11)


def test_conv3d_init_bounds(device, timed):
    conv = _build(device, torch.float32, 4, 10, 3)
    bound = 1 / np.sqrt(4 * 27)
    for p in (conv.weight, conv.bias):
        assert -bound <= p.min().item() and p.max().item() <= bound
    x = _tensor((1, 4, 4, 5, 6), torch.float32, device)
    with torch.no_grad():
        y = timed(conv, x)
    ref = _conv3d_ref(_np(x), _np(conv.weight), _np(conv.bias), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1)
    np.testing.assert_allclose(_np(y), ref, rtol=1e-4, atol=1e-4)


def test_conv3d_invalid_arguments(device, timed):
    with pytest.raises(ValueError):
        torch.nn.Conv3d(3, 4, 3, groups=2)
    conv = _build(device, torch.float32, 3, 4, 3)
    with pytest.raises(RuntimeError):
        timed(conv, torch.zeros(1, 2, 5, 5, 5, device=device))
    with pytest.raises(RuntimeError):
        timed(conv, torch.zeros(1, 3, 2, 5, 5, device=device))


def test_conv3d_gradients(device, timed):
    conv = _build(device, torch.float64, 2, 2, 2, stride=2, padding=1)
    x = _tensor((1, 2, 3, 4, 3), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(conv, (x,), fast_mode=True)
    conv.zero_grad()
    out = timed(conv, x)
    out.sum().backward()
    np.testing.assert_allclose(_np(conv.bias.grad), np.full(2, out[0, 0].numel()))
