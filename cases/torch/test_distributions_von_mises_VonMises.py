"""torch.distributions.von_mises.VonMises (the study's torch.von_mises.VonMises): construction (timed),
log_prob and moments against SciPy, and samples on the circle."""

import numpy as np
import pytest
import scipy.special
import scipy.stats
import torch
from torch.distributions.von_mises import VonMises


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


# torch evaluates log I0 by a polynomial fit (Abramowitz & Stegun 9.8, relative error ~1e-7)
TOLS = {torch.float32: 1e-5, torch.float64: 1e-7}


def _construct(loc, concentration, **kwargs):
    dist = VonMises(loc, concentration, **kwargs)
    return dist.loc, dist.concentration


def _build(timed, loc, concentration, **kwargs):
    """Construction timed through the mode, as a function of the parameters returning the
    distribution's tensors; those must equal an eager construction's, which the checks then use."""
    tensors = timed(_construct, loc, concentration, **kwargs)
    dist = VonMises(loc, concentration, **kwargs)
    torch.testing.assert_close(tensors, (dist.loc, dist.concentration))
    return dist


def _t(values, dtype, device):
    return torch.tensor(values, dtype=dtype, device=device)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("concentration", [0.01, 1.0, 5.0, 50.0], ids=lambda k: f"k{k}")
def test_von_mises_log_prob_and_moments(device, timed, dtype, concentration):
    loc = _t([0.3, -2.0, 3.0], dtype, device)
    kappa = torch.full_like(loc, concentration)
    dist = _build(timed, loc, kappa)
    x = _t(np.linspace(-np.pi, np.pi, 7)[:, None] * np.ones(3), dtype, device)
    expected = scipy.stats.vonmises.logpdf(
        _np(x).astype(np.float64), concentration, loc=_np(loc).astype(np.float64)
    )
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(dist.log_prob(x)), expected, rtol=tol * 10, atol=tol * 10)
    assert dist.log_prob(x).dtype == dtype and dist.batch_shape == (3,) and dist.event_shape == ()
    np.testing.assert_array_equal(_np(dist.mean), _np(loc))
    ratio = scipy.special.i1e(concentration) / scipy.special.i0e(concentration)
    np.testing.assert_allclose(_np(dist.variance), np.full(3, 1 - ratio), rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("concentration", [0.5, 4.0, 200.0], ids=lambda k: f"k{k}")
def test_von_mises_samples(device, timed, dtype, concentration):
    dist = _build(timed, _t(1.0, dtype, device), _t(concentration, dtype, device))
    samples = dist.sample((1 << 14,))
    assert samples.shape == (1 << 14,) and samples.dtype == dtype
    values = _np(samples).astype(np.float64)
    assert (values >= -np.pi).all() and (values < np.pi + 1e-6).all()
    mean_vector = np.mean(np.exp(1j * values))
    expected = scipy.special.i1e(concentration) / scipy.special.i0e(concentration)
    assert abs(abs(mean_vector) - expected) < 0.03
    assert abs(np.angle(mean_vector) - 1.0) < 0.06


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
def test_von_mises_log_prob_large(device, timed, dtype):
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.uniform(-np.pi, np.pi, 1 << 17)).to(device=device, dtype=dtype)
    kappa = torch.from_numpy(rng.uniform(0.1, 20, 1 << 17)).to(device=device, dtype=dtype)
    dist = _build(timed, torch.zeros_like(x), kappa)
    expected = scipy.stats.vonmises.logpdf(_np(x).astype(np.float64), _np(kappa).astype(np.float64))
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(dist.log_prob(x)), expected, rtol=tol * 10, atol=tol * 10)


def test_von_mises_broadcasts_parameters(device, timed):
    dist = _build(
        timed, _t([[0.0], [1.0]], torch.float64, device), _t([1.0, 2.0, 3.0], torch.float64, device)
    )
    assert dist.batch_shape == (2, 3)
    assert dist.sample((4,)).shape == (4, 2, 3)
    assert _build(timed, 0.5, 2.0).batch_shape == ()


def test_von_mises_validation(device, timed):
    with pytest.raises(ValueError):
        _build(timed, _t(0.0, torch.float32, device), _t(-1.0, torch.float32, device), validate_args=True)
    dist = _build(timed, _t(0.0, torch.float32, device), _t(1.0, torch.float32, device), validate_args=True)
    assert dist.log_prob(_t(4.0, torch.float32, device)).isfinite()  # support is the real line (periodic)
    with pytest.raises(ValueError):
        dist.log_prob(_t(float("nan"), torch.float32, device))


def test_von_mises_log_prob_gradient(device, timed):
    loc = _t([0.2, -0.4], torch.float64, device).requires_grad_()
    kappa = _t([1.5, 3.0], torch.float64, device).requires_grad_()
    x = _t([0.5, 0.1], torch.float64, device)
    assert torch.autograd.gradcheck(lambda a, b: _build(timed, a, b).log_prob(x), (loc, kappa))
