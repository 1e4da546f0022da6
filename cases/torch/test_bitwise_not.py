"""torch.bitwise_not: elementwise bitwise NOT of integer and bool tensors, against numpy.invert."""

import numpy as np
import pytest
import torch


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


INTS = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
SHAPES = [(0,), (), (7,), (5, 33), (1 << 18,)]


def _tensor(shape, dtype, device, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == torch.bool:
        data = rng.integers(0, 2, shape).astype(bool)
    else:
        info = torch.iinfo(dtype)
        data = rng.integers(info.min, info.max, shape, endpoint=True, dtype=np.int64)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", INTS, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=["empty", "scalar", "odd", "2d", "large"])
def test_bitwise_not_values(device, timed, dtype, shape):
    x = _tensor(shape, dtype, device)
    out = timed(torch.bitwise_not, x)
    assert out.dtype == dtype and out.shape == x.shape
    np.testing.assert_array_equal(out.cpu().numpy(), np.invert(x.cpu().numpy()))


@pytest.mark.parametrize("dtype", INTS[1:], ids=_ids)
def test_bitwise_not_extremes(device, timed, dtype):
    info = torch.iinfo(dtype)
    x = torch.tensor([info.min, info.max, 0, -1 if info.min < 0 else 1], dtype=dtype, device=device)
    out = timed(torch.bitwise_not, x)
    # ~v == -v - 1 in two's complement, and wraps inside the type for unsigned types.
    expected = [(-int(v) - 1) % (1 << info.bits) for v in x.cpu().tolist()]
    if info.min < 0:
        expected = [e - (1 << info.bits) if e > info.max else e for e in expected]
    assert out.cpu().tolist() == expected


def test_bitwise_not_bool_is_logical_not(device, timed):
    x = torch.tensor([True, False, True], device=device)
    out = timed(torch.bitwise_not, x)
    assert out.dtype == torch.bool and out.cpu().tolist() == [False, True, False]


def test_bitwise_not_involution_and_noncontiguous(device, timed):
    x = _tensor((64, 48), torch.int32, device).t()[::2]
    assert not x.is_contiguous()
    out = timed(torch.bitwise_not, x)
    np.testing.assert_array_equal(out.cpu().numpy(), np.invert(x.cpu().numpy()))
    assert torch.equal(timed(torch.bitwise_not, out), x)


def test_bitwise_not_out(device, timed):
    x = _tensor((9,), torch.int64, device)
    out = torch.empty(9, dtype=torch.int64, device=device)
    result = timed(torch.bitwise_not, x, out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), np.invert(x.cpu().numpy()))
    assert result.data_ptr() == out.data_ptr() or torch.equal(result, out)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
def test_bitwise_not_rejects_floats(device, timed, dtype):
    x = torch.ones(3, dtype=dtype, device=device)
    with pytest.raises((RuntimeError, TypeError)):
        timed(torch.bitwise_not, x)
