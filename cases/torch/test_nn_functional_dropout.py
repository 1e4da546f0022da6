"""torch.nn.functional.dropout: zero elements with probability p and scale the rest by 1/(1-p)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _ones_like_pattern(shape, dtype, device):
    data = np.random.default_rng(0).uniform(1, 2, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


def _check_scaled_mask(x, out, p):
    xs, os = np.atleast_1d(_np(x).astype(np.float64)), np.atleast_1d(_np(out).astype(np.float64))
    kept = os != 0
    scaled = torch.from_numpy(xs / (1 - p)).to(x.dtype).double().numpy() if p < 1 else xs * 0
    np.testing.assert_allclose(os[kept], scaled[kept], rtol=1e-2 if x.element_size() == 2 else 1e-6)
    return kept


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_statistics(device, timed, dtype, p):
    x = _ones_like_pattern((1 << 19,), dtype, device)
    out = timed(F.dropout, x, p=p, training=True)
    assert out.dtype == dtype and out.shape == x.shape
    kept = _check_scaled_mask(x, out, p)
    n = kept.size
    assert abs(kept.mean() - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
@pytest.mark.parametrize("shape", [(0,), (), (7,), (3, 5, 11)], ids=["empty", "scalar", "odd", "3d"])
def test_dropout_shapes(device, timed, dtype, shape):
    x = _ones_like_pattern(shape, dtype, device)
    out = timed(F.dropout, x, p=0.3)
    assert out.shape == x.shape and out.dtype == dtype
    _check_scaled_mask(x, out, 0.3)


@pytest.mark.parametrize("p,training", [(0.0, True), (0.5, False), (1.0, True)], ids=["p0", "eval", "p1"])
def test_dropout_limits(device, timed, p, training):
    x = _ones_like_pattern((1000,), torch.float32, device)
    out = timed(F.dropout, x, p=p, training=training)
    expected = np.zeros(1000) if p == 1.0 else _np(x)
    np.testing.assert_array_equal(_np(out), expected)


def test_dropout_inplace(device, timed):
    x = _ones_like_pattern((4096,), torch.float32, device)
    before = x.clone()
    out = timed.once(F.dropout, x, p=0.5, inplace=True)
    assert torch.equal(out, x)
    kept = _check_scaled_mask(before, x, 0.5)
    assert 0 < kept.sum() < kept.size


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_rejects_invalid_p(device, timed, p):
    with pytest.raises(ValueError):
        timed(F.dropout, torch.ones(3, device=device), p=p)


def test_dropout_gradient_uses_the_same_mask(device, timed):
    x = _ones_like_pattern((2048,), torch.float64, device).requires_grad_()
    out = timed.once(F.dropout, x, p=0.25)
    out.sum().backward()
    kept = _np(out) != 0
    np.testing.assert_allclose(_np(x.grad), np.where(kept, 1 / 0.75, 0.0), rtol=1e-12)


def test_dropout_seeded_is_reproducible(device, timed):
    x = _ones_like_pattern((1024,), torch.float32, device)
    torch.manual_seed(7)
    first = timed.once(F.dropout, x, p=0.5)
    torch.manual_seed(7)
    second = timed.once(F.dropout, x, p=0.5)
    assert torch.equal(first, second)
