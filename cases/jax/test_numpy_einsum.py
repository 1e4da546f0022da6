"""jax.numpy.einsum: Einstein summation against numpy.einsum computed in float64 on the same (cast) inputs,
over dtypes, shapes (empty, zero-length contraction, odd, 1 MB), subscript forms, optimize/precision
options, NaN/inf/-0.0 propagation, malformed subscripts and the gradient."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

# error bound relative to einsum(|a|, |b|): a few units of the dtype's rounding
TOLERANCE = {
    "float32": 1e-5,
    "float64": 1e-12,
    "float16": 4e-3,
    "bfloat16": 3e-2,
    "complex64": 1e-5,
    "int32": 0,
    "int64": 0,
}
# batched matmul 'bij,bjk->bik': (lhs shape, rhs shape)
SHAPES = [
    ((0, 3, 4), (0, 4, 5)),
    ((2, 3, 0), (2, 0, 5)),
    ((3, 5, 7), (3, 7, 9)),
    ((4, 256, 256), (4, 256, 256)),
]


def shape_id(pair):
    return "@".join("x".join(map(str, s)) for s in pair)


def make(rng, shape, dtype):
    if dtype.startswith("int"):
        return jnp.asarray(rng.integers(-8, 9, shape), dtype=dtype)
    if dtype.startswith("complex"):
        return jnp.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), dtype=dtype)
    return jnp.asarray(rng.standard_normal(shape), dtype=dtype)


def reference(subscripts, *arrays):
    """numpy.einsum in float64/complex128 of the exact values JAX received, plus an error scale."""
    wide = [np.asarray(a).astype(np.complex128 if np.iscomplexobj(a) else np.float64) for a in arrays]
    return np.einsum(subscripts, *wide), np.einsum(subscripts, *[np.abs(w) for w in wide])


def assert_close(out, subscripts, arrays, tol):
    expected, scale = reference(subscripts, *arrays)
    got = np.asarray(out).astype(expected.dtype)
    assert got.shape == expected.shape
    bad = np.abs(got - expected) > tol * scale + 1e-300
    assert not bad.any(), (
        f"{bad.sum()} of {bad.size} elements off: got {got[bad][:5]}, want {expected[bad][:5]}"
    )


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shapes", SHAPES, ids=shape_id)
def test_einsum_batched_matmul_matches_numpy(device, timed, dtype, shapes):
    rng = np.random.default_rng(0)
    a, b = make(rng, shapes[0], dtype), make(rng, shapes[1], dtype)
    spec = "bij,bjk->bik"
    out = timed(functools.partial(jnp.einsum, spec, precision=lax.Precision.HIGHEST), a, b)
    assert out.dtype == jnp.dtype(dtype)
    assert out.shape == (shapes[0][0], shapes[0][1], shapes[1][2])
    assert_close(out, spec, (a, b), TOLERANCE[dtype])


SPECS = [
    ("ij->ji", [(3, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii->", [(5, 5)]),
    ("ijk->j", [(3, 4, 5)]),
    ("iij->j", [(3, 3, 4)]),
    ("i,j->ij", [(3,), (7,)]),
    ("i,i->", [(9,)] * 2),
    ("ij,j->i", [(3, 4), (4,)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("ba,b", [(5, 3), (5,)]),
    ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("ea,fb,abcd,gc,hd->efgh", [(2, 3), (2, 4), (3, 4, 5, 2), (3, 5), (2, 2)]),
]


@pytest.mark.parametrize("spec,shapes", SPECS, ids=[s for s, _ in SPECS])
def test_einsum_subscripts_match_numpy(device, timed, spec, shapes):
    rng = np.random.default_rng(1)
    arrays = [make(rng, s, "float64") for s in shapes]
    out = timed(functools.partial(jnp.einsum, spec), *arrays)
    assert out.dtype == jnp.float64
    assert_close(out, spec, arrays, 1e-12)


@pytest.mark.parametrize("optimize", [True, False, "greedy", "optimal"], ids=str)
def test_einsum_optimize_modes_agree(device, timed, optimize):
    rng = np.random.default_rng(2)
    arrays = [make(rng, s, "float64") for s in [(6, 7), (7, 3), (3, 8), (8, 2)]]
    spec = "ij,jk,kl,lm->im"
    out = timed(functools.partial(jnp.einsum, spec, optimize=optimize), *arrays)
    assert out.shape == (6, 2)
    assert_close(out, spec, arrays, 1e-12)


@pytest.mark.parametrize("precision", ["DEFAULT", "HIGH", "HIGHEST"])
def test_einsum_float32_precision(device, timed, precision):
    rng = np.random.default_rng(3)
    a, b = make(rng, (64, 96), "float32"), make(rng, (96, 32), "float32")
    out = timed(functools.partial(jnp.einsum, "ij,jk->ik", precision=getattr(lax.Precision, precision)), a, b)
    assert out.dtype == jnp.float32
    # DEFAULT and HIGH may take bfloat16 passes on accelerators (documented); HIGHEST is full float32
    assert_close(out, "ij,jk->ik", (a, b), 1e-5 if precision == "HIGHEST" else 2e-2)


def test_einsum_preferred_element_type(device, timed):
    rng = np.random.default_rng(4)
    a, b = make(rng, (16, 300), "bfloat16"), make(rng, (300, 8), "bfloat16")
    out = timed(functools.partial(jnp.einsum, "ij,jk->ik", preferred_element_type=jnp.float32), a, b)
    assert out.dtype == jnp.float32
    # bfloat16 products are exact in float32, so only the float32 accumulation rounds
    assert_close(out, "ij,jk->ik", (a, b), 1e-5)


def test_einsum_nan_inf_signed_zero(device, timed):
    a = jnp.asarray(np.array([[np.inf, 1.0], [1.0, 1.0], [np.nan, 0.0], [-np.inf, 2.0]]))
    b = jnp.asarray(np.array([[0.0, 1.0, -1.0], [1.0, 1.0, 1.0]]))
    out = np.asarray(timed(functools.partial(jnp.einsum, "ij,jk->ik"), a, b))
    # inf * 0 is NaN, NaN poisons its row, +/-inf survive finite terms of either sign
    np.testing.assert_array_equal(out, np.einsum("ij,jk->ik", np.asarray(a), np.asarray(b)))
    z = jnp.asarray(np.array([[-0.0, 0.0], [0.0, -0.0], [-0.0, -0.0]]))
    t = np.asarray(timed(functools.partial(jnp.einsum, "ij->ji"), z))
    np.testing.assert_array_equal(np.signbit(t), np.signbit(np.asarray(z).T))


@pytest.mark.parametrize(
    "spec,shapes",
    [("ij,jk->ik", [(3, 4), (5, 2)]), ("ij,jk->ik", [(3, 4)]), ("ij->iz", [(3, 4)]), ("ijk->ij", [(3, 4)])],
    ids=["dim-mismatch", "missing-operand", "unknown-output-index", "rank-mismatch"],
)
def test_einsum_rejects_bad_subscripts(device, timed, spec, shapes):
    arrays = [jnp.ones(s, dtype=jnp.float32) for s in shapes]
    with pytest.raises((ValueError, TypeError)):
        timed(functools.partial(jnp.einsum, spec), *arrays)


def test_einsum_gradient(device, timed):
    rng = np.random.default_rng(5)
    a, b = make(rng, (4, 6), "float64"), make(rng, (6, 3), "float64")
    w = make(rng, (4, 3), "float64")

    def loss(x, y, weights):
        return jnp.sum(jnp.einsum("ij,jk->ik", x, y) * weights)

    ga, gb = timed(jax.grad(loss, argnums=(0, 1)), a, b, w)
    na, nb, nw = (np.asarray(v) for v in (a, b, w))
    np.testing.assert_allclose(np.asarray(ga), nw @ nb.T, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), na.T @ nw, rtol=1e-12)
