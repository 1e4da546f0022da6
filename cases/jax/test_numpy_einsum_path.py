"""jax.numpy.einsum_path: contraction orders and their cost report, compared with numpy.einsum_path; the path
reproduces jnp.einsum."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

# Timed with timed.region(), not timed(): einsum_path plans a contraction order from shapes on the host
# and returns a Python path and a PathInfo report, which no jax.jit can return; it computes no array.

SPECS = [
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ea,fb,abcd,gc,hd->efgh", [(10, 10), (10, 10), (10, 10, 10, 10), (10, 10), (10, 10)]),
    ("ij,jk->ik", [(0, 3), (3, 4)]),
    ("i,i->", [(7,), (7,)]),
    ("bij,bjk,bkl->bil", [(3, 5, 1), (3, 1, 9), (3, 9, 2)]),
    ("ab,bc,cd,de->ae", [(256, 512), (512, 8), (8, 512), (512, 256)]),
]


@pytest.mark.parametrize("optimize", ["optimal", "greedy"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("spec,shapes", SPECS, ids=[s for s, _ in SPECS])
def test_einsum_path_matches_numpy(device, timed, spec, shapes, dtype, optimize):
    rng = np.random.default_rng(0)
    operands = [jnp.asarray(rng.uniform(-1, 1, s), dtype=dtype) for s in shapes]
    with timed.region() as region:
        path, report = jnp.einsum_path(spec, *operands, optimize=optimize)
        region.result = path
    assert path[0] == "einsum_path" or isinstance(path[0], tuple)
    np_path, _ = np.einsum_path(spec, *[np.ones(s) for s in shapes], optimize=optimize)
    steps = [p for p in path if isinstance(p, tuple)]
    np_steps = [p for p in np_path if isinstance(p, tuple)]
    assert steps == np_steps
    assert "Complete contraction" in str(report) and spec.split("->")[0] in str(report)
    # The path, used by einsum, gives the same contraction as NumPy.
    if len(shapes) > 1 and dtype in ("float32", "float64"):
        out = jnp.einsum(spec, *operands, optimize=path)
        expected = np.einsum(spec, *[np.asarray(o, np.float64) for o in operands], optimize=True)
        tol = 1e-3 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(
            np.asarray(out, np.float64), expected, rtol=tol, atol=tol * np.abs(expected).max(initial=1)
        )


def test_einsum_path_from_shape_structs(device, timed):
    specs = [jax.ShapeDtypeStruct(s, jnp.float32) for s in [(2, 3), (3, 4), (4, 5)]]
    with timed.region() as region:
        path, _ = jnp.einsum_path("ij,jk,kl->il", *specs, optimize="optimal")
        region.result = path
    assert [p for p in path if isinstance(p, tuple)] == [(0, 1), (0, 1)]


def test_einsum_path_rejects_bad_subscripts(device, timed):
    with pytest.raises(ValueError), timed.region() as region:
        region.result = jnp.einsum_path("ij,jk->ik", jnp.ones((2, 3)), jnp.ones((4, 5)), optimize="optimal")
