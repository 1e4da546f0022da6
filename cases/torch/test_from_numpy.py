"""torch.from_numpy: a tensor over an ndarray's memory, against the array itself (values, dtype,
shape, strides, shared memory, bit-exact specials) and the documented refusals."""

import warnings

import numpy as np
import pytest
import torch

# the documented dtype table: NumPy dtype -> torch dtype
DTYPES = {
    np.float32: torch.float32,
    np.float64: torch.float64,
    np.float16: torch.float16,
    np.complex64: torch.complex64,
    np.complex128: torch.complex128,
    np.int8: torch.int8,
    np.int16: torch.int16,
    np.int32: torch.int32,
    np.int64: torch.int64,
    np.uint8: torch.uint8,
    np.uint16: torch.uint16,
    np.uint32: torch.uint32,
    np.uint64: torch.uint64,
    np.bool_: torch.bool,
}
SHAPES = [(), (0,), (7,), (3, 5, 11), (1 << 18,)]  # the last one is 1 MB in float32


def _onto(array: np.ndarray, device: str) -> torch.Tensor:
    # from_numpy always makes a CPU tensor; .to(device) is a no-op on the CPU (still sharing memory)
    return torch.from_numpy(array).to(device)


def _array(shape: tuple[int, ...], np_dtype: type) -> np.ndarray:
    rng = np.random.default_rng(len(shape))
    values = rng.integers(0, 100, shape)
    if np_dtype is np.bool_:
        return np.asarray(values % 2 == 0)  # asarray: 0-d arithmetic gives NumPy scalars
    out = values.astype(np_dtype)
    if np.issubdtype(np_dtype, np.complexfloating):
        out = out + 1j * rng.integers(-50, 50, shape).astype(np_dtype)
    return np.asarray(out, dtype=np_dtype)


@pytest.mark.parametrize("np_dtype", list(DTYPES), ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_from_numpy_values_dtype_shape(device, timed, np_dtype, shape):
    array = _array(shape, np_dtype)
    out = timed(_onto, array, device)
    assert out.dtype == DTYPES[np_dtype] and tuple(out.shape) == shape
    np.testing.assert_array_equal(out.cpu().numpy(), array)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.float16], ids=lambda d: np.dtype(d).name)
def test_from_numpy_keeps_special_values_bitwise(device, timed, np_dtype):
    array = np.array([-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-30], dtype=np_dtype)
    out = timed(_onto, array, device)
    assert out.cpu().numpy().tobytes() == array.tobytes()  # sign of zero, NaN payloads, denormals


@pytest.mark.parametrize(
    "view",
    ["transposed", "every_other", "column", "broadcast"],
)
def test_from_numpy_keeps_strides(device, timed, view):
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    array = {
        "transposed": base.T,
        "every_other": base[::2, 1::3],
        "column": base[:, 4],
        "broadcast": np.broadcast_to(base[0], (4, 10)),  # zero stride, read-only
    }[view]
    # A read-only array makes torch warn "not writable" once per process (TORCH_WARN_ONCE), so
    # whether this subtest sees the warning depends on what ran before it in the worker: not checked.
    with timed.region(), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = torch.from_numpy(array)
    assert out.stride() == tuple(s // array.itemsize for s in array.strides)
    assert out.data_ptr() == array.__array_interface__["data"][0]
    np.testing.assert_array_equal(out.numpy(), array)


def test_from_numpy_shares_memory(device, timed):
    array = np.arange(8, dtype=np.float32)
    with timed.region():
        out = torch.from_numpy(array)  # CPU tensor: not handed to the device check
    assert out.device.type == "cpu"
    array[3] = -1.0  # a write to the array shows in the tensor ...
    assert out[3].item() == -1.0
    out[5] = 99.0  # ... and a write through the tensor lands in the array
    assert array[5] == 99.0
    with pytest.raises(RuntimeError):
        out.resize_(100)  # documented: the returned tensor is not resizable


@pytest.mark.parametrize(
    "bad,error",
    [
        (np.arange(5.0)[::-1], ValueError),  # negative stride
        (np.zeros(3, dtype=np.dtype(np.float32).newbyteorder()), ValueError),  # non-native byte order
        (np.array([1, "a"], dtype=object), TypeError),
        (np.array(["ab"]), TypeError),
        ([1.0, 2.0], TypeError),  # not an ndarray
    ],
    ids=["negative_stride", "byteswapped", "object", "str", "list"],
)
def test_from_numpy_refusals(device, timed, bad, error):
    with pytest.raises(error):
        timed(_onto, bad, device)
