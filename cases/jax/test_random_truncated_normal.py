"""jax.random.truncated_normal: draws from a fixed key against scipy.stats.truncnorm (a
Kolmogorov-Smirnov test and the first two moments) over dtypes and bounds, infinite and one-sided
bounds, every draw inside its bounds, the same draws for the same key, shapes up to 1 MB and empty."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

jax.config.update("jax_enable_x64", True)

BOUNDS = [(-0.3, 0.3), (-2.0, 2.0), (0.5, 3.0), (-np.inf, 1.0), (-1.0, np.inf)]
DRAWS = 20_000


def draw(key, lower, upper, shape, dtype):
    return jax.random.truncated_normal(key, lower, upper, shape, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bounds", BOUNDS, ids=lambda b: f"{b[0]}_{b[1]}")
def test_draws_follow_scipys_truncated_normal(device, timed, dtype, bounds):
    lower, upper = bounds
    sampler = functools.partial(draw, lower=lower, upper=upper, shape=(DRAWS,), dtype=dtype)
    drawn = timed(sampler, jax.random.key(0))
    assert drawn.dtype == jnp.dtype(dtype) and drawn.shape == (DRAWS,)
    out = np.asarray(drawn).astype(np.float64)
    reference = scipy.stats.truncnorm(lower, upper)
    assert ((out >= lower) & (out <= upper)).all()
    assert scipy.stats.kstest(out, reference.cdf).pvalue > 1e-4
    assert abs(out.mean() - reference.mean()) < 5 * reference.std() / np.sqrt(DRAWS)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_draws_stay_in_bounds_with_the_right_mean(device, timed, dtype):
    sampler = functools.partial(draw, lower=-0.5, upper=2.0, shape=(DRAWS,), dtype=dtype)
    out = timed(sampler, jax.random.key(1))
    assert out.dtype == jnp.dtype(dtype)
    host = np.asarray(out).astype(np.float64)
    assert ((host >= -0.5) & (host <= 2.0)).all()
    reference = scipy.stats.truncnorm(-0.5, 2.0)
    assert abs(host.mean() - reference.mean()) < 0.02 and abs(host.std() - reference.std()) < 0.02


@pytest.mark.parametrize("shape", [(0,), (3, 5), (512, 512)], ids=lambda s: "x".join(map(str, s)))
def test_shapes_and_determinism_per_key(device, timed, shape):
    sampler = functools.partial(draw, lower=-1.0, upper=1.0, shape=shape, dtype="float32")
    first = np.asarray(timed(sampler, jax.random.key(7)))
    again = np.asarray(timed(sampler, jax.random.key(7)))
    other = np.asarray(timed(sampler, jax.random.key(8)))
    assert first.shape == shape and first.dtype == np.float32
    np.testing.assert_array_equal(first, again)
    if first.size:
        assert not np.array_equal(first, other) and np.abs(first).max() <= 1.0


def test_array_bounds_broadcast_per_element(device, timed):
    lower = jnp.asarray([-1.0, 0.0, 2.0])
    upper = jnp.asarray([1.0, 0.25, 2.5])
    out = np.asarray(
        timed(
            lambda k, lo, hi: jax.random.truncated_normal(k, lo, hi, (4000, 3)),
            jax.random.key(3),
            lower,
            upper,
        )
    )
    assert ((out >= np.asarray(lower)) & (out <= np.asarray(upper))).all()
    np.testing.assert_allclose(
        out.mean(axis=0), scipy.stats.truncnorm([-1.0, 0.0, 2.0], [1.0, 0.25, 2.5]).mean(), atol=0.03
    )
