"""jax.lax.scan: the loop primitive against the same loop in NumPy: running sums (carry and stacked
outputs) per dtype and length, reversed, a linear recurrence, a pytree carry and outputs, xs=None
with a length, unrolling, and the refusal of a carry whose type changes."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)


def running_sum(carry, x):
    total = carry + x
    return total, total


def scan_sum(xs, reverse=False, unroll=1):
    return jax.lax.scan(running_sum, jnp.zeros(xs.shape[1:], xs.dtype), xs, reverse=reverse, unroll=unroll)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("length", [1, 17, 64])  # eager runs jit-disabled: ~40 ms a step here
def test_running_sum_is_numpys_cumsum(device, timed, dtype, length):
    rng = np.random.default_rng(length)
    values = rng.integers(-5, 6, (length, 3)).astype(dtype)
    final, stacked = timed(scan_sum, jax.device_put(values, device))
    expected = np.cumsum(values, axis=0, dtype=dtype)
    assert stacked.dtype == jnp.dtype(dtype) and stacked.shape == (length, 3)
    np.testing.assert_array_equal(np.asarray(stacked), expected)  # small integers: exact in every dtype
    np.testing.assert_array_equal(np.asarray(final), expected[-1])


def test_reverse_runs_the_loop_from_the_end(device, timed):
    values = np.arange(1.0, 9.0, dtype=np.float32).reshape(8, 1)
    _, stacked = timed(functools.partial(scan_sum, reverse=True), jax.device_put(values, device))
    np.testing.assert_array_equal(np.asarray(stacked), np.cumsum(values[::-1], axis=0)[::-1])


def test_a_linear_recurrence_matches_the_host_loop(device, timed):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(40, 4))
    decay = 0.9

    def step(h, x):
        h = decay * h + x
        return h, jnp.tanh(h)

    final, ys = timed(lambda x: jax.lax.scan(step, jnp.zeros(4), x), jax.device_put(xs, device))
    h, expected = np.zeros(4), []
    for x in xs:
        h = decay * h + x
        expected.append(np.tanh(h))
    np.testing.assert_allclose(np.asarray(ys), np.stack(expected), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(final), h, rtol=1e-12, atol=1e-12)


def test_a_pytree_carry_and_outputs(device, timed):
    xs = {"a": np.arange(6.0).reshape(6, 1), "b": np.arange(6, dtype=np.int32)}

    def step(carry, x):
        total, count = carry
        total = total + x["a"][0] * x["b"]
        return (total, count + 1), {"total": total, "even": x["b"] % 2 == 0}

    (total, count), ys = timed(lambda t: jax.lax.scan(step, (0.0, 0), t), jax.device_put(xs, device))
    products = np.arange(6.0) * np.arange(6)
    assert int(count) == 6 and float(total) == products.sum()
    np.testing.assert_array_equal(np.asarray(ys["total"]), np.cumsum(products))
    np.testing.assert_array_equal(np.asarray(ys["even"]), np.arange(6) % 2 == 0)


def test_no_xs_with_a_length_iterates_the_carry(device, timed):
    def step(carry, _):
        return carry * 2, carry

    final, ys = timed(lambda c: jax.lax.scan(step, c, None, length=10), jax.device_put(np.int32(1), device))
    assert int(final) == 1024
    np.testing.assert_array_equal(np.asarray(ys), 2 ** np.arange(10))


@pytest.mark.parametrize("unroll", [2, 7, True])
def test_unrolled_loops_give_the_rolled_result(device, timed, unroll):
    values = jax.device_put(np.linspace(-1, 1, 64, dtype=np.float32).reshape(16, 4), device)
    rolled = scan_sum(values)
    unrolled = timed(functools.partial(scan_sum, unroll=unroll), values)
    for a, b in zip(jax.tree.leaves(unrolled), jax.tree.leaves(rolled)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_carry_that_changes_type_is_refused(device):
    with pytest.raises(TypeError, match="carry"):
        jax.lax.scan(lambda c, x: (c + x, x), jnp.int32(0), jnp.ones(3, jnp.float32))
