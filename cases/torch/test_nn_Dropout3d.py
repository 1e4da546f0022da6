"""torch.nn.Dropout3d: construction and channel-wise dropout (timed): each (sample, channel) volume
is either all zero or scaled by 1/(1-p), at about rate p; identity in eval mode."""

import numpy as np
import pytest
import torch
from torch import nn


def _np(t):
    return t.detach().double().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _build(p, **kwargs):
    return nn.Dropout3d(p, **kwargs)


def _positive(shape, dtype, device, seed=0):
    data = np.random.default_rng(seed).uniform(0.5, 2.0, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


def _check_channels(out, x, p):
    """Every channel volume is dropped entirely or kept and scaled; returns the kept mask."""
    o, ref = _np(out), _np(x)
    n, c = ref.shape[:2]
    vol = int(np.prod(ref.shape[2:]))
    o, ref = o.reshape(n, c, vol), ref.reshape(n, c, vol)
    dropped = np.all(o == 0, axis=-1)
    scale = 1.0 / (1.0 - p)
    kept = ~dropped
    rtol = 1e-2 if out.dtype in (torch.float16, torch.bfloat16) else 1e-6
    np.testing.assert_allclose(o[kept], ref[kept] * scale, rtol=rtol)
    return kept


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "shape,p",
    [((2, 3, 2, 3, 4), 0.5), ((1, 5, 1, 1, 1), 0.2), ((0, 3, 2, 2, 2), 0.5), ((16, 64, 8, 16, 16), 0.3)],
    ids=["small", "unit_volume", "empty", "large"],
)
def test_dropout3d_training(device, timed, dtype, shape, p):
    m = _build(p)
    assert m.training and m.p == p
    x = _positive(shape, dtype, device)
    torch.manual_seed(0)
    out = timed(m, x)
    assert out.shape == x.shape and out.dtype == dtype
    kept = _check_channels(out, x, p)
    if kept.size >= 1000:
        assert abs((1 - kept.mean()) - p) < 0.05


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
def test_dropout3d_eval_is_identity(device, timed, dtype):
    m = _build(0.9).eval()
    x = _positive((2, 4, 3, 3, 3), dtype, device)
    out = timed(m, x)
    assert torch.equal(out, x)


@pytest.mark.parametrize("p,expected", [(0.0, "identity"), (1.0, "zeros")])
def test_dropout3d_extreme_p(device, timed, p, expected):
    m = _build(p)
    x = _positive((2, 3, 2, 2, 2), torch.float32, device)
    out = timed(m, x)
    assert torch.equal(out, x if expected == "identity" else torch.zeros_like(x))


def test_dropout3d_unbatched_and_inplace(device, timed):
    m = _build(0.5)
    x = _positive((6, 2, 3, 4), torch.float64, device)  # (C, D, H, W)
    out = timed(m, x)
    kept = _check_channels(out.unsqueeze(0), x.unsqueeze(0), 0.5)
    assert kept.shape == (1, 6)
    inplace = _build(0.5, inplace=True)
    y = _positive((2, 3, 2, 2, 2), torch.float64, device)
    y0 = y.clone()
    out = timed.once(inplace, y)
    assert out.data_ptr() == y.data_ptr() or torch.equal(out, y)
    _check_channels(out, y0, 0.5)


def test_dropout3d_gradient_matches_mask(device, timed):
    m = _build(0.5)
    x = _positive((3, 4, 2, 2, 2), torch.float64, device).requires_grad_()
    out = timed.once(m, x)
    out.sum().backward()
    kept = (out.detach() != 0).double()
    np.testing.assert_allclose(_np(x.grad), _np(kept) * 2.0)


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout3d_rejects_bad_p(device, timed, p):
    with pytest.raises(ValueError):
        timed.once(nn.Dropout3d, p)
