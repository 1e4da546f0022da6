"""torch.optim.lr_scheduler.ExponentialLR: construction and lr = lr0 * gamma**epoch, with the decayed lr
driving real SGD updates of parameters on the device (each optimizer + scheduler step timed, the
pattern PyTorch documents for compiling an optimizer with an LR scheduler)."""

import numpy as np
import pytest
import torch
from torch.optim.lr_scheduler import ExponentialLR


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _param(shape, dtype, device, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape)
    return torch.nn.Parameter(torch.from_numpy(data).to(device=device, dtype=dtype))


def _train_step(opt, sched):
    opt.step()
    sched.step()


def _steps(timed, opt, sched, n):
    for _ in range(n):
        timed.once(_train_step, opt, sched)  # once: both steps change state


@pytest.mark.parametrize("gamma", [0.99, 0.5, 1.0, 0.0], ids=["0.99", "0.5", "1", "0"])
def test_exponential_lr_schedule(device, timed, gamma):
    p = _param((3,), torch.float32, device)
    opt = torch.optim.SGD([p], lr=0.1)
    sched = ExponentialLR(opt, gamma=gamma)
    assert sched.get_last_lr() == [0.1] and sched.last_epoch == 0
    seen = []
    for _ in range(6):
        _steps(timed, opt, sched, 1)
        seen.append(opt.param_groups[0]["lr"])
    np.testing.assert_allclose(seen, [0.1 * gamma**k for k in range(1, 7)], rtol=1e-12, atol=1e-300)
    assert sched.last_epoch == 6 and sched.get_last_lr() == [seen[-1]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
@pytest.mark.parametrize("shape", [(0,), (7, 3), (512, 512)], ids=["empty", "odd", "large"])
def test_exponential_lr_drives_sgd(device, timed, dtype, shape):
    p = _param(shape, dtype, device)
    start = p.detach().double().cpu().numpy().copy()
    opt = torch.optim.SGD([p], lr=0.5)
    sched = ExponentialLR(opt, gamma=0.9)
    grad = torch.ones(shape, dtype=dtype, device=device)
    for _ in range(3):
        p.grad = grad.clone()
        _steps(timed, opt, sched, 1)
    expected = start - (0.5 + 0.45 + 0.405)
    tol = {torch.float16: 2e-2, torch.bfloat16: 2e-1}.get(dtype, 1e-5)
    assert p.dtype == dtype and p.device.type == torch.device(device).type
    np.testing.assert_allclose(p.detach().double().cpu().numpy(), expected, rtol=tol, atol=tol)


def test_exponential_lr_param_groups(device, timed):
    a, b = _param((2,), torch.float32, device), _param((2,), torch.float32, device, 1)
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.01)
    sched = ExponentialLR(opt, gamma=0.5)
    _steps(timed, opt, sched, 3)
    np.testing.assert_allclose(sched.get_last_lr(), [0.01 / 8, 1.0 / 8])
    assert [g["initial_lr"] for g in opt.param_groups] == [0.01, 1.0]


def test_exponential_lr_state_dict_resume(device, timed):
    p = _param((2,), torch.float32, device)
    opt = torch.optim.SGD([p], lr=1.0)
    sched = ExponentialLR(opt, gamma=0.8)
    _steps(timed, opt, sched, 4)
    state = sched.state_dict()
    assert state["gamma"] == 0.8 and state["last_epoch"] == 4
    opt2 = torch.optim.SGD([p], lr=1.0)
    opt2.param_groups[0]["initial_lr"] = 1.0
    resumed = ExponentialLR(opt2, gamma=0.8, last_epoch=3)
    assert resumed.last_epoch == 4
    resumed.load_state_dict(state)
    assert resumed.last_epoch == 4 and resumed.get_last_lr() == sched.get_last_lr()
    opt2.param_groups[0]["lr"] = resumed.get_last_lr()[0]
    _steps(timed, opt2, resumed, 1)
    assert abs(opt2.param_groups[0]["lr"] - 0.8**5) < 1e-12


def test_exponential_lr_needs_initial_lr_to_resume(device, timed):
    opt = torch.optim.SGD([_param((2,), torch.float32, device)], lr=1.0)
    with pytest.raises(KeyError):
        timed.once(ExponentialLR, opt, gamma=0.9, last_epoch=5)
