"""torch.nn.init.xavier_uniform_: fills a tensor in place from U(-a, a), a = gain * sqrt(6 / (fan_in +
fan_out)) (Glorot & Bengio 2010); checked for bounds, moments, fan computation and errors."""

import numpy as np
import pytest
import torch
from torch.nn import init


def _np(t):
    return t.detach().double().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _fans(shape):
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
@pytest.mark.parametrize(
    "shape",
    [(3, 5), (64, 32, 3, 3), (7, 1, 11), (1024, 512)],
    ids=["linear", "conv2d", "conv1d_odd", "large"],
)
@pytest.mark.parametrize("gain", [1.0, 2.0**0.5], ids=["gain1", "relu_gain"])
def test_xavier_uniform_bounds_and_moments(device, timed, dtype, shape, gain):
    t = torch.full(shape, 100.0, dtype=dtype, device=device)
    torch.manual_seed(0)
    out = timed.once(init.xavier_uniform_, t, gain=gain)
    assert out is t or out.data_ptr() == t.data_ptr()
    assert t.dtype == dtype and tuple(t.shape) == shape
    fan_in, fan_out = _fans(shape)
    a = gain * np.sqrt(6.0 / (fan_in + fan_out))
    values = _np(t)
    slack = a * (1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-6)
    assert values.min() >= -a - slack and values.max() <= a + slack
    if values.size >= 10000:
        # U(-a, a): mean 0, variance a^2 / 3
        assert abs(values.mean()) < 0.01 * a
        assert abs(values.var() / (a * a / 3) - 1) < 0.02
        assert values.min() < -0.99 * a and values.max() > 0.99 * a


def test_xavier_uniform_generator_reproducible(device, timed):
    a = torch.empty(30, 40, device=device)
    b = torch.empty(30, 40, device=device)
    timed.once(init.xavier_uniform_, a, generator=torch.Generator(device=device).manual_seed(3))
    timed.once(init.xavier_uniform_, b, generator=torch.Generator(device=device).manual_seed(3))
    assert torch.equal(a, b)


def test_xavier_uniform_empty_tensor(device, timed):
    t = torch.empty(0, 4, device=device)
    out = timed.once(init.xavier_uniform_, t)
    assert out.shape == (0, 4)


def test_xavier_uniform_does_not_track_grad(device, timed):
    w = torch.nn.Parameter(torch.zeros(8, 6, device=device))
    timed.once(init.xavier_uniform_, w)
    assert w.grad_fn is None and w.is_leaf and w.requires_grad
    assert float(w.abs().max()) <= np.sqrt(6.0 / 14) + 1e-6


@pytest.mark.parametrize("shape", [(5,), ()], ids=["1d", "scalar"])
def test_xavier_uniform_rejects_low_rank(device, timed, shape):
    with pytest.raises(ValueError):
        timed.once(init.xavier_uniform_, torch.empty(shape, device=device))
