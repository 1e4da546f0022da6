"""torch.nn.parameter.Parameter: __torch_function__ results, deepcopy, pickling and UninitializedParameter."""

import copy
import io
import pickle

import numpy as np
import pytest
import torch
from torch.nn import parameter

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float64).numpy()


def _param(shape: tuple[int, ...], dtype: torch.dtype, device: str, **kwargs) -> parameter.Parameter:
    data = np.random.default_rng(0).standard_normal(shape)
    return parameter.Parameter(torch.from_numpy(data).to(device=device, dtype=dtype), **kwargs)


def _scaled_shift(p: torch.Tensor) -> torch.Tensor:
    return p * 2 - 1


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", [(0,), (3, 5), (512, 512)], ids=["empty", "odd", "large"])
def test_operations_on_a_parameter_give_plain_tensors(device, timed, dtype, shape):
    p = _param(shape, dtype, device)
    out = timed(_scaled_shift, p)
    # Parameter disables __torch_function__ subclass propagation: results are torch.Tensor.
    assert type(out) is torch.Tensor and out.dtype == dtype and out.shape == p.shape
    assert out.requires_grad and out.grad_fn is not None
    # 2p is exact, so 2p - 1 is rounded once to the dtype: the float64 value rounded the same way.
    expected = torch.from_numpy(_np(p) * 2 - 1).to(dtype)
    np.testing.assert_array_equal(_np(out), _np(expected))
    assert type(p.detach()) is torch.Tensor and type(p.data) is torch.Tensor


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=_ids)
def test_deepcopy(device, dtype, requires_grad):
    p = _param((4, 3), dtype, device, requires_grad=requires_grad)
    clone = copy.deepcopy(p)
    assert type(clone) is parameter.Parameter and clone.requires_grad == requires_grad
    assert clone.dtype == dtype and clone.device == p.device and torch.equal(clone, p)
    assert clone.data_ptr() != p.data_ptr(), "a deep copy owns its storage"
    with torch.no_grad():
        clone.add_(1)
    assert not torch.equal(clone, p)
    # deepcopy keeps the identity of a parameter shared twice inside one structure.
    pair = copy.deepcopy([p, p])
    assert pair[0] is pair[1]


@pytest.mark.parametrize("how", ["pickle", "torch_save"])
def test_pickling_round_trip(device, how):
    p = _param((3, 2), torch.float64, device, requires_grad=False)
    if how == "pickle":
        back = pickle.loads(pickle.dumps(p))
    else:
        buffer = io.BytesIO()
        torch.save(p, buffer)
        buffer.seek(0)
        back = torch.load(buffer, weights_only=True)
    assert type(back) is parameter.Parameter and not back.requires_grad
    assert back.device == p.device
    np.testing.assert_array_equal(_np(back), _np(p))


def test_uninitialized_parameter(device, timed):
    u = parameter.UninitializedParameter(device=device, dtype=torch.float64)
    assert isinstance(u, parameter.Parameter) and u.requires_grad
    assert parameter.is_lazy(u)
    twin = copy.deepcopy(u)  # a deep copy is still uninitialized, with the same dtype and device
    assert parameter.is_lazy(twin) and twin.dtype == torch.float64 and twin.device == u.device
    with pytest.raises(RuntimeError):
        _ = u.shape  # no shape before materialize()
    with pytest.raises(ValueError):
        torch.add(u, 1)  # any operation on it is refused
    u.materialize((2, 3))
    # After materialize() it becomes an ordinary Parameter of that shape, dtype and device.
    assert type(u) is parameter.Parameter and not parameter.is_lazy(u)
    assert u.shape == (2, 3) and u.dtype == torch.float64 and u.device.type == torch.device(device).type
    with torch.no_grad():
        u.copy_(torch.arange(6.0, dtype=torch.float64, device=device).reshape(2, 3))
    out = timed(_scaled_shift, u)
    np.testing.assert_array_equal(_np(out), np.arange(6.0).reshape(2, 3) * 2 - 1)


def test_uninitialized_parameter_in_a_lazy_module(device, timed):
    torch.manual_seed(0)
    lazy = torch.nn.LazyLinear(4, dtype=torch.float64, device=device)
    assert isinstance(lazy.weight, parameter.UninitializedParameter)
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((5, 3))).to(device)
    lazy(x)  # the first call infers in_features = 3 and materializes the weight
    assert type(lazy.weight) is parameter.Parameter and lazy.weight.shape == (4, 3)
    out = timed(lazy, x)
    expected = _np(x) @ _np(lazy.weight).T + _np(lazy.bias)
    np.testing.assert_allclose(_np(out), expected, rtol=1e-12, atol=1e-12)


def test_requires_grad_toggle_and_rewrap(device):
    p = _param((2,), torch.float32, device)
    assert p.requires_grad
    assert p.requires_grad_(False) is p and not p.requires_grad
    again = parameter.Parameter(p)
    assert isinstance(again, parameter.Parameter) and again.requires_grad and again.data_ptr() == p.data_ptr()
    assert parameter.Parameter is torch.nn.Parameter
