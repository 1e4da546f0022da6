"""Result dtypes beside NumPy's: which dtype a framework's function returned, output by output,
and which NumPy returned on the same inputs. Dtype promotion is where frameworks part from NumPy
and from each other without any value being off (torch's sqrt of int8 is float32, NumPy's
float16; jax.numpy's mean of int32 is float32, NumPy's float64), and the value oracle cannot see
it: it compares values in float64 under the tolerance of the less precise dtype.

Used by the census modules that hold a NumPy namesake to NumPy on the shared generator's inputs
(cases/*/census/test_numpy.py, test_tnp.py); the rows keep `result_dtype`, `oracle_dtype` and
`dtype_mismatches` (harness.MEASURES). Its bytes are in the digest of every census case whose test
file imports it (runner/provenance.py).
"""

from __future__ import annotations

from typing import Any

from portability_data.runner.oracle import NO_ORACLE, dtype_of, leaves

SEPARATOR = " | "  # between the distinct signatures of one subtest's samples


def signature(value: Any) -> str:
    """The dtypes of an output, leaf by leaf in the oracle's order: `float32`, or `float32,int64`
    for a (values, indices) pair; `none` for a None leaf."""
    return ",".join("none" if leaf is None else dtype_of(leaf) for leaf in leaves(value))


class DtypeLedger:
    """The dtypes of one census subtest's samples: each sample that returned is noted with
    NumPy's result on the same inputs (or without one, where NumPy refused them)."""

    def __init__(self) -> None:
        self.results: list[str] = []
        self.oracles: list[str] = []
        self.mismatches = 0

    def note(self, actual: Any, expected: Any) -> None:
        """One sample's result and NumPy's (NO_ORACLE: nothing to hold it to)."""
        mine = signature(actual)
        _remember(self.results, mine)
        if expected is NO_ORACLE:
            return
        theirs = signature(expected)
        _remember(self.oracles, theirs)
        self.mismatches += mine != theirs

    def record(self, record_property: Any) -> None:
        """Report the distinct signatures (first seen first) and how many samples differed; all
        null when no sample returned."""
        record_property("result_dtype", SEPARATOR.join(self.results) or None)
        record_property("oracle_dtype", SEPARATOR.join(self.oracles) or None)
        record_property("dtype_mismatches", self.mismatches if self.oracles else None)


def _remember(seen: list[str], signature_: str) -> None:
    if signature_ not in seen:
        seen.append(signature_)
