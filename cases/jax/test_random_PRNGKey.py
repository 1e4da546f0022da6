"""jax.random.PRNGKey: legacy raw uint32 keys from integer seeds, checked against the threefry seeding
rule (high and low 32 bits of the seed), determinism of the draws it feeds, traced seeds and impl."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize(
    "seed", [0, 1, 42, 2**31 - 1, 2**32 + 5, 2**40, -1, -(2**40)], ids=lambda s: f"seed{s}"
)
def test_PRNGKey_threefry_seeding(device, timed, seed):
    key = timed(jax.random.PRNGKey, seed)
    assert key.dtype == jnp.uint32 and key.shape == (2,)
    bits = seed & (2**64 - 1)  # the seed as a 64-bit two's-complement integer
    np.testing.assert_array_equal(np.asarray(key), [bits >> 32, bits & 0xFFFFFFFF])


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32"])
def test_PRNGKey_traced_seed(device, timed, dtype):
    seed = jnp.asarray(123, dtype=dtype)
    key = timed(jax.random.PRNGKey, seed)
    np.testing.assert_array_equal(np.asarray(key), [0, 123])


def test_PRNGKey_same_seed_same_draws(device, timed):
    key = timed(jax.random.PRNGKey, 7)
    first = jax.random.uniform(key, (1 << 18,), dtype=jnp.float32)
    second = jax.random.uniform(jax.random.PRNGKey(7), (1 << 18,), dtype=jnp.float32)
    other = jax.random.uniform(jax.random.PRNGKey(8), (1 << 18,), dtype=jnp.float32)
    np.testing.assert_array_equal(np.asarray(first), np.asarray(second))
    assert not np.array_equal(np.asarray(first), np.asarray(other))
    assert float(first.min()) >= 0.0 and float(first.max()) < 1.0
    assert abs(float(first.mean()) - 0.5) < 0.01


def test_PRNGKey_matches_typed_key_data(device, timed):
    raw = timed(jax.random.PRNGKey, 2024)
    typed = jax.random.key_data(jax.random.key(2024))
    np.testing.assert_array_equal(np.asarray(raw), np.asarray(typed))


@pytest.mark.parametrize("impl,shape", [("threefry2x32", (2,)), ("rbg", (4,)), ("unsafe_rbg", (4,))])
def test_PRNGKey_impl(device, timed, impl, shape):
    key = timed(jax.random.PRNGKey, 3, impl=impl)
    assert key.dtype == jnp.uint32 and key.shape == shape
    again = jax.random.PRNGKey(3, impl=impl)
    np.testing.assert_array_equal(np.asarray(key), np.asarray(again))
