"""jax._src.interpreters.partial_eval.trace_to_jaxpr_dynamic: staging a function of abstract values into
a jaxpr:
equations, input/output avals, keep_inputs, constants, and evaluating the jaxpr against NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import api_util, core
from jax._src import linear_util as lu
from jax._src.interpreters import partial_eval as pe

jax.config.update("jax_enable_x64", True)

# Timed with timed.region(), not timed(): the function stages Python callables of avals into a Jaxpr on
# the host; no jax.jit can return a Jaxpr, and a jitted wrapper would time only its cached executable.


def _wrap(f, nargs):
    return lu.wrap_init(f, debug_info=api_util.debug_info("case", f, (0,) * nargs, {}))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64"])
@pytest.mark.parametrize("shape", [(), (0,), (7, 3), (512, 1024)], ids=str)
def test_trace_sin_mul(device, timed, dtype, shape):
    def f(x, y):
        return [jnp.sin(x) * y, x + 1]

    avals = [core.ShapedArray(shape, jnp.dtype(dtype))] * 2
    with timed.region() as region:
        jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(_wrap(f, 2), avals)
        region.result = consts
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "mul", "add"]
    assert len(jaxpr.invars) == 2 and all(v.aval.shape == shape for v in jaxpr.invars)
    assert [(a.shape, a.dtype) for a in out_avals] == [(shape, jnp.dtype(dtype))] * 2
    if shape == (7, 3):
        rng = np.random.default_rng(0)
        x, y = (jnp.asarray(rng.uniform(-2, 2, shape), dtype) for _ in range(2))
        out = core.eval_jaxpr(jaxpr, consts, x, y)
        wide = np.complex128 if dtype.startswith("complex") else np.float64
        xs, ys = np.asarray(x).astype(wide), np.asarray(y).astype(wide)
        tol = {"float16": 1e-2, "bfloat16": 5e-2}.get(dtype, 1e-5)
        np.testing.assert_allclose(np.asarray(out[0]).astype(wide), np.sin(xs) * ys, rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(out[1]).astype(wide), xs + 1, rtol=tol, atol=tol)


def test_trace_keep_inputs_drops_argument(device, timed):
    n = core.ShapedArray((), jnp.dtype("int32"))
    a = core.ShapedArray((4,), jnp.dtype("float32"))

    def g(y):
        return [y * 2.0]

    with timed.region() as region:
        jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(_wrap(g, 1), [n, a], keep_inputs=[False, True])
        region.result = consts
    assert len(jaxpr.invars) == 2 and jaxpr.invars[0].aval == n and jaxpr.invars[1].aval == a
    assert out_avals[0].shape == (4,)
    out = core.eval_jaxpr(jaxpr, consts, jnp.int32(0), jnp.arange(4.0, dtype=jnp.float32))
    np.testing.assert_array_equal(np.asarray(out[0]), np.arange(4.0) * 2)


def test_trace_captures_constants(device, timed):
    table = jnp.arange(6.0).reshape(2, 3)

    def h(x):
        return [x @ table]

    with timed.region() as region:
        jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(
            _wrap(h, 1), [core.ShapedArray((4, 2), jnp.float64)]
        )
        region.result = consts
    assert out_avals[0].shape == (4, 3)
    x = jnp.ones((4, 2))
    out = core.eval_jaxpr(jaxpr, consts, x)
    np.testing.assert_allclose(np.asarray(out[0]), np.ones((4, 2)) @ np.arange(6.0).reshape(2, 3))


def test_trace_pass_through_outputs(device, timed):
    def ident(x, y):
        return [x, y]

    avals = [core.ShapedArray((3,), jnp.float32), core.ShapedArray((2, 2), jnp.int32)]
    with timed.region() as region:
        jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(_wrap(ident, 2), avals)
        region.result = consts
    assert jaxpr.eqns == [] or all(e.primitive.name for e in jaxpr.eqns)
    assert out_avals == avals and consts == []
