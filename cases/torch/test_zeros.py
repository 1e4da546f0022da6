"""torch.zeros: a tensor filled with zeros (the constructor, timed through the mode)."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int8,
    torch.int64,
    torch.bool,
    torch.complex64,
]


def _zeros(timed, *args, **kwargs):
    return timed(torch.zeros, *args, **kwargs)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "shape",
    [(), (0,), (7,), (3, 0, 2), (5, 33), (1 << 20,)],
    ids=["scalar", "empty", "odd", "empty_3d", "2d", "large"],
)
def test_zeros_values(device, timed, dtype, shape):
    out = _zeros(timed, shape, dtype=dtype, device=device)
    assert out.dtype == dtype and out.shape == shape and out.device.type == torch.device(device).type
    assert out.is_contiguous() and not out.requires_grad
    np.testing.assert_array_equal(_np(out), np.zeros(shape, dtype=_np(out).dtype))


def test_zeros_varargs_and_default_dtype(device, timed):
    out = _zeros(timed, 2, 3, device=device)
    assert out.shape == (2, 3) and out.dtype == torch.get_default_dtype()
    assert _zeros(timed, torch.Size([4]), device=device).shape == (4,)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=_ids)
def test_zeros_positive_zero_and_requires_grad(device, timed, dtype):
    out = _zeros(timed, 16, dtype=dtype, device=device, requires_grad=True)
    assert out.requires_grad and out.is_leaf
    assert not np.signbit(_np(out).astype(np.float32)).any()
    (out * 3).sum().backward()
    np.testing.assert_array_equal(_np(out.grad), np.full(16, 3.0))


def test_zeros_out_argument(device, timed):
    target = torch.full((2, 2), 7.0, device=device)
    out = _zeros(timed, (3, 4), out=target)
    assert out is target and target.shape == (3, 4) and not target.any()


@pytest.mark.parametrize("bad", [(-1,), (2, -3)], ids=["negative", "negative_inner"])
def test_zeros_rejects_negative_sizes(device, timed, bad):
    with pytest.raises(RuntimeError):
        _zeros(timed, bad, device=device)


def test_zeros_layout_and_memory_format(device, timed):
    out = _zeros(timed, (2, 3, 4, 5), device=device).to(memory_format=torch.channels_last)
    assert out.is_contiguous(memory_format=torch.channels_last) and not out.any()
    with pytest.raises(RuntimeError):
        _zeros(timed, (2, 2), dtype=torch.int64, device=device, requires_grad=True)
