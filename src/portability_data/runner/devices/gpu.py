"""A GPU: CUDA or ROCm for torch (ROCm builds keep the `cuda` device type), TensorFlow's and JAX's
GPU devices (docs/DEVICE_PATHS.md reviews each call against the framework's documentation)."""

from __future__ import annotations

from portability_data.runner.backends import (
    DeviceUnavailableError,
    JaxBackend,
    TensorFlowBackend,
    TorchBackend,
)
from portability_data.runner.devices import DevicePath


class TorchCuda(TorchBackend):
    device_type = "cuda"

    def find_device(self) -> None:
        if not self.torch.cuda.is_available():
            raise DeviceUnavailableError("device gpu requested but torch.cuda.is_available() is False")

    def sync(self, result: object) -> None:
        self.torch.cuda.synchronize()

    def describe(self) -> str:
        return self.torch.cuda.get_device_name(0)


class TensorFlowGpu(TensorFlowBackend):
    device_type = "GPU"


class JaxGpu(JaxBackend):
    platform = "gpu"


PATH = DevicePath(
    name="gpu",
    summary="a CUDA or ROCm GPU (torch inductor, XLA for JAX and TensorFlow)",
    backends={"torch": TorchCuda, "tensorflow": TensorFlowGpu, "jax": JaxGpu},
    needs="the framework's GPU build (torch with CUDA, jax[cuda12], tensorflow[and-cuda])",
    what_to_do="check that `nvidia-smi` (or `rocm-smi`) lists the GPU and that the framework's GPU build is "
    "installed (torch with CUDA, jax[cuda12], tensorflow[and-cuda]); else leave --device gpu out",
)
