"""torch.nn.Module.zero_grad: clear the gradients of every parameter (to None by default, or to zeros)."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _model(device, dtype, width):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(4, width, device=device, dtype=dtype),
        torch.nn.Tanh(),
        torch.nn.Linear(width, 1, device=device, dtype=dtype),
    )


def _zero_grad(model, **kwargs):
    model.zero_grad(**kwargs)


def _with_grads(device, dtype, width):
    model = _model(device, dtype, width)
    model(torch.ones(3, 4, device=device, dtype=dtype)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    return model


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
@pytest.mark.parametrize("width", [0, 5, 1 << 16], ids=["empty", "odd", "large"])
@pytest.mark.parametrize("set_to_none", [True, False], ids=["to_none", "to_zero"])
def test_zero_grad(device, timed, dtype, width, set_to_none):
    model = _with_grads(device, dtype, width)
    old = [p.grad for p in model.parameters()]
    timed.once(_zero_grad, model, set_to_none=set_to_none)
    for p, previous in zip(model.parameters(), old):
        if set_to_none:
            assert p.grad is None
        else:
            assert p.grad is previous, "zeroed in place"
            assert p.grad.dtype == dtype and p.grad.shape == p.shape
            assert not _np(p.grad).any()


def test_zero_grad_default_is_set_to_none(device, timed):
    model = _with_grads(device, torch.float32, 3)
    timed.once(_zero_grad, model)
    assert all(p.grad is None for p in model.parameters())


def test_zero_grad_then_backward_does_not_accumulate(device, timed):
    model = _with_grads(device, torch.float64, 3)
    first = [p.grad.clone() for p in model.parameters()]
    timed.once(_zero_grad, model, set_to_none=False)
    model(torch.ones(3, 4, device=device, dtype=torch.float64)).sum().backward()
    for p, g in zip(model.parameters(), first):
        np.testing.assert_allclose(_np(p.grad), _np(g), rtol=1e-12)


def test_zero_grad_detaches_graph_grads(device, timed):
    model = _model(device, torch.float64, 2)
    x = torch.ones(1, 4, device=device, dtype=torch.float64)
    (grad,) = torch.autograd.grad(model(x).sum(), model[0].weight, create_graph=True)
    model[0].weight.grad = grad * 1.0  # a non-view tensor that still has a grad_fn
    assert model[0].weight.grad.grad_fn is not None
    timed.once(_zero_grad, model, set_to_none=False)
    assert model[0].weight.grad.grad_fn is None and not _np(model[0].weight.grad).any()


def test_zero_grad_skips_parameters_without_grad(device, timed):
    model = _model(device, torch.float32, 3)
    model[0].weight.requires_grad_(False)
    model(torch.ones(2, 4, device=device)).sum().backward()
    timed.once(_zero_grad, model, set_to_none=False)
    assert model[0].weight.grad is None
    assert not _np(model[2].weight.grad).any()
