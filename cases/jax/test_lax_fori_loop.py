"""jax.lax.fori_loop: a counted loop carrying arrays, against the same recurrence run as a plain Python
loop over range(lower, upper) in NumPy, over carry dtypes and shapes, static and traced bounds, zero
and negative trip counts, negative bounds, pytree carries, unrolling, int64 range, NaN and gradients."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8", "complex64"]
SHAPES = [(), (0,), (7,), (3, 5), (1 << 18,)]


def doubling_body(i, carry):
    """carry <- 2 * carry + x * i: order-sensitive, exact in every dtype for the values used."""
    c, x = carry
    return 2 * c + x * jnp.asarray(i).astype(c.dtype), x


def doubling_loop(lower, upper, c, x, **kwargs):
    return lax.fori_loop(lower, upper, doubling_body, (c, x), **kwargs)[0]


def doubling_reference(lower, upper, c, x):
    c = np.array(c, copy=True)
    for i in range(lower, upper):
        c = (2 * c + x * np.asarray(i).astype(c.dtype)).astype(c.dtype)
    return c


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_fori_loop_matches_python_loop(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    # with x in [0, 3] ([0, 1] for int8) and c0 in [0, 1] over i = 0..5 every intermediate is an
    # integer <= 203 (<= 89): exact in every dtype, no overflow
    x = jnp.asarray(rng.integers(0, 2 if dtype == "int8" else 4, shape), dtype=dtype)
    c0 = jnp.asarray(rng.integers(0, 2, shape), dtype=dtype)
    out = timed(functools.partial(doubling_loop, 0, 6), c0, x)
    assert out.dtype == c0.dtype and out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), doubling_reference(0, 6, np.asarray(c0), np.asarray(x)))


@pytest.mark.parametrize(
    "bounds", [(0, 0), (4, 4), (5, 2), (0, -3), (-3, 4), (-6, -2), (2, 9)], ids=lambda b: f"{b[0]}to{b[1]}"
)
def test_bounds_static(device, timed, bounds):
    # zero and negative trip counts return the initial carry; negative bounds count upwards
    lower, upper = bounds
    c0 = jnp.array([1, 0, -2], dtype=jnp.int64)
    x = jnp.array([1, 3, 2], dtype=jnp.int64)
    out = timed(functools.partial(doubling_loop, lower, upper), c0, x)
    np.testing.assert_array_equal(
        np.asarray(out), doubling_reference(lower, upper, np.asarray(c0), np.asarray(x))
    )


@pytest.mark.parametrize(
    "bounds", [(0, 0), (3, 1), (0, 5), (-2, 3), (1, 10)], ids=lambda b: f"{b[0]}to{b[1]}"
)
def test_bounds_as_arrays(device, timed, bounds):
    # bounds given as int32 arrays (traced under jit, so the loop becomes a while loop)
    lower, upper = bounds
    c0 = jnp.array([0.5, -1.0], dtype=jnp.float64)
    x = jnp.array([1.0, 0.25], dtype=jnp.float64)
    out = timed(lambda lo, hi, c, v: doubling_loop(lo, hi, c, v), jnp.int32(lower), jnp.int32(upper), c0, x)
    np.testing.assert_array_equal(
        np.asarray(out), doubling_reference(lower, upper, np.asarray(c0), np.asarray(x))
    )


@pytest.mark.parametrize("unroll", [1, 2, 3, 8, True], ids=lambda u: f"unroll{u}")
def test_unroll_does_not_change_result(device, timed, unroll):
    c0 = jnp.asarray(np.linspace(-1.0, 1.0, 11), dtype=jnp.float32)
    x = jnp.asarray(np.linspace(0.0, 0.5, 11), dtype=jnp.float32)
    out = timed(functools.partial(doubling_loop, 1, 8, unroll=unroll), c0, x)
    expected = doubling_reference(1, 8, np.asarray(c0), np.asarray(x))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6, atol=1e-6)


def test_pytree_carry_fibonacci_int64(device, timed):
    # fib(90) = 2880067194370816120 needs 64-bit integers; the float carry counts iterations
    def fib(a, b, count):
        def body(i, carry):
            a, b, count = carry
            return b, a + b, count + 1.0

        return lax.fori_loop(0, 90, body, (a, b, count))

    a, b, count = timed(fib, jnp.int64(0), jnp.int64(1), jnp.float32(0.0))
    ref_a, ref_b = 0, 1
    for _ in range(90):
        ref_a, ref_b = ref_b, ref_a + ref_b
    assert a.dtype == jnp.int64 and b.dtype == jnp.int64 and count.dtype == jnp.float32
    assert int(a) == ref_a == 2880067194370816120 and int(b) == ref_b
    assert float(count) == 90.0


def test_loop_index_values(device, timed):
    # the body sees i = lower, lower + 1, ..., upper - 1: write each i into slot i - lower
    def record(buf):
        return lax.fori_loop(3, 10, lambda i, b: b.at[i - 3].set(i * i), buf)

    out = timed(record, jnp.full((8,), -1, dtype=jnp.int32))
    np.testing.assert_array_equal(np.asarray(out), [9, 16, 25, 36, 49, 64, 81, -1])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_nan_and_inf_propagate(device, timed, dtype):
    c0 = jnp.asarray(np.array([np.nan, np.inf, -np.inf, 1.0]), dtype=dtype)
    x = jnp.asarray(np.array([1.0, 1.0, 1.0, np.nan]), dtype=dtype)
    out = np.asarray(timed(functools.partial(doubling_loop, 0, 4), c0, x)).astype(np.float64)
    assert np.isnan(out[0]) and out[1] == np.inf and out[2] == -np.inf
    assert np.isnan(out[3])  # nan * 0 on the first step


def test_mismatched_bound_types_rejected(device, timed):
    with pytest.raises(TypeError):
        timed(lambda c: lax.fori_loop(np.int16(0), jnp.int32(10), lambda i, v: v, c), jnp.float32(7.0))


def test_gradient_of_power_loop(device, timed):
    # carry <- carry * x, five times from 1: d(x**5)/dx = 5 x**4
    x = jnp.linspace(-2.0, 2.0, 9, dtype=jnp.float64)
    grad = timed(jax.vmap(jax.grad(lambda v: lax.fori_loop(0, 5, lambda i, c: c * v, jnp.ones_like(v)))), x)
    np.testing.assert_allclose(np.asarray(grad), 5 * np.asarray(x) ** 4, rtol=1e-13, atol=1e-13)
