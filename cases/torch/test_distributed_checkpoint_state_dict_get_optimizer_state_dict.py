"""torch.distributed.checkpoint.state_dict.get_optimizer_state_dict: the optimizer state keyed by parameter
FQNs, checked bit-exact against optimizer.state per parameter, dtype and size, and its options."""

import numpy as np
import pytest
import torch
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_optimizer_state_dict,
    set_optimizer_state_dict,
)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# (in_features, hidden): an empty weight, odd sizes, and a 512x512 (~1 MB in float32) layer.
SHAPES = [(0, 4), (7, 3), (512, 512)]
FQNS = ["0.weight", "0.bias", "2.weight", "2.bias"]


def _ids(value) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return "x".join(map(str, value))


def _model(n_in: int, hidden: int, dtype: torch.dtype, device: str) -> torch.nn.Sequential:
    torch.manual_seed(0)
    layers = [torch.nn.Linear(n_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 3)]
    return torch.nn.Sequential(*layers).to(device=device, dtype=dtype)


def _train(model: torch.nn.Module, opt: torch.optim.Optimizer, n_in: int, steps: int = 2) -> None:
    dtype = next(model.parameters()).dtype
    device = next(model.parameters()).device
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((4, n_in))).to(device=device, dtype=dtype)
    for _ in range(steps):
        opt.zero_grad()
        model(x).mean().backward()  # a mean keeps float16 gradients finite
        opt.step()


def _same(a: torch.Tensor, b: torch.Tensor) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.detach().cpu().double().numpy(), b.detach().cpu().double().numpy())


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_optimizer_state_by_fqn(device, timed, dtype, shape):
    model = _model(*shape, dtype, device)
    # eps=1e-3: the default 1e-8 is 0 in float16, and Adam's update would turn the state into NaN.
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, eps=1e-3)
    _train(model, opt, shape[0])
    with timed.region() as r:
        r.result = get_optimizer_state_dict(model, opt)
    osd = r.result
    assert set(osd) == {"state", "param_groups"}
    assert list(osd["state"]) == FQNS  # parameter ids replaced by fully qualified names
    for fqn, param in zip(FQNS, model.parameters()):
        mine, theirs = osd["state"][fqn], opt.state[param]
        assert set(mine) == {"step", "exp_avg", "exp_avg_sq"}
        for key in ("exp_avg", "exp_avg_sq"):
            _same(mine[key], theirs[key])
            assert mine[key].dtype == dtype and mine[key].device == param.device
            assert torch.isfinite(mine[key]).all()  # a real state, not NaN == NaN
        assert float(mine["step"]) == 2.0
    (group,) = osd["param_groups"]
    assert group["params"] == FQNS and group["lr"] == 1e-2 and group["betas"] == (0.9, 0.999)


def test_optimizer_state_flattened(device, timed):
    model = _model(5, 4, torch.float32, device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    _train(model, opt, 5)
    options = StateDictOptions(flatten_optimizer_state_dict=True)
    with timed.region() as r:
        r.result = get_optimizer_state_dict(model, opt, options=options)
    flat = r.result
    # One level: state.<fqn>.<name> and param_groups.<fqn>.<hyperparameter>.
    assert {f"state.{f}.momentum_buffer" for f in FQNS} <= set(flat)
    assert all(flat[f"param_groups.{f}.lr"] == 0.1 for f in FQNS)
    for fqn, param in zip(FQNS, model.parameters()):
        _same(flat[f"state.{fqn}.momentum_buffer"], opt.state[param]["momentum_buffer"])


def test_optimizer_state_cpu_offload(device, timed):
    model = _model(6, 5, torch.float64, device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    _train(model, opt, 6)
    with timed.region() as r:
        r.result = get_optimizer_state_dict(model, opt, options=StateDictOptions(cpu_offload=True))
    for fqn, param in zip(FQNS, model.parameters()):
        assert r.result["state"][fqn]["exp_avg"].device.type == "cpu"
        _same(r.result["state"][fqn]["exp_avg"], opt.state[param]["exp_avg"])


def test_optimizer_state_cold_optimizer(device, timed):
    # An optimizer that never stepped gets its state initialised, without moving the parameters.
    model = _model(3, 4, torch.float32, device)
    before = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.Adam(model.parameters(), lr=1.0)
    with timed.region() as r:
        r.result = get_optimizer_state_dict(model, opt)
    assert list(r.result["state"]) == FQNS
    for fqn, p, p0 in zip(FQNS, model.parameters(), before):
        _same(p.detach(), p0)
        assert not r.result["state"][fqn]["exp_avg"].any()
    assert r.result["param_groups"][0]["lr"] == 1.0  # the temporary lr is restored


def test_optimizer_state_param_groups(device, timed):
    model = _model(4, 4, torch.float32, device)
    opt = torch.optim.SGD(
        [{"params": model[0].parameters(), "lr": 0.5}, {"params": model[2].parameters()}], lr=0.01
    )
    with timed.region() as r:
        r.result = get_optimizer_state_dict(model, opt)
    groups = r.result["param_groups"]
    assert [g["params"] for g in groups] == [FQNS[:2], FQNS[2:]]
    assert [g["lr"] for g in groups] == [0.5, 0.01]
    assert r.result["state"] == {}  # plain SGD keeps no state


def test_optimizer_state_roundtrip(device, timed):
    model = _model(5, 6, torch.float32, device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    _train(model, opt, 5, steps=3)
    with timed.region() as r:
        r.result = get_optimizer_state_dict(model, opt)
    fresh = torch.optim.AdamW(model.parameters(), lr=1e-2)
    set_optimizer_state_dict(model, fresh, r.result)
    for p in model.parameters():
        _same(fresh.state[p]["exp_avg_sq"], opt.state[p]["exp_avg_sq"])
        assert float(fresh.state[p]["step"]) == 3.0


def test_optimizer_state_refuses_foreign_optimizer(device, timed):
    model = _model(2, 2, torch.float32, device)
    other = torch.optim.SGD(torch.nn.Linear(2, 2, device=device).parameters(), lr=1.0)
    with timed.region() as r:
        with pytest.raises((KeyError, RuntimeError, ValueError)):
            get_optimizer_state_dict(model, other)  # its parameters have no FQN in model
        r.result = None
