"""torch.nn.AdaptiveAvgPool3d: construction and adaptive average pooling (the forward pass timed)
against a NumPy loop."""

import math

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 4e-3, torch.bfloat16: 3e-2}


def _reference(x, out_size):
    """Window i of an input of size n pooled to size m spans [floor(i*n/m), ceil((i+1)*n/m))."""
    *lead, d, h, w = x.shape
    od, oh, ow = (s if s is not None else full for s, full in zip(out_size, (d, h, w)))
    out = np.zeros((*lead, od, oh, ow))

    def span(i, n, m):
        return slice(math.floor(i * n / m), math.ceil((i + 1) * n / m))

    for i in range(od):
        for j in range(oh):
            for k in range(ow):
                window = x[..., span(i, d, od), span(j, h, oh), span(k, w, ow)]
                out[..., i, j, k] = window.mean(axis=(-3, -2, -1))
    return out


def _build(output_size):
    return torch.nn.AdaptiveAvgPool3d(output_size)


def _tensor(shape, dtype, device):
    return torch.from_numpy(np.random.default_rng(0).standard_normal(shape)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "shape,output_size",
    [
        ((2, 3, 4, 4, 4), 2),
        ((1, 2, 5, 7, 9), (3, 4, 2)),
        ((3, 6, 5, 4), (2, None, 3)),
        ((2, 2, 3, 3, 3), (5, 4, 6)),
        ((1, 1, 7, 6, 5), 1),
        ((2, 4, 32, 32, 64), (4, 3, 5)),
    ],
    ids=["divisible", "overlapping", "unbatched_none", "upsampling", "global", "large"],
)
def test_adaptive_avg_pool3d_values(device, timed, dtype, shape, output_size):
    pool = _build(output_size)
    x = _tensor(shape, dtype, device)
    out = timed(pool, x)
    size = output_size if isinstance(output_size, tuple) else (output_size,) * 3
    expected = _reference(_np(x).astype(np.float64), size)
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), expected, rtol=tol * 10, atol=tol * 10)


def test_adaptive_avg_pool3d_module_attributes(device, timed):
    pool = _build((2, None, 4))
    assert pool.output_size == (2, None, 4) and list(pool.parameters()) == []
    assert "output_size=(2, None, 4)" in repr(pool)
    x = _tensor((1, 2, 5, 3, 9), torch.float64, device)
    out = timed(pool, x)
    assert out.shape == (1, 2, 2, 3, 4)
    np.testing.assert_allclose(_np(out), _reference(_np(x), (2, None, 4)), rtol=1e-12, atol=1e-12)


def test_adaptive_avg_pool3d_empty_batch(device, timed):
    pool = _build(2)
    out = timed(pool, torch.empty(0, 3, 4, 4, 4, device=device))
    assert out.shape == (0, 3, 2, 2, 2)


def test_adaptive_avg_pool3d_rejects_bad_input(device, timed):
    pool = _build(2)
    with pytest.raises((RuntimeError, ValueError)):
        timed(pool, torch.zeros(4, 4, 4, device=device))
    with pytest.raises((RuntimeError, ValueError)):
        timed(pool, torch.zeros(1, 2, 0, 4, 4, device=device))


def test_adaptive_avg_pool3d_channels_last(device, timed):
    pool = _build((2, 3, 2))
    x = _tensor((2, 3, 5, 6, 4), torch.float32, device).to(memory_format=torch.channels_last_3d)
    np.testing.assert_allclose(
        _np(timed(pool, x)), _reference(_np(x).astype(np.float64), (2, 3, 2)), rtol=1e-5, atol=1e-6
    )


def test_adaptive_avg_pool3d_gradient(device, timed):
    pool = _build((2, 3, 2))
    x = _tensor((1, 2, 3, 5, 4), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(pool, (x,))
    x.grad = None
    timed(pool, x).sum().backward()
    assert abs(x.grad.sum().item() - 2 * 2 * 3 * 2) < 1e-9
