"""PyTorch on torch_xla's PJRT device other than a TPU (XLA CPU here: the XLA layer without a TPU,
issue 27), eager (torch_xla's lazy tensors) and compiled (torch.compile's openxla backend).

The backend counts, per call, the ops torch_xla ran on the host (its executed fallback counters)
and the graphs it compiled (torch_xla.debug.metrics); a host fallback leaves its output on xla:0,
so only the counters can see it (docs/DEVICE_PATHS.md). torch_xla 2.9 needs torch 2.9, so the path
has an environment of its own (`XLA_SETUP`); it is torch_xla's last release.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from portability_data.runner.backends import DeviceEvents, DeviceUnavailableError, TorchBackend
from portability_data.runner.devices import DevicePath

XLA_SETUP = (
    "the xla device needs torch_xla in an environment of its own (torch 2.9 + torch_xla 2.9, not "
    'this pinned torch): python3 -m venv .venv-xla && .venv-xla/bin/pip install -e ".[xla]", then '
    "PJRT_DEVICE=CPU .venv-xla/bin/portability run --framework torch --device xla (docs/DEVICE_PATHS.md)"
)


class TorchXla(TorchBackend):
    """torch on a PJRT device through torch_xla; `on_tpu` says which kind of PJRT device the path
    takes (tpu: a TPU, runner/devices/tpu.py; xla: any other)."""

    device_type = "xla"
    compiler = "openxla"  # torch.compile's backend on XLA: dynamo's graphs lowered by torch_xla
    counts_device_events = True
    on_tpu = False
    setup = XLA_SETUP  # what to do where torch_xla is missing

    def find_device(self) -> None:
        try:
            import torch_xla
            import torch_xla.debug.metrics as metrics
        except ImportError as exc:
            raise DeviceUnavailableError(
                f"device {self.device} requested but torch_xla is missing ({exc}): {self.setup}"
            ) from None
        self.torch_xla, self.metrics = torch_xla, metrics
        hardware = self.xla_hardware()
        if (hardware == "TPU") != self.on_tpu:
            raise DeviceUnavailableError(
                f"device {self.device} requested but torch_xla's PJRT device is {hardware} "
                f"(PJRT_DEVICE: {'TPU for tpu' if self.on_tpu else 'CPU or CUDA for xla'})"
            )

    def xla_hardware(self) -> str:
        """torch_xla's PJRT device kind: TPU, CPU, CUDA."""
        import torch_xla.core.xla_model as xm

        return str(xm.xla_device_hw(self.torch_xla.device()))

    def handle(self) -> str:
        return str(self.torch_xla.device())

    def sync(self, result: Any) -> None:
        self.torch_xla.sync(wait=True)  # cut the traced graph, run it, wait for it

    @contextlib.contextmanager
    def observe(self, events: DeviceEvents, timed: bool) -> Iterator[None]:
        # What the test traced before the call (its inputs) runs now, outside the call's counts.
        self.torch_xla.sync(wait=True)
        ops, compiles = self._fallback_counts(), self._compiles()
        try:
            yield
        finally:
            for name, count in self._fallback_counts().items():
                if count > ops.get(name, 0):
                    events.fallback_ops[name] += count - ops.get(name, 0)
            compiled = self._compiles() - compiles
            events.compiles += compiled
            events.compiles_timed += compiled if timed else 0

    def _fallback_counts(self) -> dict[str, int]:
        """aten op -> times torch_xla ran it on the host, since the process began."""
        return {
            name: int(self.metrics.counter_value(name) or 0) for name in self.metrics.executed_fallback_ops()
        }

    def _compiles(self) -> int:
        data = self.metrics.metric_data("CompileTime")
        return int(data[0]) if data else 0

    def describe(self) -> str:
        return f"XLA {self.xla_hardware()} (PJRT)"

    def driver(self) -> str | None:
        import torch_xla.runtime as xr

        return f"torch_xla {self.torch_xla.__version__} (PJRT {xr.device_type()})"

    def device_facts(self) -> dict[str, Any]:
        import torch_xla.runtime as xr

        return {"torch_xla": self.torch_xla.__version__, "pjrt_device": xr.device_type()}


PATH = DevicePath(
    name="xla",
    summary="PyTorch on torch_xla's PJRT device that is not a TPU (XLA CPU here); compiled: openxla",
    backends={"torch": TorchXla},
    needs=XLA_SETUP,
    not_served={
        "tensorflow": "the xla path is torch_xla's; TensorFlow's XLA is its compiled mode",
        "jax": "the xla path is torch_xla's; JAX is on XLA on every device",
    },
    what_to_do='build its environment: python3 -m venv .venv-xla && .venv-xla/bin/pip install -e ".[xla]", '
    "then run with PJRT_DEVICE=CPU .venv-xla/bin/portability",
)
