"""jax.random.normal: draws from a fixed key against scipy.stats.norm (a Kolmogorov-Smirnov test and
the first two moments) in float32 and float64, half precision by its moments, the same draws for the
same key and uncorrelated draws for split keys, shapes up to 1 MB and empty."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

jax.config.update("jax_enable_x64", True)

DRAWS = 20_000


def draw(key, shape, dtype):
    return jax.random.normal(key, shape, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_draws_follow_the_standard_normal(device, timed, dtype):
    drawn = timed(functools.partial(draw, shape=(DRAWS,), dtype=dtype), jax.random.key(0))
    assert drawn.dtype == jnp.dtype(dtype) and drawn.shape == (DRAWS,)
    out = np.asarray(drawn).astype(np.float64)
    assert np.isfinite(out).all()
    assert scipy.stats.kstest(out, scipy.stats.norm.cdf).pvalue > 1e-4
    assert abs(out.mean()) < 5 / np.sqrt(DRAWS)
    assert abs(out.std() - 1.0) < 5 / np.sqrt(2 * DRAWS)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_draws_keep_the_moments(device, timed, dtype):
    out = timed(functools.partial(draw, shape=(DRAWS,), dtype=dtype), jax.random.key(1))
    assert out.dtype == jnp.dtype(dtype)
    host = np.asarray(out).astype(np.float64)
    assert np.isfinite(host).all()
    assert abs(host.mean()) < 0.03 and abs(host.std() - 1.0) < 0.03


@pytest.mark.parametrize(
    "shape", [(), (0,), (3, 5), (512, 512)], ids=lambda s: "x".join(map(str, s)) or "scalar"
)
def test_shapes_and_determinism_per_key(device, timed, shape):
    sampler = functools.partial(draw, shape=shape, dtype="float32")
    first = np.asarray(timed(sampler, jax.random.key(7)))
    again = np.asarray(timed(sampler, jax.random.key(7)))
    other = np.asarray(timed(sampler, jax.random.key(8)))
    assert first.shape == shape and first.dtype == np.float32
    np.testing.assert_array_equal(first, again)
    if first.size:
        assert not np.array_equal(first, other)


def test_split_keys_draw_uncorrelated_streams(device, timed):
    keys = jax.random.split(jax.random.key(3), 4)
    out = np.asarray(timed(jax.vmap(functools.partial(draw, shape=(DRAWS,), dtype="float32")), keys))
    assert out.shape == (4, DRAWS)
    correlation = np.corrcoef(out.astype(np.float64))
    off_diagonal = correlation[~np.eye(4, dtype=bool)]
    assert np.abs(off_diagonal).max() < 5 / np.sqrt(DRAWS)
