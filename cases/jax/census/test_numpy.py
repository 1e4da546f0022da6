"""The JAX census of jax.numpy against NumPy: every jax.numpy function with a NumPy namesake, on
the framework-neutral inputs of runner/generator.py, one subtest per function x dtype, through
the same harness as the curated cases (`device`, `timed`).

What runs comes from `numpy.yaml` beside this file (harvested by running NumPy on the generator's
inputs: each function's arity and, per dtype, the input kinds NumPy accepts; the per-dtype
tolerance policy of params.yaml). The samples of a pair are those kinds (edge values, 0-d,
empty, odd sizes, a square matrix, broadcasting operands, ~1e6 elements), in the manifest's
order; compiled mode runs the first few only (census.compiled.max_samples).

Per sample: the generator's arrays are put on the device and the jax.numpy function is called on
them through `timed`; the oracle is the NumPy function on the same host arrays, the jax result
read back with np.asarray. JAX runs without x64 (its default): a float64 (complex128, int64)
input runs as float32 (complex64, int32), so NumPy is given the input as jax ran it and the row
says so (oracle `numpy_32bit`): the documented narrowing is recorded, not failed (a float64 edge
value such as 1e308 would otherwise fail as inf). Results are judged with the tolerance of the
dtype jax returned (the output's dtype, as the torch census does), never for the dtype itself.
A sample fails when jax raises, or when its values leave the tolerance (NaN matching NaN); the
message names the input kind.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from portability_data.runner.census_rows import CensusModule
from portability_data.runner.device_oracle import DeviceJudgement
from portability_data.runner.generator import Sample, sample
from portability_data.runner.oracle import NO_ORACLE
from portability_data.runner.promotion import DtypeLedger

CENSUS = CensusModule(__file__)
pytest_generate_tests = CENSUS.generate_tests


def resolve(module: Any, name: str) -> Any:
    """linalg.svd in jax.numpy -> jax.numpy.linalg.svd (and so in numpy)."""
    head, _, attribute = name.rpartition(".")
    if head:
        module = importlib.import_module(f"{module.__name__}.{head}")
    return getattr(module, attribute)


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    name, dtype_name = census_pair
    entry = CENSUS.entries[name]
    kinds = CENSUS.samples(entry["kinds"][dtype_name], timed.mode)
    function, reference = resolve(jnp, name), resolve(np, name)
    narrowed: list[bool] = []
    ledger = DtypeLedger()

    def run_one(given: Sample) -> tuple[Any, Any, Any]:
        on_device = [jax.device_put(array, device) for array in given.args]
        twin = judgement.twin(function, *on_device)
        # x64 off: jax runs a 64-bit input as 32-bit; NumPy gets what jax ran on, so the
        # documented narrowing is recorded (oracle numpy_32bit), not failed
        host = [a.astype(d.dtype) for a, d in zip(given.args, on_device, strict=True)]
        narrowed.append(any(a.dtype != h.dtype for a, h in zip(given.args, host, strict=True)))
        actual, expected = _host(timed(function, *on_device)), _expected(reference, host)
        ledger.note(actual, expected)
        return actual, expected, twin

    judgement = DeviceJudgement(CENSUS.tolerances, timed)
    judgement.run(
        [sample(name, dtype_name, kind, entry["arity"]) for kind in kinds],
        run_one,
        label=lambda given: f"input {given.describe()}",
    )
    ledger.record(record_property)
    judgement.record(record_property, "numpy_32bit" if any(narrowed) else "numpy")


def _host(value: Any) -> Any:
    """The jax result read back to the host with np.asarray (every array leaf), for the oracle."""
    return jax.tree_util.tree_map(lambda v: np.asarray(v) if isinstance(v, jax.Array) else v, value)


def _expected(reference: Any, args: tuple[np.ndarray, ...]) -> Any:
    """NumPy's result on the same host arrays; NO_ORACLE where NumPy now refuses them (the
    manifest said it takes them: a NumPy upgrade, not a jax failure)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return reference(*[a.copy() for a in args])
    except Exception:
        return NO_ORACLE
