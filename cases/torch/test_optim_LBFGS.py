"""torch.optim.LBFGS: construction and minimisation (each step timed) of quadratics and Rosenbrock,
against NumPy."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _param(values, dtype, device):
    return torch.nn.Parameter(torch.tensor(values, dtype=dtype, device=device))


def _step(opt, closure):
    return opt.step(closure)


def _quadratic(n, seed):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n), rng.standard_normal(n)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"], ids=["fixed_step", "strong_wolfe"])
@pytest.mark.parametrize("n", [1, 7, 300], ids=["scalar", "odd", "large"])
def test_lbfgs_solves_quadratic(device, timed, dtype, line_search_fn, n):
    a_np, b_np = _quadratic(n, 0)
    a = torch.from_numpy(a_np).to(device=device, dtype=dtype)
    b = torch.from_numpy(b_np).to(device=device, dtype=dtype)
    x = _param([0.0] * n, dtype, device)
    opt = torch.optim.LBFGS(
        [x],
        lr=1.0,
        max_iter=100,
        history_size=20,
        line_search_fn=line_search_fn,
        tolerance_grad=1e-12,
        tolerance_change=1e-14,
    )

    def closure():
        opt.zero_grad()
        loss = 0.5 * x @ a @ x - b @ x
        loss.backward()
        return loss

    timed.once(_step, opt, closure)  # once: a step updates the parameters and the state
    expected = np.linalg.solve(a_np, b_np)
    tol = 1e-4 if dtype == torch.float32 else 1e-6
    np.testing.assert_allclose(_np(x).astype(np.float64), expected, rtol=tol, atol=tol)
    assert x.dtype == dtype


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_lbfgs_rosenbrock(device, timed, dtype):
    xy = _param([-1.5, 2.0], dtype, device)
    opt = torch.optim.LBFGS([xy], lr=1.0, max_iter=100, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2
        loss.backward()
        return loss

    for _ in range(5):
        loss = timed.once(_step, opt, closure)
    np.testing.assert_allclose(_np(xy), [1.0, 1.0], atol=1e-3)
    assert float(loss) < 1e-6
    assert opt.state[opt._params[0]]["func_evals"] > 0 and opt.state[opt._params[0]]["n_iter"] > 0


def test_lbfgs_defaults_and_step_returns_initial_loss(device, timed):
    x = _param([3.0, -2.0], torch.float64, device)
    opt = torch.optim.LBFGS([x])
    assert opt.defaults["lr"] == 1 and opt.defaults["max_iter"] == 20 and opt.defaults["max_eval"] == 25
    assert opt.defaults["history_size"] == 100 and opt.defaults["line_search_fn"] is None

    def closure():
        opt.zero_grad()
        loss = (x**2).sum()
        loss.backward()
        return loss

    assert float(timed.once(_step, opt, closure)) == 13.0
    np.testing.assert_allclose(_np(x), [0.0, 0.0], atol=1e-10)


def test_lbfgs_rejects_param_groups_and_bad_options(device, timed):
    a, b = _param([1.0], torch.float32, device), _param([2.0], torch.float32, device)
    with pytest.raises(ValueError):
        timed.once(torch.optim.LBFGS, [{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError):
        timed.once(torch.optim.LBFGS, [a], lr=-1.0)
    opt = torch.optim.LBFGS([a], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = (a**2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="strong_wolfe"):
        timed.once(_step, opt, closure)
