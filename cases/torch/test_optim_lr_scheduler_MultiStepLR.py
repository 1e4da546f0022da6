"""torch.optim.lr_scheduler.MultiStepLR: lr = lr0 * gamma**(milestones passed), against a hand bisect,
with the decayed lr driving SGD updates of device parameters per dtype and size."""

import bisect

import numpy as np
import pytest
import torch
from torch.optim.lr_scheduler import MultiStepLR


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _param(shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int = 0) -> torch.nn.Parameter:
    data = np.random.default_rng(seed).standard_normal(shape)
    return torch.nn.Parameter(torch.from_numpy(data).to(device=device, dtype=dtype))


def _expected_lr(lr0: float, milestones: list[int], gamma: float, epoch: int) -> float:
    # A repeated milestone counts once per repetition (the scheduler keeps a Counter).
    return lr0 * gamma ** bisect.bisect_right(sorted(milestones), epoch)


def _run(opt: torch.optim.Optimizer, sched: MultiStepLR, n: int) -> list[float]:
    seen = []
    for _ in range(n):
        opt.step()
        sched.step()
        seen.append(opt.param_groups[0]["lr"])
    return seen


@pytest.mark.parametrize(
    "milestones,gamma",
    [([2, 5, 9], 0.1), ([3], 0.5), ([1, 3, 3], 0.5), ([7, 2], 0.25), ([], 0.1), ([4], 1.0), ([2], 0.0)],
    ids=["three", "one", "repeated", "unsorted", "none", "gamma1", "gamma0"],
)
def test_multistep_schedule(device, timed, milestones, gamma):
    p = _param((3,), torch.float32, device)
    opt = torch.optim.SGD([p], lr=0.05)
    with timed.region() as r:
        sched = MultiStepLR(opt, milestones=milestones, gamma=gamma)
        seen = _run(opt, sched, 12)
        r.result = seen
    assert sched.last_epoch == 12
    expected = [_expected_lr(0.05, milestones, gamma, e) for e in range(1, 13)]
    np.testing.assert_allclose(seen, expected, rtol=1e-12, atol=0)
    assert sched.get_last_lr() == [seen[-1]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
@pytest.mark.parametrize("shape", [(0,), (7, 3), (512, 512)], ids=["empty", "odd", "large"])
def test_multistep_drives_sgd(device, timed, dtype, shape):
    p = _param(shape, dtype, device)
    start = p.detach().double().cpu().numpy().copy()
    opt = torch.optim.SGD([p], lr=0.5)
    grad = torch.ones(shape, dtype=dtype, device=device)
    with timed.region() as r:
        sched = MultiStepLR(opt, milestones=[1, 2], gamma=0.5)
        for _ in range(3):
            p.grad = grad.clone()
            opt.step()
            sched.step()
        r.result = p.detach()
    # Steps ran with lr 0.5, 0.25, 0.125: each subtracts lr * grad.
    expected = start - (0.5 + 0.25 + 0.125)
    tol = {torch.float16: 2e-2, torch.bfloat16: 2e-1}.get(dtype, 1e-6)
    assert p.dtype == dtype and p.shape == shape and p.device.type == torch.device(device).type
    np.testing.assert_allclose(p.detach().double().cpu().numpy(), expected, rtol=tol, atol=tol)


def test_multistep_param_groups(device, timed):
    a, b = _param((2,), torch.float32, device), _param((2,), torch.float64, device, 1)
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.01)
    with timed.region() as r:
        sched = MultiStepLR(opt, milestones=[2, 4], gamma=0.1)
        _run(opt, sched, 4)
        r.result = sched.get_last_lr()
    np.testing.assert_allclose(r.result, [0.01 * 0.01, 1.0 * 0.01], rtol=1e-12)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.01, 1.0]


def test_multistep_state_dict_resume(device, timed):
    p = _param((2,), torch.float32, device)
    opt = torch.optim.SGD([p], lr=1.0)
    sched = MultiStepLR(opt, milestones=[2, 6], gamma=0.5)
    _run(opt, sched, 4)
    state = sched.state_dict()
    assert state["last_epoch"] == 4 and dict(state["milestones"]) == {2: 1, 6: 1}
    opt2 = torch.optim.SGD([p], lr=0.5)
    with timed.region() as r:
        resumed = MultiStepLR(opt2, milestones=[100], gamma=0.9)
        resumed.load_state_dict(state)
        seen = _run(opt2, resumed, 3)
        r.result = seen
    # The loaded milestones and gamma (not the constructor's) decide epochs 5-7.
    assert resumed.last_epoch == 7 and resumed.gamma == 0.5
    np.testing.assert_allclose(seen, [0.5, 0.25, 0.25], rtol=1e-12)


def test_multistep_refusals(device, timed):
    opt = torch.optim.SGD([_param((2,), torch.float32, device)], lr=1.0)
    with timed.region() as r:
        with pytest.raises(TypeError):
            MultiStepLR(object(), milestones=[1])  # not an Optimizer
        # Resuming at an epoch needs initial_lr in every group.
        with pytest.raises(KeyError):
            MultiStepLR(opt, milestones=[1], last_epoch=5)
        r.result = None
