"""The TensorFlow census of tf.experimental.numpy against NumPy: every tnp function with a NumPy
namesake, on the framework-neutral inputs of runner/generator.py (the very arrays the JAX census
gives jax.numpy of the same name), one subtest per function x dtype, through the same harness as
the curated cases (`device`, `timed`).

What runs comes from `tnp.yaml` beside this file (harvested by running NumPy on the generator's
inputs: each function's arity and, per dtype, the input kinds NumPy accepts; the per-dtype
tolerance policy of params.yaml). Compiled mode runs the first few samples only
(census.compiled.max_samples), through tf.function(jit_compile=True). TensorFlow's own tests of
tnp check it against NumPy too (tensorflow/python/ops/numpy_ops/tests/np_test.py, a port of JAX's
lax_numpy_test.py, on its own random arrays).

tnp needs NumPy behaviour for its ndarray methods (astype, ...): without it, tnp.sin of an
integer tensor raises AttributeError. The module enables it as TensorFlow documents, once at
import for the whole worker process, with the manifest's settings (TensorFlow's defaults:
prefer_float32 False, so a float function of integers computes in float64 as NumPy's does;
legacy dtype conversion, so tf ops outside tnp promote as before). Should tnp still return
float32 (complex64) where NumPy returns float64 (complex128), the row says so (oracle
`numpy_32bit`, as the JAX census names its narrowing) and the result is judged with the tolerance
of the less precise dtype (oracle.deviation), not failed.

Per sample: the generator's arrays are made tensors on the device and the tnp function is called
on them through `timed`; the oracle is the NumPy function on the same host arrays. A sample fails
when tnp raises, or when its values leave the tolerance (NaN matching NaN); the message names the
input kind.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import tensorflow as tf
import tensorflow.experimental.numpy as tnp

from portability_data.runner.census_rows import CensusModule
from portability_data.runner.device_oracle import DeviceJudgement
from portability_data.runner.generator import Sample, sample
from portability_data.runner.oracle import NO_ORACLE, dtype_of, leaves
from portability_data.runner.promotion import DtypeLedger

CENSUS = CensusModule(__file__)
pytest_generate_tests = CENSUS.generate_tests

tnp.experimental_enable_numpy_behavior(prefer_float32=CENSUS.manifest["prefer_float32"])

NARROWER = {("float32", "float64"), ("complex64", "complex128")}


def resolve(module: Any, name: str) -> Any:
    """linalg.norm in tnp -> its attribute path (and so in numpy)."""
    head, _, attribute = name.rpartition(".")
    if head:
        for part in head.split("."):
            module = getattr(module, part, None) or importlib.import_module(f"{module.__name__}.{part}")
    return getattr(module, attribute)


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    name, dtype_name = census_pair
    entry = CENSUS.entries[name]
    kinds = CENSUS.samples(entry["kinds"][dtype_name], timed.mode)
    function, reference = resolve(tnp, name), resolve(np, name)
    narrowed: list[bool] = []
    ledger = DtypeLedger()

    def run_one(given: Sample) -> tuple[Any, Any, Any]:
        with tf.device(device):
            on_device = [tf.constant(array) for array in given.args]
        twin = judgement.twin(function, *on_device)
        actual = timed(function, *on_device)
        expected = _expected(reference, given.args)
        narrowed.append(_narrower(actual, expected))
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


def _narrower(actual: Any, expected: Any) -> bool:
    """Whether tnp returned float32 (complex64) where NumPy returned float64 (complex128)."""
    if expected is NO_ORACLE:
        return False
    got, want = leaves(actual), leaves(expected)
    return len(got) == len(want) and any(
        (dtype_of(a), dtype_of(b)) in NARROWER for a, b in zip(got, want, strict=True) if a is not None
    )


def _expected(reference: Any, args: tuple[np.ndarray, ...]) -> Any:
    """NumPy's result on the same host arrays; NO_ORACLE where NumPy now refuses them (the
    manifest said it takes them: a NumPy upgrade, not a TensorFlow failure)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return reference(*[a.copy() for a in args])
    except Exception:
        return NO_ORACLE
