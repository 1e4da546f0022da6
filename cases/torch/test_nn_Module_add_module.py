"""torch.nn.Module.add_module: the child (registration timed) appears in children/named_modules,
is used by forward, follows .to(device, dtype), and bad names or values raise."""

import numpy as np
import pytest
import torch


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _np(t):
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


class Holder(torch.nn.Module):
    def forward(self, x):
        return self.inner(x)


def _add_module(parent, name, child):
    parent.add_module(name, child)


def _add(timed, parent, name, child):
    """The registration, timed through the mode (once: it changes the parent)."""
    timed.once(_add_module, parent, name, child)
    return parent


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 1e-2, torch.bfloat16: 5e-2}


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "in_f,out_f,batch", [(3, 2, 0), (5, 7, 3), (512, 512, 8)], ids=["empty", "odd", "large"]
)
def test_add_module_forward(device, timed, dtype, in_f, out_f, batch):
    child = torch.nn.Linear(in_f, out_f, device=device, dtype=dtype)
    parent = _add(timed, Holder(), "inner", child)
    assert parent.inner is child and list(parent.children()) == [child]
    assert [n for n, _ in parent.named_parameters()] == ["inner.weight", "inner.bias"]
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((batch, in_f))).to(
        device=device, dtype=dtype
    )
    with torch.no_grad():
        y = parent(x)
    expected = _np(x).astype(np.float64) @ _np(child.weight).astype(np.float64).T + _np(child.bias)
    tol = TOLS[dtype] * np.sqrt(in_f)
    assert y.dtype == dtype and y.shape == (batch, out_f)
    np.testing.assert_allclose(_np(y), expected, rtol=tol, atol=tol)


def test_add_module_follows_to(device, timed):
    parent = _add(timed, Holder(), "inner", torch.nn.Linear(2, 2))
    parent.to(device=device, dtype=torch.float64)
    assert parent.inner.weight.dtype == torch.float64
    assert parent.inner.weight.device.type == torch.device(device).type


def test_add_module_none_and_replace(device, timed):
    parent = _add(timed, Holder(), "inner", None)
    assert parent.inner is None and list(parent.children()) == []
    second = torch.nn.Identity()
    _add(timed, parent, "inner", second)
    assert parent.inner is second and [n for n, _ in parent.named_modules()] == ["", "inner"]


def test_add_module_nested_names(device, timed):
    root = torch.nn.Module()
    mid = _add(timed, torch.nn.Module(), "leaf", torch.nn.Linear(1, 1, device=device))
    _add(timed, root, "mid", mid)
    assert [n for n, _ in root.named_modules()] == ["", "mid", "mid.leaf"]
    assert "mid.leaf.weight" in root.state_dict()


@pytest.mark.parametrize(
    "name,child,error",
    [
        (3, torch.nn.Identity(), TypeError),
        ("a.b", torch.nn.Identity(), KeyError),
        ("", torch.nn.Identity(), KeyError),
        ("taken", torch.nn.Identity(), KeyError),
        ("fine", torch.zeros(2), TypeError),
    ],
    ids=["name_not_str", "dotted", "empty", "existing_attribute", "not_a_module"],
)
def test_add_module_errors(device, timed, name, child, error):
    parent = Holder()
    parent.taken = 1
    with pytest.raises(error):
        _add(timed, parent, name, child)
