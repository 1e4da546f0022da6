"""torch.optim.Rprop: construction and the sign-based update (each step timed), against a NumPy Rprop."""

import numpy as np
import pytest
import torch

TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 5e-3, torch.bfloat16: 4e-2}


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _param(shape, dtype, device, seed):
    data = np.random.default_rng(seed).standard_normal(shape)
    return torch.nn.Parameter(torch.from_numpy(data).to(device=device, dtype=dtype))


def _reference(p, grads, lr, etas, step_sizes, maximize):
    """Rprop (Riedmiller & Braun 1993, the iRprop- variant torch documents), in float64."""
    prev = np.zeros_like(p)
    step = np.full_like(p, lr)
    for g in grads:
        g = -g if maximize else g
        agree = np.sign(g * prev)
        step = np.where(agree > 0, step * etas[1], np.where(agree < 0, step * etas[0], step))
        step = np.clip(step, step_sizes[0], step_sizes[1])
        g = np.where(agree < 0, 0.0, g)
        p = p - np.sign(g) * step
        prev = g
    return p


def _step(opt):
    return opt.step()


def _run(device, timed, dtype, shape, steps=4, **options):
    p = _param(shape, dtype, device, 0)
    start = p.detach().double().cpu().numpy().copy()
    opt = torch.optim.Rprop([p], **options)
    rng = np.random.default_rng(1)
    # Gradients that sometimes keep and sometimes flip sign, so both etas are exercised.
    # Magnitudes are kept away from 0 so that g * prev cannot underflow in the half types.
    base = rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.5, 2.0, shape)
    grads = [base * rng.choice([-1.0, 1.0, 2.0], size=shape) for _ in range(steps)]
    for g in grads:
        opt.zero_grad()
        p.grad = torch.from_numpy(g).to(device=device, dtype=dtype)
        timed.once(_step, opt)  # once: a step updates the parameter and the state
    assert p.dtype == dtype and p.shape == shape
    assert int(opt.state[p]["step"]) == steps and opt.state[p]["step_size"].shape == shape
    defaults = {"lr": 1e-2, "etas": (0.5, 1.2), "step_sizes": (1e-6, 50), "maximize": False}
    defaults.update({k: v for k, v in options.items() if k in defaults})
    grads = [torch.from_numpy(g).to(dtype).double().numpy() for g in grads]
    return p.detach().double().cpu().numpy(), _reference(start, grads, **defaults)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("shape", [(0,), (7, 3), (512, 512)], ids=["empty", "odd", "large"])
def test_rprop_matches_reference(device, timed, dtype, shape):
    out, expected = _run(device, timed, dtype, shape, lr=0.05)
    tol = TOLS[dtype]
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "options",
    [
        {"etas": (0.3, 1.5)},
        {"step_sizes": (0.01, 0.06)},
        {"maximize": True},
        {"foreach": False},
        {"foreach": True},
    ],
    ids=["etas", "step_sizes", "maximize", "for_loop", "foreach"],
)
def test_rprop_options(device, timed, options):
    out, expected = _run(device, timed, torch.float64, (6, 5), lr=0.05, **options)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_rprop_defaults_and_groups(device, timed):
    a, b = _param((3,), torch.float32, device, 1), _param((2,), torch.float32, device, 2)
    opt = torch.optim.Rprop([{"params": [a]}, {"params": [b], "lr": 0.5}])
    assert opt.defaults["lr"] == 1e-2 and opt.defaults["etas"] == (0.5, 1.2)
    assert opt.defaults["step_sizes"] == (1e-6, 50)
    assert [g["lr"] for g in opt.param_groups] == [1e-2, 0.5]
    starts = [p.detach().double().cpu().numpy().copy() for p in (a, b)]
    grads = [np.random.default_rng(3).standard_normal(p.shape) for p in (a, b)]
    for p, g in zip((a, b), grads):
        p.grad = torch.from_numpy(g).to(device=device, dtype=torch.float32)
    timed.once(_step, opt)
    for p, start, g, lr in zip((a, b), starts, grads, (1e-2, 0.5)):
        g = torch.from_numpy(g).float().double().numpy()
        expected = _reference(start, [g], lr, (0.5, 1.2), (1e-6, 50), False)
        np.testing.assert_allclose(p.detach().double().cpu().numpy(), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "bad", [{"lr": -0.1}, {"etas": (1.5, 1.2)}, {"etas": (0.5, 0.9)}], ids=["lr", "etaminus", "etaplus"]
)
def test_rprop_rejects_invalid(device, timed, bad):
    with pytest.raises(ValueError):
        timed.once(torch.optim.Rprop, [_param((2,), torch.float32, device, 0)], **bad)
