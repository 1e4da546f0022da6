"""torch.frombuffer: a 1-D tensor over a Python buffer, against NumPy's frombuffer (values, dtype,
count/offset, shared memory, bit-exact specials) and its documented ValueError refusals."""

import numpy as np
import pytest
import torch

# torch dtype -> the NumPy dtype whose bytes mean the same (bfloat16: its raw 16-bit patterns)
DTYPES = {
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.float16: np.float16,
    torch.bfloat16: np.uint16,
    torch.int32: np.int32,
    torch.int64: np.int64,
    torch.uint8: np.uint8,
}
COUNTS = [1, 7, 1 << 18]  # the last one is 1 MB in float32


def _onto(buffer: object, dtype: torch.dtype, device: str, count: int = -1, offset: int = 0) -> torch.Tensor:
    # frombuffer always makes a CPU tensor; .to(device) is a no-op on the CPU (still sharing the buffer)
    return torch.frombuffer(buffer, dtype=dtype, count=count, offset=offset).to(device)


def _as_float64(t: torch.Tensor) -> np.ndarray:
    return t.cpu().double().numpy()


def _expected(buffer: bytearray, dtype: torch.dtype, count: int = -1, offset: int = 0) -> np.ndarray:
    raw = np.frombuffer(buffer, dtype=DTYPES[dtype], count=count, offset=offset)
    if dtype == torch.bfloat16:  # bfloat16 is the high half of a float32
        return (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return raw.astype(np.float64)


def _buffer(n: int, dtype: torch.dtype) -> bytearray:
    rng = np.random.default_rng(n)
    values = rng.integers(-100, 100, n) if dtype != torch.uint8 else rng.integers(0, 256, n)
    if dtype == torch.bfloat16:  # small integers are exact in bfloat16: keep their float32 high halves
        return bytearray((values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes())
    return bytearray(values.astype(DTYPES[dtype]).tobytes())


@pytest.mark.parametrize("dtype", list(DTYPES), ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("n", COUNTS, ids=["one", "odd", "large"])
def test_frombuffer_values(device, timed, dtype, n):
    buffer = _buffer(n, dtype)
    out = timed(_onto, buffer, dtype, device)
    assert out.dtype == dtype and out.shape == (n,)
    np.testing.assert_array_equal(_as_float64(out), _expected(buffer, dtype))


@pytest.mark.parametrize(
    "count,offset", [(-1, 8), (3, 0), (3, 12), (1, 36)], ids=["offset", "count", "both", "last"]
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_frombuffer_count_and_offset(device, timed, dtype, count, offset):
    buffer = _buffer(40 // np.dtype(DTYPES[dtype]).itemsize, dtype)
    offset -= offset % np.dtype(DTYPES[dtype]).itemsize  # keep the offset on an element boundary
    out = timed(_onto, buffer, dtype, device, count, offset)
    expected = _expected(buffer, dtype, count, offset)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(_as_float64(out), expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_frombuffer_keeps_special_values_bitwise(device, timed, dtype):
    values = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1.5], dtype=DTYPES[dtype])
    buffer = bytearray(values.tobytes())
    out = timed(_onto, buffer, dtype, device)
    # compare the bytes: -0.0 keeps its sign bit and NaN its payload
    assert out.cpu().numpy().tobytes() == values.tobytes()


def test_frombuffer_shares_memory_with_the_buffer(device, timed):
    buffer = bytearray(np.arange(6, dtype=np.float32).tobytes())
    with timed.region():
        out = torch.frombuffer(buffer, dtype=torch.float32)  # CPU tensor: not handed to the device check
    assert out.device.type == "cpu"
    out[2] = -7.0  # a write through the tensor lands in the buffer ...
    assert np.frombuffer(buffer, dtype=np.float32)[2] == -7.0
    buffer[0:4] = np.float32(42.0).tobytes()  # ... and a write to the buffer shows in the tensor
    assert out[0].item() == 42.0


def test_frombuffer_byte_order_is_native(device, timed):
    buffer = bytearray(np.array([-1, 0, 0, 0, 1, 1, 0, 0], dtype=np.int8).tobytes())
    out = timed(_onto, buffer, torch.int32, device)
    assert out.tolist() == np.frombuffer(buffer, dtype=np.int32).tolist()


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"buffer": bytearray(), "dtype": torch.float32}, r"buffer length \(0\)"),
        ({"buffer": bytearray(16), "dtype": torch.float32, "count": 0}, r"count \(0\)"),
        ({"buffer": bytearray(16), "dtype": torch.float32, "offset": -4}, r"offset"),
        ({"buffer": bytearray(16), "dtype": torch.float32, "offset": 16}, r"offset"),
        ({"buffer": bytearray(16), "dtype": torch.float32, "count": 5}, r"requested buffer length"),
        ({"buffer": bytearray(10), "dtype": torch.float32}, r"multiple of element size"),
        ({"buffer": [1, 2, 3, 4], "dtype": torch.float32}, r"buffer protocol"),
    ],
    ids=[
        "empty",
        "count_zero",
        "negative_offset",
        "offset_at_end",
        "count_too_big",
        "ragged",
        "not_a_buffer",
    ],
)
def test_frombuffer_refusals(device, timed, kwargs, match):
    with pytest.raises(ValueError, match=match):
        timed(_onto, kwargs.pop("buffer"), kwargs.pop("dtype"), device, **kwargs)
