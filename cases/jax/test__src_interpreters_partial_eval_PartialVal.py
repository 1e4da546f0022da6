"""jax._src.interpreters.partial_eval.PartialVal: known/unknown partial values, their avals, and their use in
partial evaluation (trace_to_jaxpr_nounits)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import api_util, core
from jax._src import linear_util as lu
from jax._src.interpreters import partial_eval as pe

jax.config.update("jax_enable_x64", True)

# Timed with timed.region(), not timed(): PartialVal is a Python-side tracing record (an aval or a value
# in a tuple), no jax.jit can return it and it does no array computation to compile.

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "bool", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (7, 3), (512, 1024)], ids=str)
def test_partial_val_unknown(device, timed, dtype, shape):
    aval = core.ShapedArray(shape, jnp.dtype(dtype))
    with timed.region() as region:
        pval = pe.PartialVal.unknown(aval)
        region.result = pval
    assert not pval.is_known()
    assert pval.get_aval() == aval and pval.get_known() is None
    assert pval[0] == aval and pval[1] is None


@pytest.mark.parametrize("dtype", DTYPES)
def test_partial_val_known(device, timed, dtype):
    value = jnp.zeros((2, 3), dtype=dtype)
    with timed.region() as region:
        pval = pe.PartialVal.known(value)
        region.result = pval
    assert pval.is_known() and pval.get_known() is value
    aval = pval.get_aval()
    assert aval.shape == (2, 3) and aval.dtype == jnp.dtype(dtype)


def test_partial_val_known_python_scalar(device, timed):
    with timed.region() as region:
        pval = pe.PartialVal.known(3.0)
        region.result = pval
    assert pval.get_known() == 3.0 and pval.get_aval().shape == ()


def test_partial_val_drives_partial_eval(device, timed):
    def f(x, y):
        return [jnp.sin(x) * y]

    known = jnp.asarray(np.linspace(0, 1, 4))
    wrapped = lu.wrap_init(f, debug_info=api_util.debug_info("case", f, (0, 0), {}))
    with timed.region() as region:
        pvals = [pe.PartialVal.known(known), pe.PartialVal.unknown(core.ShapedArray((4,), jnp.float64))]
        region.result = pvals
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(wrapped, pvals)
    # sin(x) is computed from the known value; only the multiply by y is staged.
    # (with jit enabled jnp's multiply is staged as one nested jit equation)
    assert len(jaxpr.eqns) == 1 and "sin" not in str(jaxpr) and "mul" in str(jaxpr)
    assert not out_pvals[0].is_known() and out_pvals[0].get_aval().shape == (4,)
    y = jnp.arange(4.0)
    out = core.eval_jaxpr(jaxpr, consts, y)
    np.testing.assert_allclose(np.asarray(out[0]), np.sin(np.asarray(known)) * np.arange(4.0), rtol=1e-12)
