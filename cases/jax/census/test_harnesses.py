"""The JAX census of primitives: JAX's own harnesses (what jax2tf and the primitive tests run),
one subtest per harness group x dtype, through the same harness as the curated cases (`device`,
`timed`).

What runs comes from `harnesses.yaml` beside this file (harvested from the wheel: the groups, the
public function each exercises, the harnesses per dtype, the limitations JAX declares per device
and dtype, the per-dtype tolerance policy of params.yaml). Every dtype runs on every device,
declared unimplemented there or not: "declared unimplemented but works" and "declared working but
fails" are findings.

Per harness (args from `dyn_args_maker` on a RandomState seeded 0, as JAX's tests): the harness's
function is called through `timed` (warm-up, then the timed call, routed through the mode). The
oracles:
- eager (jit disabled): for the elementwise primitives REFERENCES maps (a reviewed mapping: the
  NumPy or SciPy function computing the same mathematical function), that function on the same host
  arrays as JAX received them, floating and complex inputs widened to float64 / complex128 (computed
  in the highest precision it takes) and the result held to the tested dtype's tolerance (the less
  precise of the two: oracle.tolerance_for); `same` entries are computed in the tested dtype itself
  (nextafter, bitwise ops: widening would change the answer). Every other group has no independent
  reference (the harnesses carry none): its samples pass if they run and the row is `ran`. On a
  device that is not the host CPU, each sample is also held to the CPU's result of the same args
  (the differential oracle, runner/device_oracle.py);
- compiled (the harness jits): the same function on the same args under jax.disable_jit, as
  jax2tf's primitive tests hold a conversion to JAX itself.
A sample fails when the function raises, or when its values leave the tolerance of the output's
dtype (NaN matching NaN). The subtest reports its oracles, samples, samples compared and failed and
the largest deviations (`record_property`), and re-raises the first error as itself.
"""

from __future__ import annotations

import collections
import importlib
import warnings
from functools import cache
from typing import Any

import jax
import numpy as np

# At import, outside the pinned device: the module registers jax's config with absl, which
# refuses a config holding a Device (jax.default_device, as the `device` fixture sets it).
from jax._src.internal_test_util.test_harnesses import all_harnesses

from portability_data.runner.census_rows import CensusModule
from portability_data.runner.device_oracle import DeviceJudgement
from portability_data.runner.oracle import NO_ORACLE

CENSUS = CensusModule(__file__)
pytest_generate_tests = CENSUS.generate_tests

# Harness group -> (the NumPy or SciPy function of the same mathematical function, its operands,
# how it is computed: wide = floating and complex operands widened to float64 / complex128, the
# result then rounded to the dtype JAX returned (the correctly rounded answer: an overflow is inf);
# same = in the tested dtype), for the operand kinds it holds (NumPy kinds: f floating, with
# bfloat16; c complex; i signed; u unsigned; b bool). Reviewed against each primitive's
# documentation (jax.lax): lax.rem is C's fmod (the dividend's sign), lax.max/min propagate NaN as
# numpy.maximum/minimum do for real operands, lax.sign of a complex is z/|z| as numpy's (2.x),
# lax.lgamma is log|Gamma| as scipy.special.gammaln, lax.logistic is scipy.special.expit. Left out
# or narrowed on purpose, where the two define different things: div of integers (lax.div
# truncates, NumPy floors); max/min of complex numbers (NumPy orders them lexicographically and
# propagates a NaN in either part, XLA does not: measured on the CPU); population_count of signed
# integers (NumPy counts the bits of |x|, lax of the two's complement); round (lax's default rounds
# half away from zero, NumPy's half to even); shifts (lax defines shifts past the width, NumPy does
# not); rsqrt and clamp (no single NumPy function).
REAL, ANY = "fiub", "fciub"
REFERENCES: dict[str, tuple[str, int, str, str]] = {
    **{
        group: (reference, 1, "wide", ANY)
        for group, reference in {
            "abs": "numpy.abs",
            "acos": "numpy.arccos",
            "acosh": "numpy.arccosh",
            "asin": "numpy.arcsin",
            "asinh": "numpy.arcsinh",
            "atan": "numpy.arctan",
            "atanh": "numpy.arctanh",
            "bessel_i0e": "scipy.special.i0e",
            "bessel_i1e": "scipy.special.i1e",
            "cbrt": "numpy.cbrt",
            "ceil": "numpy.ceil",
            "conj": "numpy.conj",
            "cos": "numpy.cos",
            "cosh": "numpy.cosh",
            "digamma": "scipy.special.digamma",
            "erf": "scipy.special.erf",
            "erf_inv": "scipy.special.erfinv",
            "erfc": "scipy.special.erfc",
            "exp": "numpy.exp",
            "expm1": "numpy.expm1",
            "floor": "numpy.floor",
            "imag": "numpy.imag",
            "is_finite": "numpy.isfinite",
            "lgamma": "scipy.special.gammaln",
            "log": "numpy.log",
            "log1p": "numpy.log1p",
            "logistic": "scipy.special.expit",
            "neg": "numpy.negative",
            "real": "numpy.real",
            "sign": "numpy.sign",
            "sin": "numpy.sin",
            "sinh": "numpy.sinh",
            "sqrt": "numpy.sqrt",
            "tan": "numpy.tan",
            "tanh": "numpy.tanh",
        }.items()
    },
    **{
        group: (reference, 2, "wide", ANY)
        for group, reference in {
            "add": "numpy.add",
            "sub": "numpy.subtract",
            "mul": "numpy.multiply",
            "atan2": "numpy.arctan2",
            "pow": "numpy.power",
            "rem": "numpy.fmod",
            "igamma": "scipy.special.gammainc",
            "igammac": "scipy.special.gammaincc",
            "eq": "numpy.equal",
            "ne": "numpy.not_equal",
            "lt": "numpy.less",
            "le": "numpy.less_equal",
            "gt": "numpy.greater",
            "ge": "numpy.greater_equal",
        }.items()
    },
    "max": ("numpy.maximum", 2, "wide", REAL),
    "min": ("numpy.minimum", 2, "wide", REAL),
    "div": ("numpy.divide", 2, "wide", "fc"),
    "population_count": ("numpy.bitwise_count", 1, "same", "u"),
    "nextafter": ("numpy.nextafter", 2, "same", "f"),
    "and": ("numpy.bitwise_and", 2, "same", "iub"),
    "or": ("numpy.bitwise_or", 2, "same", "iub"),
    "xor": ("numpy.bitwise_xor", 2, "same", "iub"),
}


