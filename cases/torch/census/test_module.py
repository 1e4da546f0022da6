"""The PyTorch census of torch.nn modules: every ModuleInfo entry of the installed wheel on its
own module inputs, one subtest per module x dtype, through the same harness as the curated cases.

What runs comes from `module.yaml` beside this file (`portability census-harvest`). Per module
input (seeded: torch.manual_seed(0) before the inputs and before each construction), the module is
built from the input's constructor arguments on the CPU with no default device, moved to the
dtype and the device and put in eval mode, as upstream's TestModule.test_forward does
(test/test_modules.py), and its forward call on the input's forward arguments is timed through
`timed` (compiled mode compiles the call). The inputs are built by the generator, which takes the
device as its argument (no default device around it; one that raises is `no_sample`). The oracles:
- eager: the input's reference function where it has one (a composite written in torch ops by
  upstream, e.g. mm + bias for nn.Linear), else none (the input passes if it runs: `ran`); on a
  device that is not the host CPU also the same module, built alike, run on the host CPU on a copy
  of the same arguments (the differential oracle, runner/device_oracle.py);
- compiled: the same module called eagerly on a copy of the same arguments, twice under two seeds;
  a module whose eager output changes with the seed (nn.FractionalMaxPool3d draws its pooling
  regions, nn.RReLU its slopes) has none, as has one PyTorch declares not comparable between two
  executions (the manifest's `oracle_declared.not_comparable`).
Judged with the shared oracle (runner/oracle.py, device_oracle.py): per output dtype tolerance of params.yaml,
loosened by PyTorch's own overrides for TestModule.test_forward (`oracle_declared.tolerance`).
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import torch

from portability_data.runner.census_rows import CensusModule
from portability_data.runner.device_oracle import DeviceJudgement
from portability_data.runner.oracle import NO_ORACLE, deviation

CENSUS = CensusModule(__file__)
pytest_generate_tests = CENSUS.generate_tests


@cache
def infos_by_entry() -> dict[str, Any]:
    """entry (nn.Linear) -> ModuleInfo, from the wheel's database. The database names an entry
    after its class's module, so where a device's package rebinds a public class (importing
    torch_xla binds torch.nn.GRU to torch_xla.experimental.gru.GRU, which the database then calls
    "GRU") the entry keeps its public name: it is the nn.GRU a user of that device gets."""
    from torch.testing._internal.common_modules import module_db

    by_entry = {}
    for info in module_db:
        module_cls = info.module_cls
        rebound = getattr(torch.nn, module_cls.__name__, None) is module_cls
        name = info.name if info.name.startswith("nn.") or not rebound else f"nn.{module_cls.__name__}"
        by_entry[name] = info
    return by_entry


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    entry, dtype_name = census_pair
    info = CENSUS.installed(infos_by_entry(), entry, torch.__version__)
    dtype = getattr(torch, dtype_name)
    judgement = DeviceJudgement(
        CENSUS.tolerances_for(entry, timed.mode, dtype_name), timed, torch.manual_seed
    )
    comparable = not CENSUS.not_comparable(entry)
    torch.manual_seed(0)
    inputs = judgement.build(
        lambda: CENSUS.samples(
            info.module_inputs_func(info, device=device, dtype=dtype, requires_grad=False, training=False),
            timed.mode,
        ),
        device,
    )
    with_reference = any(module_input.reference_fn is not None for module_input in inputs)
    if timed.mode == "compiled":
        oracle = "eager" if comparable else "none"
    else:
        oracle = "reference" if with_reference else "none"

    def run_one(module_input: Any) -> tuple[Any, Any, Any]:
        with timed.building_samples():
            on_host = _built(info, module_input, dtype)
        module = copy.deepcopy(on_host).to(device)
        args, kwargs = module_input.forward_input.args, module_input.forward_input.kwargs
        pristine = copy.deepcopy((args, kwargs))
        twin = judgement.twin(on_host, *args, **kwargs) if comparable else None
        actual = timed(module, *args, **kwargs)
        return actual, _expected(module, module_input, pristine, oracle, judgement.tolerances), twin

    judgement.run(inputs, run_one)
    judgement.record(record_property, oracle)


def _built(info: Any, module_input: Any, dtype: torch.dtype) -> torch.nn.Module:
    """The module as upstream builds it for a forward test: seeded, constructed with no default
    device (on the CPU), in the dtype, eval; the test moves a copy to the device."""
    torch.manual_seed(0)
    constructor = module_input.constructor_input
    module = info.module_cls(*constructor.args, **constructor.kwargs)
    module.to(dtype)
    module.train(False)
    return module


def _expected(
    module: torch.nn.Module, module_input: Any, pristine: tuple, oracle: str, tolerances: dict[str, Any]
) -> Any:
    """What the forward call is compared with; NO_ORACLE when nothing can judge it (against eager:
    a module whose eager output changes with the seed)."""
    if oracle == "eager":
        results = []
        for seed in (0, 1):
            args, kwargs = copy.deepcopy(pristine)
            torch.manual_seed(seed)
            results.append(module(*args, **kwargs))
        if deviation(results[0], results[1], tolerances)[2] is not None:
            return NO_ORACLE
        return results[0]
    args, kwargs = pristine
    if oracle == "reference" and module_input.reference_fn is not None:
        return module_input.reference_fn(module, *args, **kwargs)
    return NO_ORACLE
