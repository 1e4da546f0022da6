"""The PyTorch census of torch.optim: every OptimizerInfo entry of the installed wheel on its own
optimizer inputs (the constructor settings upstream tests: lr, weight decay, momentum, foreach,
fused, maximize, ...), one subtest per optimizer x dtype, through the same harness.

What runs comes from `optimizer.yaml` beside this file (`portability census-harvest`).
OptimizerInfo declares no dtypes, so the manifest lists the floating dtypes (and complex64 where
the entry supports complex parameters): every result is a measurement, none is declared. Per
input (seeded), one 4 x 3 parameter with a fixed gradient is built on the device in the dtype, the
optimizer is constructed with the input's settings and `step` is timed through `timed` (a warm-up
step, then the timed step; optimizers whose step needs a closure, LBFGS, get one computing
sum(|p|^2), a real loss for complex parameters too). The result is the parameter after the two
steps. The oracle:
- eager: none on the host CPU (the input passes if the steps run and leave a finite parameter of
  the right shape, and the row is `ran`); on another device the same two steps on the host CPU on
  an identical parameter (the differential oracle, runner/device_oracle.py);
- compiled: the same two steps run eagerly on an identical parameter and optimizer.
Upstream runs the same inputs in test/test_optim.py (TestOptimRenewed).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import torch

from portability_data.runner.census_rows import CensusModule
from portability_data.runner.device_oracle import DeviceJudgement
from portability_data.runner.oracle import NO_ORACLE

CENSUS = CensusModule(__file__)
pytest_generate_tests = CENSUS.generate_tests
SHAPE = (4, 3)


@cache
def infos_by_entry() -> dict[str, Any]:
    """entry (Adam) -> OptimizerInfo, from the wheel's database."""
    from torch.testing._internal.common_optimizers import optim_db

    return {info.optim_cls.__name__: info for info in optim_db}


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    entry, dtype_name = census_pair
    info = infos_by_entry()[entry]
    dtype = getattr(torch, dtype_name)
    compiled = timed.mode == "compiled"

    def run_one(optim_input: Any) -> tuple[Any, Any, Any]:
        parameter, step = _optimizer(info, optim_input, device, dtype)
        twin = judgement.twin(_eager_twin, info, optim_input, "cpu", dtype)
        timed(step)
        actual = parameter.detach().clone()
        if not compiled:
            _check_finite(actual)
        return actual, _eager_twin(info, optim_input, device, dtype) if compiled else NO_ORACLE, twin

    judgement = DeviceJudgement(CENSUS.tolerances, timed)
    optim_inputs = judgement.build(
        lambda: CENSUS.samples(info.optim_inputs_func(device=device, dtype=dtype), timed.mode), device
    )
    judgement.run(optim_inputs, run_one)
    judgement.record(record_property, "eager" if compiled else "none")


def _optimizer(info: Any, optim_input: Any, device: Any, dtype: torch.dtype) -> tuple[torch.Tensor, Any]:
    """A seeded parameter with a fixed gradient, its optimizer, and the step to time."""
    generator = torch.Generator().manual_seed(0)
    parameter = torch.randn(SHAPE, generator=generator).to(device=device, dtype=dtype).requires_grad_(True)
    gradient = torch.randn(SHAPE, generator=generator).to(device=device, dtype=dtype)
    parameter.grad = gradient.to_sparse() if info.only_supports_sparse_grads else gradient
    optimizer = info.optim_cls([parameter], **optim_input.kwargs)
    if info.step_requires_closure:

        def closure() -> torch.Tensor:
            optimizer.zero_grad()
            loss = (parameter * parameter.conj()).real.sum()  # |p|^2: real for complex parameters too
            loss.backward()
            return loss

        return parameter, lambda: optimizer.step(closure)
    return parameter, optimizer.step


def _eager_twin(info: Any, optim_input: Any, device: Any, dtype: torch.dtype) -> torch.Tensor:
    """The parameter after the same two steps run eagerly (warm-up + timed in compiled mode)."""
    parameter, step = _optimizer(info, optim_input, device, dtype)
    step()
    step()
    return parameter.detach().clone()


def _check_finite(parameter: torch.Tensor) -> None:
    if parameter.shape != SHAPE or not torch.isfinite(parameter.to(torch.float64)).all():
        raise AssertionError(f"parameter after two steps: shape {tuple(parameter.shape)}, not all finite")
