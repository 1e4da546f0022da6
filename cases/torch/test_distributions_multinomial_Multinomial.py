"""torch.distributions.multinomial.Multinomial (the study's torch.multinomial): construct and sample
(timed through the mode), with moments and log_prob against SciPy."""

import numpy as np
import pytest
import scipy.stats
import torch
from torch.distributions import Multinomial


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _probs(k, dtype, device, seed=0, batch=()):
    p = np.random.default_rng(seed).uniform(0.1, 1.0, (*batch, k))
    return torch.from_numpy(p / p.sum(-1, keepdims=True)).to(device=device, dtype=dtype)


def _draw(total_count, sample_shape, **params):
    return Multinomial(total_count, **params).sample(sample_shape)


def _sample(timed, total_count, sample_shape=(), **params):
    """Construction and sampling, timed through the mode as one function of the parameters."""
    return timed(_draw, total_count, sample_shape, **params)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
@pytest.mark.parametrize(
    "total_count,k,sample_shape",
    [(1, 3, (100,)), (10, 2, (7,)), (25, 6, (5, 3)), (100, 10, (20000,))],
    ids=["one_trial", "binomial", "sample_matrix", "large"],
)
def test_multinomial_samples(device, timed, dtype, total_count, k, sample_shape):
    p = _probs(k, dtype, device)
    samples = _sample(timed, total_count, sample_shape, probs=p)
    assert samples.shape == (*sample_shape, k) and samples.dtype == dtype
    values = _np(samples)
    assert (values >= 0).all() and (values == np.round(values)).all()
    np.testing.assert_array_equal(values.sum(-1), np.full(sample_shape, total_count))
    n = int(np.prod(sample_shape))
    mean, expected = values.reshape(n, k).mean(0), total_count * _np(p)
    stderr = np.sqrt(total_count * _np(p) * (1 - _np(p)) / n)
    assert (np.abs(mean - expected) < 6 * stderr + 1e-9).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_multinomial_log_prob_against_scipy(device, timed, dtype):
    p = _probs(4, dtype, device, seed=1)
    samples = _sample(timed, 12, (50,), probs=p)
    dist = Multinomial(12, probs=p)
    expected = scipy.stats.multinomial.logpmf(_np(samples), 12, _np(p).astype(np.float64))
    rtol = 1e-5 if dtype == torch.float32 else 1e-10
    np.testing.assert_allclose(_np(dist.log_prob(samples)), expected, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(_np(dist.mean), 12 * _np(p), rtol=rtol)
    np.testing.assert_allclose(_np(dist.variance), 12 * _np(p) * (1 - _np(p)), rtol=rtol)


def test_multinomial_logits_and_unnormalised_probs(device, timed):
    weights = torch.tensor([1.0, 0.0, 3.0], dtype=torch.float64, device=device)
    samples = _sample(timed, 8, (200,), probs=weights)
    assert (_np(samples)[:, 1] == 0).all()
    logits = torch.log(weights)
    assert (_np(_sample(timed, 8, (200,), logits=logits))[:, 1] == 0).all()
    np.testing.assert_allclose(_np(Multinomial(8, logits=logits).probs), [0.25, 0.0, 0.75])


def test_multinomial_batched_parameters(device, timed):
    p = _probs(3, torch.float32, device, seed=2, batch=(4,))
    samples = _sample(timed, 5, (6,), probs=p)
    assert samples.shape == (6, 4, 3)
    assert (_np(samples).sum(-1) == 5).all()


def _mean(total_count, **params):
    return Multinomial(total_count, **params).mean


def _log_prob(dist, value):
    return dist.log_prob(value)


def test_multinomial_validation(device, timed):
    with pytest.raises(ValueError):
        timed(_mean, 3, probs=torch.tensor([-0.1, 1.1], device=device), validate_args=True)
    with pytest.raises(ValueError):
        timed(_mean, 3)
    dist = Multinomial(3, probs=torch.tensor([0.5, 0.5], device=device), validate_args=True)
    with pytest.raises(ValueError):  # the support check is sum <= total_count, with no negative counts
        timed(_log_prob, dist, torch.tensor([4.0, 0.0], device=device))
    with pytest.raises(ValueError):
        timed(_log_prob, dist, torch.tensor([-1.0, 4.0], device=device))
