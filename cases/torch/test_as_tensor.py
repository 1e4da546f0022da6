"""torch.as_tensor: data made a tensor on the device under test: NumPy arrays per dtype and shape,
nested lists and scalars, an explicit dtype, the values against the source; the documented
sharing (the same tensor back, NumPy memory shared on the CPU) and copies; ragged lists refused."""

import numpy as np
import pytest
import torch

NUMPY_DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool", "complex64"]
SHAPES = [(), (0,), (7,), (5, 3), (512, 512)]


def values_of(dtype, shape):
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return rng.uniform(size=shape) > 0.5
    if dtype == "complex64":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_a_numpy_array_keeps_its_values_and_dtype(device, timed, dtype, shape):
    source = values_of(dtype, shape)
    out = timed(lambda a: torch.as_tensor(a, device=device), source)
    assert out.device.type == torch.device(device).type
    assert out.dtype == torch.from_numpy(np.empty(0, dtype)).dtype and tuple(out.shape) == shape
    np.testing.assert_array_equal(out.cpu().numpy(), source)


@pytest.mark.parametrize(
    ("data", "dtype"),
    [
        ([[1, 2], [3, 4]], torch.int64),
        ([0.5, -1.25, 3.0], torch.float32),
        (3, torch.int64),
        (True, torch.bool),
    ],
    ids=["int_list", "float_list", "int_scalar", "bool_scalar"],
)
def test_python_data_takes_torchs_default_dtypes(device, timed, data, dtype):
    out = timed(lambda d: torch.as_tensor(d, device=device), data)
    assert out.dtype == dtype and out.device.type == torch.device(device).type
    np.testing.assert_array_equal(out.cpu().numpy(), np.asarray(data))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.int32])
def test_a_dtype_asked_for_converts(device, timed, dtype):
    source = np.linspace(-4, 4, 33, dtype=np.float32)
    out = timed(lambda a: torch.as_tensor(a, dtype=dtype, device=device), source)
    assert out.dtype == dtype
    expected = torch.from_numpy(source).to(dtype)
    torch.testing.assert_close(out.cpu(), expected, rtol=0, atol=0)


def test_a_tensor_of_the_dtype_and_device_comes_back_itself(device, timed):
    tensor = torch.arange(10, dtype=torch.float32, device=device)
    same = timed(lambda t: torch.as_tensor(t, dtype=torch.float32, device=device), tensor)
    torch.testing.assert_close(same, tensor)
    assert torch.as_tensor(tensor, dtype=torch.float32, device=device) is tensor
    converted = torch.as_tensor(tensor, dtype=torch.float64)
    assert converted is not tensor and converted.dtype == torch.float64


def test_numpy_memory_is_shared_on_the_cpu_only():
    source = np.zeros(4, np.float32)
    shared = torch.as_tensor(source)
    source[0] = 7.0
    assert shared[0].item() == 7.0  # documented: no copy for a CPU array of a supported dtype


def test_ragged_lists_are_refused(device):
    with pytest.raises((ValueError, TypeError)):
        torch.as_tensor([[1, 2], [3]], device=device)
