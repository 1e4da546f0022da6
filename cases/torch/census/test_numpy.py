"""The PyTorch census of its NumPy namesakes: every torch function whose own OpInfo entry names a
NumPy function as its reference (test_numpy_ref's `ref`), on the framework-neutral inputs of
runner/generator.py (the very arrays jax.numpy and tf.experimental.numpy get under the same NumPy
name), one subtest per NumPy name x dtype, through the same harness as the curated cases
(`device`, `timed`).

What runs comes from `numpy.yaml` beside this file (harvested by
pipeline/census_harvest_torch_numpy.py: the torch function per NumPy name, the OpInfo entry that
declares it, and per dtype the input kinds NumPy accepts; the per-dtype tolerance policy of
params.yaml). Compiled mode runs the first few samples only (census.compiled.max_samples),
through torch.compile (the harness records whether it made one graph).

Per sample: the generator's arrays become tensors on the device (bfloat16 by way of float32, which
holds every bfloat16 value exactly: torch.from_numpy takes no ml_dtypes array), the torch function
is called on them through `timed`, and the oracle is the NumPy function on the same host arrays; on
a device that is not the host CPU also torch's own result of the same tensors on the host CPU (the
differential oracle, runner/device_oracle.py). torch computes an integer input's float function in
float32 where NumPy uses float64 (torch.sqrt of int64): the row says so (oracle `numpy_32bit`, as
the JAX and TensorFlow censuses name their narrowing) and the result is judged with the tolerance of
the less precise dtype (oracle.deviation), not failed. A sample fails when torch raises, or when its
values leave the tolerance (NaN matching NaN); the message names the input kind. Where upstream tests the same
equivalence on its own inputs: test/test_ops.py, TestCommon.test_numpy_ref.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import torch

from portability_data.runner.census_rows import CensusModule
from portability_data.runner.device_oracle import DeviceJudgement
from portability_data.runner.generator import Sample, sample
from portability_data.runner.oracle import NO_ORACLE, dtype_of, leaves
from portability_data.runner.promotion import DtypeLedger

CENSUS = CensusModule(__file__)
pytest_generate_tests = CENSUS.generate_tests

NARROWER = {("float32", "float64"), ("complex64", "complex128")}


def resolve(module: Any, name: str) -> Any:
    """fft.rfft in numpy -> numpy.fft.rfft; torch.fft.rfft -> the torch function."""
    head, _, attribute = name.rpartition(".")
    if head:
        module = importlib.import_module(f"{module.__name__}.{head}")
    return getattr(module, attribute)


def as_tensor(array: np.ndarray | np.generic, device: Any) -> torch.Tensor:
    """A generator array (a NumPy scalar for the scalar kind) as a tensor on the device under
    test, value for value."""
    if array.dtype.name == "bfloat16":
        widened = np.array(array, dtype=np.float32, ndmin=0)
        return torch.from_numpy(widened).to(device=device, dtype=torch.bfloat16)
    return torch.from_numpy(np.array(array, ndmin=0)).to(device)  # a 0-d array for a scalar


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    name, dtype_name = census_pair
    entry = CENSUS.entries[name]
    kinds = CENSUS.samples(entry["kinds"][dtype_name], timed.mode)
    function = resolve(torch, entry["function"].removeprefix("torch."))
    reference = resolve(np, name)
    narrowed: list[bool] = []
    ledger = DtypeLedger()

    def run_one(given: Sample) -> tuple[Any, Any, Any]:
        on_device = [as_tensor(array, device) for array in given.args]
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
    """Whether torch returned float32 (complex64) where NumPy returned float64 (complex128)."""
    if expected is NO_ORACLE:
        return False
    got, want = leaves(actual), leaves(expected)
    return len(got) == len(want) and any(
        (dtype_of(a), dtype_of(b)) in NARROWER for a, b in zip(got, want, strict=True) if a is not None
    )


def _expected(reference: Any, args: tuple[np.ndarray, ...]) -> Any:
    """NumPy's result on the same host arrays; NO_ORACLE where NumPy now refuses them (the
    manifest said it takes them: a NumPy upgrade, not a torch failure)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return reference(*[a.copy() for a in args])
    except Exception:
        return NO_ORACLE
