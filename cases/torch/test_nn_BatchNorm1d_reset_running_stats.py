"""torch.nn.BatchNorm1d.reset_running_stats: after training updates, the call (timed) restores
running_mean to 0, running_var to 1 and num_batches_tracked to 0, leaving weight and bias alone."""

import numpy as np
import pytest
import torch
from torch import nn


def _np(t):
    return t.detach().double().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _trained(device, dtype, features, batch, steps=3, **kwargs):
    bn = nn.BatchNorm1d(features, device=device, dtype=dtype, **kwargs)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        bn.weight.mul_(3) if bn.weight is not None else None
        for _ in range(steps):
            x = torch.from_numpy(rng.standard_normal((batch, features)) * 4 + 2).to(
                device=device, dtype=dtype
            )
            bn(x)
    return bn


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
@pytest.mark.parametrize("features,batch", [(1, 4), (7, 5), (65536, 4)], ids=["single", "odd", "large"])
def test_reset_running_stats(device, timed, dtype, features, batch):
    bn = _trained(device, dtype, features, batch)
    assert bn.num_batches_tracked.item() == 3 and not torch.all(bn.running_mean == 0)
    weight, bias = _np(bn.weight).copy(), _np(bn.bias).copy()
    mean_ptr = bn.running_mean.data_ptr()
    out = timed.once(bn.reset_running_stats)
    assert out is None
    np.testing.assert_array_equal(_np(bn.running_mean), np.zeros(features))
    np.testing.assert_array_equal(_np(bn.running_var), np.ones(features))
    assert bn.num_batches_tracked.item() == 0 and bn.num_batches_tracked.dtype == torch.long
    assert bn.running_mean.dtype == dtype and bn.running_mean.data_ptr() == mean_ptr
    np.testing.assert_array_equal(_np(bn.weight), weight)
    np.testing.assert_array_equal(_np(bn.bias), bias)


def test_reset_running_stats_eval_after_reset_is_affine_only(device, timed):
    bn = _trained(device, torch.float64, 4, 8)
    timed.once(bn.reset_running_stats)
    bn.eval()
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((3, 4))).to(device)
    expected = _np(x) / np.sqrt(1 + bn.eps) * _np(bn.weight) + _np(bn.bias)
    np.testing.assert_allclose(_np(bn(x)), expected, rtol=1e-12)


def test_reset_running_stats_momentum_none_restarts_average(device, timed):
    bn = _trained(device, torch.float64, 3, 6, momentum=None)
    timed.once(bn.reset_running_stats)
    x = torch.from_numpy(np.random.default_rng(2).standard_normal((6, 3))).to(device)
    with torch.no_grad():
        bn(x)
    # with cumulative averaging, the first batch after a reset is the whole average
    np.testing.assert_allclose(_np(bn.running_mean), _np(x).mean(0), rtol=1e-12)
    np.testing.assert_allclose(_np(bn.running_var), _np(x).var(0, ddof=1), rtol=1e-12)


def test_reset_running_stats_without_tracking_is_noop(device, timed):
    bn = nn.BatchNorm1d(5, track_running_stats=False, device=device)
    assert bn.running_mean is None
    timed.once(bn.reset_running_stats)
    assert bn.running_mean is None and bn.running_var is None and bn.num_batches_tracked is None


def test_reset_running_stats_leaves_affine_free_module(device, timed):
    bn = _trained(device, torch.float32, 4, 6, affine=False)
    timed.once(bn.reset_running_stats)
    assert bn.weight is None and torch.equal(bn.running_var, torch.ones(4, device=device))
