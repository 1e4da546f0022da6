"""torch.nn.Module.register_parameter (the study's torch.nn.Parameter.register_parameter): the
registered Parameter (timed) shows up in parameters()/state_dict, moves with the module, trains,
and bad names or values raise."""

import numpy as np
import pytest
import torch


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _np(t):
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


class Scale(torch.nn.Module):
    def forward(self, x):
        return x * self.scale


def _register_parameter(module, name, param):
    module.register_parameter(name, param)


def _register(timed, module, name, param):
    """The registration, timed through the mode (once: it changes the module)."""
    timed.once(_register_parameter, module, name, param)
    return module


def _param(shape, dtype, device, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape)
    return torch.nn.Parameter(torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
@pytest.mark.parametrize("shape", [(0,), (), (7, 3), (512, 512)], ids=["empty", "scalar", "odd", "large"])
def test_register_parameter_visible(device, timed, dtype, shape):
    m = Scale()
    p = _param(shape, dtype, device)
    _register(timed, m, "scale", p)
    assert m.scale is p and dict(m.named_parameters()) == {"scale": p}
    assert list(m.state_dict()) == ["scale"] and m.state_dict()["scale"].data_ptr() == p.data_ptr()
    assert p.dtype == dtype and p.device.type == torch.device(device).type and p.requires_grad
    x = torch.ones(shape, dtype=dtype, device=device)
    np.testing.assert_array_equal(_np(m(x)), _np(p))


def test_register_parameter_trains(device, timed):
    m = _register(timed, Scale(), "scale", _param((3,), torch.float64, device))
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, device=device)
    m(x).sum().backward()
    np.testing.assert_array_equal(_np(m.scale.grad), [1.0, 2.0, 3.0])
    opt = torch.optim.SGD(m.parameters(), lr=0.5)
    before = _np(m.scale).copy()
    opt.step()
    np.testing.assert_allclose(_np(m.scale), before - 0.5 * np.array([1.0, 2.0, 3.0]))


def test_register_parameter_none_and_overwrite(device, timed):
    m = Scale()
    _register(timed, m, "scale", None)
    assert m.scale is None and list(m.parameters()) == [] and "scale" in m._parameters
    p = _param((2,), torch.float32, device)
    _register(timed, m, "scale", p)
    assert m.scale is p and len(list(m.parameters())) == 1


def test_register_parameter_in_child_and_to(device, timed):
    outer = torch.nn.Sequential(Scale())
    _register(timed, outer[0], "scale", _param((4,), torch.float32, device))
    assert [n for n, _ in outer.named_parameters()] == ["0.scale"]
    outer.to(torch.float64)
    assert outer[0].scale.dtype == torch.float64 and isinstance(outer[0].scale, torch.nn.Parameter)


@pytest.mark.parametrize(
    "name,value,error",
    [
        (1, None, TypeError),
        ("a.b", None, KeyError),
        ("", None, KeyError),
        ("forward_attr", None, KeyError),
        ("ok", "tensor", TypeError),
    ],
    ids=["name_not_str", "dotted", "empty", "existing_attribute", "plain_tensor"],
)
def test_register_parameter_errors(device, timed, name, value, error):
    m = Scale()
    m.forward_attr = 3
    if value == "tensor":
        value = torch.zeros(2, device=device)
    with pytest.raises(error):
        _register(timed, m, name, value)
