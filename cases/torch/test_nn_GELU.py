"""torch.nn.GELU: x * Phi(x) (exact) and the tanh approximation against SciPy, and the study's timed block:
a TransformerEncoderLayer built with activation=nn.GELU()."""

import numpy as np
import pytest
import torch
from scipy.special import erf


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-6, torch.float64: 1e-13, torch.float16: 1e-3, torch.bfloat16: 8e-3}


def _reference(x, approximate):
    x = x.astype(np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + erf(x / np.sqrt(2)))


def _tensor(shape, dtype, device, scale=4.0):
    data = np.random.default_rng(0).uniform(-scale, scale, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 5, 11), (1 << 18,)], ids=["empty", "odd", "3d", "large"])
def test_gelu_values(device, timed, dtype, approximate, shape):
    gelu = torch.nn.GELU(approximate=approximate)
    x = _tensor(shape, dtype, device)
    out = timed(gelu, x)
    assert out.dtype == dtype and out.shape == x.shape
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), _reference(_np(x), approximate), rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_gelu_edge_values(device, timed, dtype):
    x = torch.tensor([0.0, -0.0, float("nan"), -40.0, 40.0, -1e-30], dtype=dtype, device=device)
    out = timed(torch.nn.GELU(), x).tolist()
    assert out[0] == 0.0 and out[1] == 0.0 and np.isnan(out[2])
    assert abs(out[3]) < 1e-30 and out[4] == 40.0 and out[5] == pytest.approx(-0.5e-30)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
def test_gelu_positive_infinity(device, timed, dtype):
    # inf * Phi(inf) = inf * 1; at -inf the product -inf * 0 is NaN in IEEE arithmetic: only +inf is checked.
    x = torch.full((9,), float("inf"), dtype=dtype, device=device)
    out = timed(torch.nn.GELU(), x)
    assert _np(out).tolist() == [float("inf")] * 9


def test_gelu_rejects_unknown_approximation(device, timed):
    with pytest.raises(RuntimeError):
        timed(torch.nn.GELU(approximate="sigmoid"), torch.ones(2, device=device))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradient(device, timed, approximate):
    gelu = torch.nn.GELU(approximate=approximate)
    x = _tensor((5, 4), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: timed(gelu, t), (x,))


@pytest.mark.parametrize("d_model,nhead", [(8, 2), (64, 4)])
def test_transformer_layer_with_gelu(device, timed, d_model, nhead):
    gelu = torch.nn.GELU()
    layer = torch.nn.TransformerEncoderLayer(
        d_model, nhead, dim_feedforward=32, dropout=0.0, activation=gelu, batch_first=True
    )
    assert layer.activation is gelu and layer.activation_relu_or_gelu == 2
    layer.eval()
    x = _tensor((2, 5, d_model), torch.float32, device, scale=1.0)
    with torch.no_grad():
        out = timed(layer, x)
        attn = layer.self_attn(x, x, x, need_weights=False)[0]
        h = layer.norm1(x + attn)
        expected = layer.norm2(h + layer.linear2(gelu(layer.linear1(h))))
    np.testing.assert_allclose(_np(out), _np(expected), rtol=1e-4, atol=1e-5)
