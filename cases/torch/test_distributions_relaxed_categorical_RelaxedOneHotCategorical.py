"""torch.distributions.relaxed_categorical.RelaxedOneHotCategorical: construction (timed), samples on
the simplex with reparameterised gradients, and log_prob against the Concrete density written out
(Maddison et al. 2017, eq. 6)."""

import math

import numpy as np
import pytest
import torch
from scipy.special import logsumexp
from torch.distributions.relaxed_categorical import RelaxedOneHotCategorical


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _np(t):
    return t.detach().double().cpu().numpy()


def _construct(temperature, **kwargs):
    d = RelaxedOneHotCategorical(temperature, **kwargs)
    return d.temperature, d.logits, d.probs


def _build(timed, temperature, **kwargs):
    """Construction timed through the mode, as a function of the parameters returning the
    distribution's tensors; those must equal an eager construction's, which the checks then use."""
    tensors = timed(_construct, temperature, **kwargs)
    d = RelaxedOneHotCategorical(temperature, **kwargs)
    torch.testing.assert_close(tensors, (d.temperature, d.logits, d.probs))
    return d


def _probs(shape, dtype, device, seed=0):
    p = np.random.default_rng(seed).uniform(0.1, 1.0, shape)
    return torch.from_numpy(p / p.sum(-1, keepdims=True)).to(device=device, dtype=dtype)


def _concrete_log_density(y, probs, temp):
    k = y.shape[-1]
    log_p = np.log(probs)
    return (
        math.lgamma(k)
        + (k - 1) * np.log(temp)
        + np.sum(log_p - (temp + 1) * np.log(y), -1)
        - k * logsumexp(log_p - temp * np.log(y), axis=-1)
    )


TOLS = {torch.float32: 1e-4, torch.float64: 1e-10}


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "batch,k,sample_shape",
    [((), 2, (5,)), ((3,), 7, (4,)), ((2, 3), 4, ()), ((), 3, (0,)), ((64,), 1000, (4,))],
    ids=["two_classes", "odd", "batched", "no_samples", "large"],
)
def test_relaxed_one_hot_samples_and_log_prob(device, timed, dtype, batch, k, sample_shape):
    probs = _probs((*batch, k), dtype, device)
    temp = torch.tensor(0.7, dtype=dtype, device=device)
    d = _build(timed, temp, probs=probs)
    assert d.batch_shape == batch and d.event_shape == (k,)
    torch.manual_seed(0)
    y = d.rsample(sample_shape)
    assert y.shape == (*sample_shape, *batch, k) and y.dtype == dtype
    assert y.device.type == torch.device(device).type
    tol = TOLS[dtype]
    assert bool((y >= 0).all()) and bool((y <= 1).all())
    np.testing.assert_allclose(_np(y.sum(-1)), np.ones((*sample_shape, *batch)), rtol=tol * 10, atol=tol * 10)
    if y.numel() == 0:
        return  # log_prob of an empty sample batch: see test_relaxed_one_hot_log_prob_empty_samples
    lp = d.log_prob(y)
    assert lp.shape == (*sample_shape, *batch)
    expected = _concrete_log_density(_np(y), np.broadcast_to(_np(probs), y.shape), 0.7)
    np.testing.assert_allclose(_np(lp), expected, rtol=tol * 100, atol=tol * 100 * k)


def test_relaxed_one_hot_log_prob_empty_samples(device, timed):
    d = _build(timed, torch.tensor(0.5, device=device), probs=_probs((3,), torch.float32, device))
    lp = d.log_prob(torch.empty(0, 3, device=device))
    assert lp.shape == (0,)


def test_relaxed_one_hot_logits_match_probs(device, timed):
    probs = _probs((4,), torch.float64, device)
    by_probs = _build(timed, torch.tensor(0.5, dtype=torch.float64, device=device), probs=probs)
    by_logits = _build(timed, torch.tensor(0.5, dtype=torch.float64, device=device), logits=probs.log() + 3.0)
    np.testing.assert_allclose(_np(by_logits.probs), _np(probs), rtol=1e-12)
    y = by_probs.sample((6,))
    np.testing.assert_allclose(_np(by_logits.log_prob(y)), _np(by_probs.log_prob(y)), rtol=1e-10)


@pytest.mark.parametrize("temperature", [0.05, 5.0], ids=["cold", "hot"])
def test_relaxed_one_hot_temperature_limits(device, timed, temperature):
    probs = torch.tensor([0.6, 0.3, 0.1], dtype=torch.float64, device=device)
    d = _build(timed, torch.tensor(temperature, dtype=torch.float64, device=device), probs=probs)
    torch.manual_seed(1)
    y = _np(d.sample((4000,)))
    if temperature < 1:
        # near one-hot, and the argmax follows the class probabilities
        assert np.mean(y.max(-1) > 0.9) > 0.8
        np.testing.assert_allclose(np.bincount(y.argmax(-1), minlength=3) / 4000, [0.6, 0.3, 0.1], atol=0.04)
    else:
        assert np.all(y.max(-1) < 0.9) and abs(y.mean() - 1 / 3) < 1e-12 + 1e-2


def test_relaxed_one_hot_rsample_gradients(device, timed):
    logits = torch.tensor([0.2, -0.4, 1.0], dtype=torch.float64, device=device, requires_grad=True)
    d = _build(timed, torch.tensor(0.8, dtype=torch.float64, device=device), logits=logits)
    assert d.has_rsample
    torch.manual_seed(2)
    y = d.rsample((10,))
    (y[:, 0] * 2 + y[:, 2]).sum().backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()
    assert abs(logits.grad.sum().item()) < 1e-10  # invariance to shifting all logits


def test_relaxed_one_hot_validation(device, timed):
    temp = torch.tensor(0.5, device=device)
    with pytest.raises(ValueError):
        _build(timed, temp, probs=torch.tensor([0.5, -0.5], device=device), validate_args=True)
    with pytest.raises(ValueError):
        _build(timed, temp)
    d = _build(timed, temp, probs=torch.tensor([0.5, 0.5], device=device), validate_args=True)
    with pytest.raises(ValueError):
        d.log_prob(torch.tensor([0.7, 0.7], device=device))
