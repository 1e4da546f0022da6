"""torch.nn.ModuleList: registers its modules; a forward looping over it (timed) vs NumPy; list ops."""

from itertools import pairwise

import numpy as np
import pytest
import torch
from torch import nn

TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float64).numpy()


class Stack(nn.Module):
    """The usual use of a ModuleList: a forward that applies its layers in order."""

    def __init__(self, layers: nn.ModuleList) -> None:
        super().__init__()
        self.layers = layers

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


def _stack(widths: list[int], dtype: torch.dtype, device: str) -> Stack:
    torch.manual_seed(0)
    layers = nn.ModuleList(nn.Linear(a, b, dtype=dtype) for a, b in pairwise(widths))
    return Stack(layers).to(device)


def _reference(model: Stack, x: torch.Tensor) -> np.ndarray:
    h = _np(x)
    for layer in model.layers:
        h = np.tanh(h @ _np(layer.weight).T + _np(layer.bias))
    return h


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("batch,widths", [(0, [4, 3]), (256, [512, 256, 64])], ids=["empty", "large"])
def test_modulelist_forward(device, timed, dtype, batch, widths):
    model = _stack(widths, dtype, device)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((batch, widths[0]))).to(
        device=device, dtype=dtype
    )
    with torch.no_grad():
        out = timed(model, x)
    assert out.shape == (batch, widths[-1]) and out.dtype == dtype
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), _reference(model, x), rtol=tol, atol=tol)


def test_modulelist_registers_modules(device):
    layers = nn.ModuleList([nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)])
    model = Stack(layers).to(device)
    assert len(list(model.parameters())) == 4
    assert list(model.state_dict()) == [
        "layers.0.weight",
        "layers.0.bias",
        "layers.2.weight",
        "layers.2.bias",
    ]
    assert all(p.device.type == torch.device(device).type for p in model.parameters())
    assert [name for name, _ in layers.named_children()] == ["0", "1", "2"]


def test_modulelist_list_operations():
    a, b, c, d = nn.Linear(1, 1), nn.ReLU(), nn.Tanh(), nn.Identity()
    ml = nn.ModuleList([a, b])
    ml.append(c)
    ml.extend([d])
    assert list(ml) == [a, b, c, d] and len(ml) == 4
    assert ml[-1] is d and ml[0] is a
    sliced = ml[1:3]
    assert isinstance(sliced, nn.ModuleList) and list(sliced) == [b, c]
    ml.insert(1, nn.Sigmoid())
    assert [type(m).__name__ for m in ml] == ["Linear", "Sigmoid", "ReLU", "Tanh", "Identity"]
    del ml[1]
    assert list(ml) == [a, b, c, d]
    assert [name for name, _ in ml.named_children()] == ["0", "1", "2", "3"], "keys renumbered after del"
    ml[2] = nn.GELU()
    assert isinstance(ml[2], nn.GELU)
    assert ml.pop(0) is a and len(ml) == 3
    combined = ml + nn.ModuleList([a])
    assert isinstance(combined, nn.ModuleList) and len(combined) == 4
    ml += [nn.ReLU()]
    assert len(ml) == 4
    assert len(nn.ModuleList()) == 0


def test_modulelist_same_module_twice_shares_parameters(device, timed):
    shared = nn.Linear(3, 3, dtype=torch.float64)
    model = Stack(nn.ModuleList([shared, shared])).to(device)
    assert len(list(model.parameters())) == 2  # parameters are deduplicated
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((4, 3))).to(device)
    out = timed(model, x)
    w, bias = _np(shared.weight), _np(shared.bias)
    expected = np.tanh(np.tanh(_np(x) @ w.T + bias) @ w.T + bias)
    np.testing.assert_allclose(_np(out), expected, rtol=1e-12)


def test_modulelist_gradients_reach_every_layer(device, timed):
    model = _stack([3, 4, 2], torch.float64, device)
    x = torch.from_numpy(np.random.default_rng(2).standard_normal((5, 3))).to(device)
    out = timed(model, x)
    grads = torch.autograd.grad(out.sum(), list(model.parameters()))
    expected = torch.autograd.grad(model(x).sum(), list(model.parameters()))
    assert len(grads) == 4
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(_np(g), _np(e), rtol=1e-10, atol=1e-12)


def test_modulelist_refusals():
    with pytest.raises(TypeError):
        nn.ModuleList([nn.ReLU(), 3])  # only Modules can be held
    ml = nn.ModuleList([nn.ReLU()])
    with pytest.raises(TypeError):
        ml.append(torch.ones(2))
    with pytest.raises(IndexError):
        ml[5]
    with pytest.raises(NotImplementedError):
        ml(torch.ones(2))  # a ModuleList has no forward: calling it is refused
