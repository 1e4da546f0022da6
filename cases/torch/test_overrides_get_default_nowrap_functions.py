"""torch.overrides.get_default_nowrap_functions: the field getters that the default
Tensor.__torch_function__ leaves unwrapped, checked against what a Tensor subclass really gets back."""

import pytest
import torch
from torch.overrides import get_default_nowrap_functions

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
SHAPES = [(1,), (7,), (3, 5, 11), (1 << 18,)]  # the last one is 1 MB in float32


class Tagged(torch.Tensor):
    """A subclass that keeps the default __torch_function__ (which re-wraps results)."""


def _functions(timed) -> set:
    out = timed(get_default_nowrap_functions)
    return set(out)  # a copy: the function returns a cached set that must not be mutated


def test_contains_the_field_getters(device, timed):
    functions = _functions(timed)
    # a.grad and a._base are the documented examples of field accesses
    assert torch.Tensor.grad.__get__ in functions
    assert torch.Tensor._base.__get__ in functions
    assert torch.Tensor._grad.__get__ in functions


@pytest.mark.parametrize(
    "name",
    ["T", "mT", "real", "data", "add", "clone", "__add__"],
)
def test_excludes_computations(device, timed, name):
    functions = _functions(timed)
    attribute = getattr(torch.Tensor, name)
    # Tensor.T makes a new tensor on the fly: documented as one that SHOULD be wrapped
    candidates = {attribute, getattr(attribute, "__get__", None)}
    assert not candidates & functions
    assert torch.add not in functions


def test_every_member_is_a_tensor_property_getter(device, timed):
    functions = _functions(timed)
    assert functions and all(callable(f) for f in functions)
    for f in functions:
        descriptor = f.__self__  # bound __get__ of a getset descriptor on the C tensor base
        assert f.__name__ == "__get__" and descriptor.__objclass__ is torch._C.TensorBase


def test_repeated_calls_agree(device, timed):
    first = _functions(timed)
    first.clear()  # mutating our copy must not reach the next answer
    assert _functions(timed) == _functions(timed) != set()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_subclass_field_access_is_not_wrapped(device, timed, dtype, shape):
    functions = _functions(timed)
    x = torch.ones(shape, dtype=dtype, device=device).as_subclass(Tagged).requires_grad_()
    (x * 3).sum().backward()
    # computations are re-wrapped into the subclass ...
    assert type(x * 2) is Tagged and type(x.T if x.dim() == 2 else x.mT if x.dim() > 2 else x + 0) is Tagged
    # ... the getters in the set are not: the stored object comes back as itself, every time
    assert torch.Tensor.grad.__get__ in functions
    grad = x.grad
    assert grad is x.grad and type(grad) is torch.Tensor
    assert grad.dtype == dtype and grad.shape == shape
    assert torch.equal(grad, torch.full(shape, 3, dtype=dtype, device=device))
    root = torch.ones(shape, dtype=dtype, device=device)  # a plain tensor, kept alive
    view = root[..., :1].as_subclass(Tagged)
    # read through a Tagged, _base still returns the stored plain root itself, not a Tagged copy
    assert type(view) is Tagged and view._base is root and type(view._base) is torch.Tensor
