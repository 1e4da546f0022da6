"""torch.autograd.Variable: the deprecated wrapper; Variable(t, requires_grad=...) returns a leaf Tensor."""

import numpy as np
import pytest
import torch
from torch.autograd import Variable


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64]


def _tensor(shape, dtype, device):
    return torch.from_numpy(np.random.default_rng(0).standard_normal(shape)).to(device=device, dtype=dtype)


def _wrap(timed, *args, **kwargs):
    return timed(Variable, *args, **kwargs)


def _wrap_to(host, device):
    return Variable(host, requires_grad=True).to(device)


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
@pytest.mark.parametrize("shape", [(0,), (), (3, 5), (512, 512)], ids=["empty", "scalar", "2d", "large"])
def test_variable_returns_leaf_tensor(device, timed, dtype, shape):
    x = _tensor(shape, dtype, device)
    v = _wrap(timed, x, requires_grad=True)
    assert type(v) is torch.Tensor and isinstance(v, Variable)
    assert v.requires_grad and v.is_leaf and v.grad_fn is None
    assert v.dtype == dtype and v.shape == x.shape and v.device == x.device
    assert v.data_ptr() == x.data_ptr() or x.numel() == 0
    np.testing.assert_array_equal(_np(v), _np(x))


def test_variable_default_does_not_require_grad(device, timed):
    x = _tensor((4,), torch.float32, device)
    v = _wrap(timed, x)
    assert not v.requires_grad and v.is_leaf
    assert not x.requires_grad, "wrapping does not change the input"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_variable_gradient(device, timed, dtype):
    x = _tensor((3, 4), dtype, device)
    v = _wrap(timed, x, requires_grad=True)
    (v**2).sum().backward()
    np.testing.assert_allclose(_np(v.grad), 2 * _np(x), rtol=1e-6)
    assert x.grad is None


def test_variable_detaches_from_graph(device, timed):
    a = _tensor((3,), torch.float64, device).requires_grad_()
    b = a * 2
    v = _wrap(timed, b)
    assert v.grad_fn is None and not v.requires_grad


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool], ids=_ids)
def test_variable_integer_cannot_require_grad(device, timed, dtype):
    x = torch.ones(3, dtype=dtype, device=device)
    assert _wrap(timed, x).dtype == dtype
    with pytest.raises(RuntimeError):
        _wrap(timed, x, requires_grad=True)


def test_variable_without_data_and_legacy_volatile(device, timed):
    empty = _wrap(timed)
    assert empty.shape == (0,) and empty.dtype == torch.get_default_dtype()
    with pytest.raises(TypeError):
        _wrap(timed, [1.0, 2.0])
    with pytest.warns(UserWarning, match="volatile"):
        _wrap(timed, torch.ones(2, device=device), volatile=True)


@pytest.mark.accelerator_only
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_variable_to_device_from_host(device, timed, dtype):
    host = torch.from_numpy(np.arange(6.0).reshape(2, 3)).to(dtype)
    v = timed(_wrap_to, host, device)
    assert v.device.type == torch.device(device).type and not v.is_leaf
    v.sum().backward()
    leaf = v.grad_fn.next_functions[0][0].variable
    assert leaf.device.type == "cpu"
    np.testing.assert_array_equal(_np(leaf.grad), np.ones((2, 3)))
