"""The PyTorch census: every OpInfo entry of the installed wheel on its own sample inputs, one
subtest per entry x dtype, through the same harness as the curated cases (`device`, `timed`).

What runs comes from `opinfo.yaml` beside this file (harvested from the wheel by
`portability census-harvest`: the entries, the public function each tests, every dtype the entry
knows of on any device, the per-dtype tolerance policy of params.yaml). Every dtype runs on every
device, declared supported there or not: "declared unsupported but works" and "declared supported
but fails" are findings.

The samples are built as upstream's tests build them: the generator gets the device as its
argument, with no default device around it (it keeps on the CPU what it builds there on purpose,
tensor_split's indices); a generator that raises is `no_sample` (runner/device_oracle.py).
Per sample (seeded: torch.manual_seed(0) before the generator): the function under test is called
through `timed` (warm-up, then the timed call, routed through the mode). The oracles:
- eager: the entry's NumPy reference (`op.ref` on `sample.numpy()`) where it has one, else none
  (the sample passes if the op runs, and the row is `ran`, not `works`);
- eager on a device that is not the host CPU, beside the reference: the host CPU's result of the
  same sample (the differential oracle: its tensors copied to the CPU before the call), unless the
  entry is not comparable between two executions (below) or the CPU's result changes with the seed;
- compiled: the eager result of the same function on a fresh copy of the same sample, unless PyTorch
  itself declares the entry's values not comparable between two executions (an entry-wide skip of
  test_compare_cpu and kin saying its output is non-deterministic or undefined: `torch.empty`,
  `new_empty_strided`, dropout; the manifest's `oracle_declared.not_comparable`), or the eager result
  changes with the seed: then none (the sample passes if it runs).
PyTorch's own tolerance overrides for the upstream test making the same comparison
(test_numpy_ref, inductor's test_comprehensive; the manifest's `oracle_declared.tolerance`) loosen
the policy for the entry and dtype, as they loosen upstream's assertEqual.
A sample fails when the op raises, or when its values leave the dtype's tolerance
(|actual - expected| <= atol + rtol * |expected| with the tolerance of the output's dtype, NaN
matching NaN; dtypes themselves are not compared, as test_numpy_ref does not).
The subtest reports its oracle, samples, samples failed and the largest absolute and relative
deviations over the samples compared (`record_property`, kept as results columns), and fails if any
sample failed, re-raising the first error as itself so the failure rules read the framework's own
exception. Where upstream tests the same: test/test_ops.py (TestCommon.test_numpy_ref,
test_compare_cpu), test/inductor/test_torchinductor_opinfo.py (compiled vs eager), and torch_xla's
test/test_ops.py (XLA vs CPU on the same samples).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import torch

from portability_data.runner.census_rows import CensusModule, entry_id
from portability_data.runner.device_oracle import DeviceJudgement
from portability_data.runner.oracle import NO_ORACLE, deviation

CENSUS = CensusModule(__file__)
pytest_generate_tests = CENSUS.generate_tests


@cache
def ops_by_entry() -> dict[str, Any]:
    """entry id -> OpInfo, from the wheel's database (imported once per worker: ~7 s)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return {entry_id(op.name, op.variant_test_name): op for op in op_db}


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    entry, dtype_name = census_pair
    op = CENSUS.installed(ops_by_entry(), entry, torch.__version__)
    compiled = timed.mode == "compiled"
    if compiled:
        oracle = "none" if CENSUS.not_comparable(entry) else "eager"
    else:
        oracle = "reference" if op.ref is not None else "none"
    judgement = DeviceJudgement(
        CENSUS.tolerances_for(entry, timed.mode, dtype_name), timed, torch.manual_seed
    )
    comparable = not CENSUS.not_comparable(entry)
    torch.manual_seed(0)
    dtype = getattr(torch, dtype_name)
    samples = judgement.build(
        lambda: CENSUS.samples(op.sample_inputs(device, dtype, requires_grad=False), timed.mode), device
    )

    def run_one(sample: Any) -> tuple[Any, Any, Any]:
        pristine = _copy(sample)
        twin = judgement.twin(op.op, sample.input, *sample.args, **sample.kwargs) if comparable else None
        actual = timed(op.op, sample.input, *sample.args, **sample.kwargs)
        return actual, _expected(op, pristine, oracle, judgement.tolerances), twin

    judgement.run(samples, run_one)
    judgement.record(record_property, oracle)


def _copy(sample: Any) -> Any:
    """The sample with every tensor cloned: the oracle must see the inputs as they were."""
    return sample.transform(lambda t: t.clone() if isinstance(t, torch.Tensor) else t)


def _expected(op: Any, sample: Any, oracle: str, tolerances: dict[str, dict[str, float]]) -> Any:
    """What the sample's result is compared with; NO_ORACLE when nothing can judge it: no
    reference, a reference that cannot take the sample (NumPy has no bfloat16), or, against eager,
    an op whose eager result changes with the random seed (dropout, normal, ...)."""
    if oracle == "eager":
        results = []
        for seed in (0, 1):
            args, kwargs = _call_args(_copy(sample))
            torch.manual_seed(seed)
            results.append(op.op(*args, **kwargs))
        if deviation(results[0], results[1], tolerances)[2] is not None:
            return NO_ORACLE
        return results[0]
    if oracle == "reference":
        try:
            host = sample.numpy()  # the same sample with NumPy arrays in place of tensors
            return op.ref(host.input, *host.args, **host.kwargs)
        except Exception:
            return NO_ORACLE
    return NO_ORACLE


def _call_args(sample: Any) -> tuple[tuple, dict]:
    return (sample.input, *sample.args), sample.kwargs
