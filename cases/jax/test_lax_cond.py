"""jax.lax.cond: a branch chosen by a traced predicate against the branch a Python `if` takes in
NumPy, for both branches, dtypes and operand sizes; integer and bool predicates, pytree operands, a
branch only valid where taken, NaN operands; the refusal of a non-scalar predicate. (Branches whose
outputs differ in type are refused only when traced: with jit disabled, as the study ran JAX, cond
runs the taken branch alone, so that refusal is not a property of every mode.)"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8"]
SIZES = [0, 1, 9, 1 << 18]


def scale_or_shift(predicate, x):
    return lax.cond(predicate, lambda v: v * 3, lambda v: v + 7, x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("taken", [True, False])
def test_cond_takes_the_branch_python_would(device, timed, dtype, size, taken):
    host = np.random.default_rng(0).integers(0, 30, size).astype(dtype)
    out = timed(scale_or_shift, jnp.asarray(taken), jnp.asarray(host))
    expected = host * host.dtype.type(3) if taken else host + host.dtype.type(7)
    assert out.dtype == jnp.dtype(dtype) and out.shape == (size,)
    np.testing.assert_array_equal(np.asarray(out).astype(np.float64), expected.astype(np.float64))


@pytest.mark.parametrize("predicate", [0, 1, -2, 5])
def test_cond_integer_predicate_is_nonzero_test(device, timed, predicate):
    out = timed(scale_or_shift, jnp.asarray(predicate, dtype=jnp.int32), jnp.asarray([1.0, 2.0]))
    expected = [3.0, 6.0] if predicate != 0 else [8.0, 9.0]
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_cond_with_pytree_operands(device, timed):
    def branch(p):
        return lax.cond(p["flag"], lambda t: (t["a"] - t["b"], t["b"]), lambda t: (t["b"], t["a"]), p)

    operands = {"flag": jnp.asarray(True), "a": jnp.asarray([5.0, 1.0]), "b": jnp.asarray([2.0, 4.0])}
    first, second = timed(branch, operands)
    np.testing.assert_array_equal(np.asarray(first), [3.0, -3.0])
    np.testing.assert_array_equal(np.asarray(second), [2.0, 4.0])


def test_cond_guards_a_branch_only_valid_where_taken(device, timed):
    def safe_log(x):
        return lax.cond(jnp.all(x > 0), jnp.log, lambda v: jnp.full_like(v, -1.0), x)

    positive = np.array([1.0, np.e, 10.0])
    np.testing.assert_allclose(
        np.asarray(timed(safe_log, jnp.asarray(positive))), np.log(positive), rtol=1e-15
    )
    np.testing.assert_array_equal(np.asarray(timed(safe_log, jnp.asarray([1.0, 0.0, -1.0]))), [-1.0] * 3)


def test_cond_passes_nan_operands_through(device, timed):
    out = np.asarray(timed(scale_or_shift, jnp.asarray(False), jnp.asarray([np.nan, np.inf, -0.0])))
    assert np.isnan(out[0]) and out[1] == np.inf and out[2] == 7.0


def test_cond_refuses_a_non_scalar_predicate(device, timed):
    with pytest.raises(TypeError, match="scalar"):
        timed(scale_or_shift, jnp.asarray([True, False]), jnp.asarray([1.0, 2.0]))