@cache
def harnesses_by_pair() -> dict[tuple[str, str], list[Any]]:
    """(group, dtype name) -> its harnesses, in JAX's order."""
    found: dict[tuple[str, str], list[Any]] = collections.defaultdict(list)
    for harness in all_harnesses:
        found[(harness.group_name, np.dtype(harness.dtype).name)].append(harness)
    return found


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    compiled = timed.mode == "compiled"
    group, dtype_name = census_pair
    reference = None if compiled else reference_of(group, dtype_name)

    def run_one(harness: Any) -> tuple[Any, Any, Any]:
        args = harness.dyn_args_maker(np.random.RandomState(0))
        twin = judgement.twin(harness.dyn_fun, *args)
        actual = timed(harness.dyn_fun, *args)
        if compiled:
            return actual, _eager(harness, args), twin
        expected = _reference(reference, args) if reference else NO_ORACLE
        return actual, _rounded(expected, actual), twin

    judgement = DeviceJudgement(CENSUS.tolerances, timed)
    judgement.run(
        CENSUS.samples(harnesses_by_pair()[census_pair], timed.mode),
        run_one,
        label=lambda harness: f"harness {harness.fullname}",
    )
    oracle = "eager" if compiled else reference[0].split(".")[0] if reference else "none"
    judgement.record(record_property, oracle)


def reference_of(group: str, dtype_name: str) -> tuple[str, int, str, str] | None:
    """The group's independent reference for the dtype (REFERENCES), or None."""
    found = REFERENCES.get(group)
    kind = "f" if dtype_name == "bfloat16" else np.dtype(dtype_name).kind
    return found if found is not None and kind in found[3] else None


def _reference(reference: tuple[str, int, str, str], args: list[Any]) -> Any:
    """The reference on the same host arrays as JAX received them (a float64 operand JAX holds as
    float32 without x64 is rounded first); NO_ORACLE where the harness's operands are not the
    primitive's (another arity) or the reference refuses them."""
    name, arity, precision, _ = reference
    if len(args) != arity:
        return NO_ORACLE
    module, _, attribute = name.rpartition(".")
    function = getattr(importlib.import_module(module), attribute)
    operands = []
    for arg in args:
        array = np.asarray(arg)
        array = array.astype(jax.dtypes.canonicalize_dtype(array.dtype))
        if precision == "wide" and (array.dtype.kind in "fc" or array.dtype.name == "bfloat16"):
            array = array.astype(np.complex128 if array.dtype.kind == "c" else np.float64)
        operands.append(array)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return function(*operands)
    except Exception:
        return NO_ORACLE


def _eager(harness: Any, args: list[Any]) -> Any:
    """The harness's result with jit disabled, on the same args; NO_ORACLE if eager raises (the
    compiled call is then judged by its running alone)."""
    try:
        with jax.disable_jit():
            result = harness.dyn_fun(*args)
            jax.block_until_ready(result)
            return result
    except Exception:
        return NO_ORACLE


def _rounded(expected: Any, actual: Any) -> Any:
    """A widened reference rounded to the floating or complex dtype JAX returned: the correctly
    rounded answer in that dtype (a value past its range is inf, as JAX's own is)."""
    if expected is NO_ORACLE or isinstance(expected, tuple) or isinstance(actual, (tuple, list)):
        return expected
    wanted, found = np.dtype(actual.dtype), np.asarray(expected)
    if found.dtype.kind not in "fc" or (wanted.kind not in "fc" and wanted.name != "bfloat16"):
        return expected
    if found.dtype.kind == "c" and wanted.kind != "c":
        return expected
    with np.errstate(all="ignore"):
        return found.astype(wanted)
