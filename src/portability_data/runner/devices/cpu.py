"""The host CPU: each framework on the machine's own processor, its compiled mode through the
framework's own compiler (torch.compile's inductor, XLA for jax.jit and tf.function's
jit_compile). The reference every other path is compared with."""

from __future__ import annotations

from portability_data.runner.backends import JaxBackend, TensorFlowBackend, TorchBackend, cpu_model
from portability_data.runner.devices import DevicePath


class TorchCpu(TorchBackend):
    device_type = "cpu"

    def describe(self) -> str:
        return cpu_model()

    def driver(self) -> str | None:
        return None


class TensorFlowCpu(TensorFlowBackend):
    device_type = "CPU"

    def describe(self) -> str:
        return cpu_model()


class JaxCpu(JaxBackend):
    platform = "cpu"

    def describe(self) -> str:
        return cpu_model()


PATH = DevicePath(
    name="cpu",
    summary="the host CPU (torch inductor, XLA for jax.jit and tf.function jit_compile)",
    backends={"torch": TorchCpu, "tensorflow": TensorFlowCpu, "jax": JaxCpu},
    what_to_do='the framework does not start here: install it (pip install -e ".[frameworks]") and retry',
)
