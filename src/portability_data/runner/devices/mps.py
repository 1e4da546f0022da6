"""Apple's Metal GPU: torch's mps device, tensorflow-metal (which registers a `GPU` device) and
jax-metal (platform METAL). An op without an MPS kernel raises: the worker's environment drops
PYTORCH_ENABLE_MPS_FALLBACK (docs/DEVICE_PATHS.md)."""

from __future__ import annotations

from portability_data.runner.backends import (
    DeviceUnavailableError,
    JaxBackend,
    TensorFlowBackend,
    TorchBackend,
)
from portability_data.runner.devices import DevicePath


class TorchMps(TorchBackend):
    device_type = "mps"

    def find_device(self) -> None:
        if not self.torch.backends.mps.is_available():
            raise DeviceUnavailableError("device mps requested but torch.backends.mps is not available")

    def sync(self, result: object) -> None:
        self.torch.mps.synchronize()


class TensorFlowMps(TensorFlowBackend):
    device_type = "GPU"  # tensorflow-metal's device


class JaxMetal(JaxBackend):
    platform = "METAL"


PATH = DevicePath(
    name="mps",
    summary="Apple's Metal GPU (torch mps, tensorflow-metal, jax-metal)",
    backends={"torch": TorchMps, "tensorflow": TensorFlowMps, "jax": JaxMetal},
    needs="an Apple silicon Mac and the frameworks' arm64 builds (tensorflow-metal, jax-metal)",
    what_to_do="MPS needs an Apple silicon Mac (macOS 12.3+) and the framework's arm64 build; "
    "else leave --device mps out",
)
