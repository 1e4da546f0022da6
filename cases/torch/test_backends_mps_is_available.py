"""torch.backends.mps.is_available: a bool that agrees with the build, the platform, the accelerator
API and whether MPS tensors can really be made; on an MPS device, tensors there round-trip per dtype."""

import platform
import sys

import numpy as np
import pytest
import torch


def _available(timed) -> bool:
    return timed(torch.backends.mps.is_available)


def test_returns_a_stable_bool(device, timed):
    first = _available(timed)
    assert type(first) is bool
    assert all(_available(timed) is first for _ in range(3))


def test_implies_built_and_apple_platform(device, timed):
    available = _available(timed)
    if available:
        # MPS is Metal: only on a macOS build that compiled it in
        assert torch.backends.mps.is_built() and sys.platform == "darwin"
    if not torch.backends.mps.is_built() or sys.platform != "darwin":
        assert available is False


def test_agrees_with_the_accelerator_api(device, timed):
    available = _available(timed)
    accelerator = torch.accelerator.current_accelerator()
    # with MPS available it is the current accelerator (no other accelerator exists on macOS builds)
    assert (accelerator is not None and accelerator.type == "mps") is available


@pytest.mark.parametrize("factory", ["empty", "zeros", "to"])
def test_agrees_with_making_mps_tensors(device, timed, factory):
    available = _available(timed)

    def make() -> torch.Tensor:
        if factory == "to":
            return torch.ones(3, device="cpu").to("mps")
        return getattr(torch, factory)(3, device="mps")

    if available:
        assert make().device.type == "mps"
    else:
        with pytest.raises(RuntimeError):
            make()


@pytest.mark.devices("mps")
def test_platform_version_on_mps(device, timed):
    assert _available(timed) is True
    # documented minimum for MPS: macOS 12.3+
    major, minor = (int(p) for p in platform.mac_ver()[0].split(".")[:2])
    assert (major, minor) >= (12, 3)


@pytest.mark.devices("mps")
@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64],
    ids=lambda d: str(d).removeprefix("torch."),
)
@pytest.mark.parametrize("n", [0, 1023, 1 << 18], ids=["empty", "odd", "large"])
def test_mps_tensors_round_trip(device, timed, dtype, n):
    assert _available(timed) is True
    host = torch.from_numpy(np.arange(n, dtype=np.float64) % 251).to(dtype)  # deliberately on the host
    on_mps = host.to("mps")  # float64 is not supported by the MPS backend: that is a result, let it fail
    assert on_mps.device.type == "mps" and on_mps.dtype == dtype
    np.testing.assert_array_equal(on_mps.cpu().double().numpy(), host.double().numpy())
