"""torch.nn.Module.to (the study's torch.Tensor.to): moving and casting an nn.Linear in place."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _to(module, *args, **kwargs):
    return module.to(*args, **kwargs)


def _linear(device, dtype=torch.float32, **kwargs):
    torch.manual_seed(0)
    return torch.nn.Linear(3, 5, device=device, dtype=dtype, **kwargs)


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
@pytest.mark.parametrize("source", [torch.float32, torch.float64], ids=lambda d: "from_" + _ids(d))
def test_module_to_dtype(device, timed, source, dtype):
    m = _linear(device, source)
    before = {k: _np(v).astype(np.float64) for k, v in m.state_dict().items()}
    weight = m.weight
    result = timed.once(_to, m, dtype)
    assert result is m and m.weight is weight, "Module.to works in place and keeps the Parameter objects"
    for name, value in m.state_dict().items():
        assert value.dtype == dtype
        expected = torch.from_numpy(before[name]).to(dtype).double().numpy()
        np.testing.assert_array_equal(_np(value).astype(np.float64), expected)


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
def test_module_to_device_and_dtype(device, timed, dtype):
    m = _linear(device)
    timed.once(_to, m, device, dtype)
    assert m.weight.device.type == torch.device(device).type and m.weight.dtype == dtype
    x = torch.ones(2, 3, device=device, dtype=dtype)
    assert m(x).dtype == dtype


def test_module_to_like_tensor(device, timed):
    m = _linear(device)
    other = torch.empty(0, dtype=torch.float64, device=device)
    timed.once(_to, m, other)
    assert m.weight.dtype == torch.float64 and m.bias.dtype == torch.float64


def test_module_to_keeps_grad_and_requires_grad(device, timed):
    m = _linear(device)
    m(torch.ones(1, 3, device=device)).sum().backward()
    timed.once(_to, m, torch.float64)
    assert m.weight.requires_grad and m.weight.grad is not None
    assert m.weight.grad.dtype == torch.float64
    np.testing.assert_array_equal(_np(m.bias.grad), np.ones(5))


def test_module_to_only_casts_floating_point(device, timed):
    m = _linear(device)
    m.register_buffer("counter", torch.tensor([1, 2], dtype=torch.int64, device=device))
    timed.once(_to, m, torch.float16)
    assert m.counter.dtype == torch.int64 and m.weight.dtype == torch.float16
    with pytest.raises(TypeError):
        m.to(torch.int32)


def test_module_to_complex(device, timed):
    m = _linear(device)
    timed.once(_to, m, torch.complex64)
    assert m.weight.dtype == torch.complex64


@pytest.mark.accelerator_only
@pytest.mark.parametrize("non_blocking", [False, True], ids=["blocking", "non_blocking"])
def test_module_to_moves_host_module_to_device(device, timed, non_blocking):
    m = _linear("cpu")
    expected = _np(m.weight).copy()
    timed.once(_to, m, device, non_blocking=non_blocking)
    assert m.weight.device.type == torch.device(device).type
    np.testing.assert_array_equal(_np(m.weight), expected)
    back = m.to("cpu")
    assert back.weight.device.type == "cpu"
