"""torch.optim.Adamax: construction and the update rule (each step timed), against a NumPy Adamax."""

import numpy as np
import pytest
import torch

TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 2e-2}


def _param(shape, dtype, device, seed):
    data = np.random.default_rng(seed).standard_normal(shape)
    return torch.nn.Parameter(torch.from_numpy(data).to(device=device, dtype=dtype))


def _reference(p, grads, lr, betas, eps, weight_decay, maximize):
    """Adamax written from the paper (Kingma & Ba, sec. 7.1), in float64."""
    m, u = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        u = np.maximum(betas[1] * u, np.abs(g) + eps)
        p = p - lr / (1 - betas[0] ** t) * m / u
    return p


def _step(opt):
    return opt.step()


def _run(device, timed, dtype, shape, steps=3, **options):
    p = _param(shape, dtype, device, 0)
    start = p.detach().double().cpu().numpy().copy()
    opt = torch.optim.Adamax([p], **options)
    assert opt.param_groups[0]["params"][0] is p
    grads = [np.random.default_rng(s + 1).standard_normal(shape) for s in range(steps)]
    for g in grads:
        opt.zero_grad()
        p.grad = torch.from_numpy(g).to(device=device, dtype=dtype)
        timed.once(_step, opt)  # once: a step updates the parameter and the state
    assert p.dtype == dtype and p.shape == shape
    state = opt.state[p]
    assert int(state["step"]) == steps
    assert state["exp_avg"].shape == shape and state["exp_inf"].shape == shape
    grads = [torch.from_numpy(g).to(dtype).double().numpy() for g in grads]
    defaults = {"lr": 2e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0, "maximize": False}
    defaults.update({k: v for k, v in options.items() if k in defaults})
    expected = _reference(start, grads, **defaults)
    return p.detach().double().cpu().numpy(), expected


@pytest.mark.parametrize("dtype", list(TOLS), ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("shape", [(0,), (7, 3), (512, 640)], ids=["empty", "odd", "large"])
def test_adamax_step_matches_reference(device, timed, dtype, shape):
    out, expected = _run(device, timed, dtype, shape, lr=0.01)
    tol = TOLS[dtype]
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "options",
    [
        {"weight_decay": 0.1},
        {"maximize": True},
        {"betas": (0.5, 0.9), "eps": 1e-3},
        {"foreach": False},
        {"foreach": True},
    ],
    ids=["weight_decay", "maximize", "betas_eps", "for_loop", "foreach"],
)
def test_adamax_options(device, timed, options):
    out, expected = _run(device, timed, torch.float64, (5, 4), lr=0.05, **options)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_adamax_param_groups_and_defaults(device, timed):
    a, b = _param((3,), torch.float32, device, 1), _param((2, 2), torch.float32, device, 2)
    opt = torch.optim.Adamax([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.defaults["betas"] == (0.9, 0.999) and opt.defaults["eps"] == 1e-8
    assert opt.state_dict()["param_groups"][1]["params"] == [1]
    starts = [p.detach().double().cpu().numpy().copy() for p in (a, b)]
    grads = [np.random.default_rng(3).standard_normal(p.shape) for p in (a, b)]
    for p, g in zip((a, b), grads):
        p.grad = torch.from_numpy(g).to(device=device, dtype=torch.float32)
    timed.once(_step, opt)
    for p, start, g, lr in zip((a, b), starts, grads, (0.1, 0.5)):
        g = torch.from_numpy(g).float().double().numpy()
        expected = _reference(start, [g], lr, (0.9, 0.999), 1e-8, 0.0, False)
        np.testing.assert_allclose(p.detach().double().cpu().numpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "bad",
    [{"lr": -1.0}, {"eps": -1.0}, {"betas": (1.0, 0.999)}, {"betas": (0.9, -0.1)}, {"weight_decay": -1}],
)
def test_adamax_rejects_invalid_hyperparameters(device, timed, bad):
    p = _param((2,), torch.float32, device, 0)
    with pytest.raises(ValueError):
        timed.once(torch.optim.Adamax, [p], **bad)
