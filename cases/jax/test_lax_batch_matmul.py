"""jax.lax.batch_matmul: matrix products over shared leading batch dimensions, against numpy.matmul in
float64/complex128 on the same (cast) inputs, over dtypes, shapes (empty batch, empty contraction, odd,
2-D, 4-D, 1 MB), precision options, NaN/inf propagation, shape/rank errors and the gradient."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

# error bound relative to |lhs| @ |rhs|: a few units of the dtype's rounding
TOLERANCE = {
    "float32": 1e-5,
    "float64": 1e-12,
    "float16": 4e-3,
    "bfloat16": 3e-2,
    "complex64": 1e-5,
    "int32": 0,
    "int64": 0,
}
SHAPES = [
    ((0, 3, 4), (0, 4, 5)),  # empty batch
    ((2, 3, 0), (2, 0, 5)),  # empty contraction: zeros
    ((3, 5, 7), (3, 7, 9)),  # odd
    ((5, 3), (3, 4)),  # no batch dimension
    ((2, 3, 4, 5), (2, 3, 5, 6)),  # two batch dimensions
    ((4, 256, 256), (4, 256, 256)),  # 1 MB per float32 operand
]


def shape_id(pair):
    return "@".join("x".join(map(str, s)) for s in pair)


def make(rng, shape, dtype):
    if dtype.startswith("int"):
        return jnp.asarray(rng.integers(-8, 9, shape), dtype=dtype)
    if dtype.startswith("complex"):
        return jnp.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), dtype=dtype)
    return jnp.asarray(rng.standard_normal(shape), dtype=dtype)


def assert_close(out, lhs, rhs, tol):
    wide = np.complex128 if np.iscomplexobj(lhs) else np.float64
    a, b = np.asarray(lhs).astype(wide), np.asarray(rhs).astype(wide)
    expected, scale = np.matmul(a, b), np.matmul(np.abs(a), np.abs(b))
    got = np.asarray(out).astype(wide)
    assert got.shape == expected.shape
    bad = np.abs(got - expected) > tol * scale + 1e-300
    assert not bad.any(), (
        f"{bad.sum()} of {bad.size} elements off: got {got[bad][:5]}, want {expected[bad][:5]}"
    )


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shapes", SHAPES, ids=shape_id)
def test_batch_matmul_matches_numpy(device, timed, dtype, shapes):
    rng = np.random.default_rng(0)
    lhs, rhs = make(rng, shapes[0], dtype), make(rng, shapes[1], dtype)
    out = timed(functools.partial(lax.batch_matmul, precision=lax.Precision.HIGHEST), lhs, rhs)
    assert out.dtype == jnp.dtype(dtype)
    assert out.shape == shapes[0][:-1] + shapes[1][-1:]
    assert_close(out, lhs, rhs, TOLERANCE[dtype])


@pytest.mark.parametrize("precision", [None, "DEFAULT", "HIGH", "HIGHEST"], ids=str)
def test_batch_matmul_float32_precision(device, timed, precision):
    rng = np.random.default_rng(1)
    lhs, rhs = make(rng, (3, 40, 96), "float32"), make(rng, (3, 96, 24), "float32")
    prec = None if precision is None else getattr(lax.Precision, precision)
    out = timed(functools.partial(lax.batch_matmul, precision=prec), lhs, rhs)
    assert out.dtype == jnp.float32 and out.shape == (3, 40, 24)
    # DEFAULT and HIGH may take bfloat16 passes on accelerators (documented); HIGHEST is full float32
    assert_close(out, lhs, rhs, 1e-5 if precision == "HIGHEST" else 2e-2)


def test_batch_matmul_identity_and_batches_independent(device, timed):
    rng = np.random.default_rng(2)
    lhs = make(rng, (4, 6, 6), "float64")
    eye = jnp.asarray(np.stack([np.eye(6) * (k + 1) for k in range(4)]))
    out = np.asarray(timed(lax.batch_matmul, lhs, eye))
    # batch k is scaled by k + 1 only: no mixing across the batch dimension
    np.testing.assert_array_equal(out, np.asarray(lhs) * np.arange(1, 5)[:, None, None])


def test_batch_matmul_nan_inf(device, timed):
    lhs = jnp.asarray(np.array([[[np.inf, 1.0], [1.0, 1.0], [np.nan, 0.0], [-np.inf, 2.0]]] * 2))
    rhs = jnp.asarray(np.array([[[0.0, 1.0, -1.0], [1.0, 1.0, 1.0]], [[1.0, 2.0, 3.0], [0.0, -1.0, 0.0]]]))
    out = np.asarray(timed(lax.batch_matmul, lhs, rhs))
    # inf * 0 is NaN, NaN poisons its row, +/-inf survive finite terms of either sign
    with np.errstate(invalid="ignore"):
        expected = np.matmul(np.asarray(lhs), np.asarray(rhs))
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    "lhs_shape,rhs_shape,error",
    [
        ((3,), (3,), ValueError),  # below 2-D
        ((2, 3, 4), (4, 5), ValueError),  # ranks differ (no broadcasting, unlike matmul)
        ((2, 3, 4), (3, 4, 5), TypeError),  # batch sizes differ
        ((2, 3, 4), (2, 5, 6), TypeError),  # contraction sizes differ
    ],
    ids=["1d", "rank-mismatch", "batch-mismatch", "contract-mismatch"],
)
def test_batch_matmul_rejects_bad_shapes(device, timed, lhs_shape, rhs_shape, error):
    with pytest.raises(error):
        timed(lax.batch_matmul, jnp.ones(lhs_shape), jnp.ones(rhs_shape))


def test_batch_matmul_gradient(device, timed):
    rng = np.random.default_rng(3)
    lhs, rhs = make(rng, (3, 4, 6), "float64"), make(rng, (3, 6, 2), "float64")
    w = make(rng, (3, 4, 2), "float64")

    def loss(a, b, weights):
        return jnp.sum(lax.batch_matmul(a, b) * weights)

    ga, gb = timed(jax.grad(loss, argnums=(0, 1)), lhs, rhs, w)
    na, nb, nw = (np.asarray(v) for v in (lhs, rhs, w))
    np.testing.assert_allclose(np.asarray(ga), nw @ nb.transpose(0, 2, 1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), na.transpose(0, 2, 1) @ nw, rtol=1e-12)
