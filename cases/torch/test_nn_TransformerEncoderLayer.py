"""torch.nn.TransformerEncoderLayer and nn.TransformerEncoder: construction and the forward pass (eval,
no dropout; timed) against a NumPy transformer block written from the paper."""

import numpy as np
import pytest
import torch
from torch import nn


def _np(t):
    """A tensor as a float64 NumPy array on the host."""
    return t.detach().double().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-4, torch.float64: 1e-10, torch.float16: 3e-2, torch.bfloat16: 1.5e-1}


def _layer_norm(x, ln):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + ln.eps) * _np(ln.weight) + _np(ln.bias)


def _attention(x, mha, nhead, key_padding=None):
    """Multi-head self-attention on (N, S, E) from the packed in_proj and out_proj weights."""
    n, s, e = x.shape
    hd = e // nhead
    qkv = x @ _np(mha.in_proj_weight).T + _np(mha.in_proj_bias)
    q, k, v = (t.reshape(n, s, nhead, hd).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, axis=-1))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    if key_padding is not None:
        scores = np.where(key_padding[:, None, None, :], -np.inf, scores)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    weights = scores / scores.sum(-1, keepdims=True)
    out = (weights @ v).transpose(0, 2, 1, 3).reshape(n, s, e)
    return out @ _np(mha.out_proj.weight).T + _np(mha.out_proj.bias)


def _gelu(x):
    from scipy.special import erf

    return 0.5 * x * (1 + erf(x / np.sqrt(2)))


def _reference(layer, x, nhead, norm_first, activation, key_padding=None):
    act = (lambda t: np.maximum(t, 0)) if activation == "relu" else _gelu

    def ff(t):
        return act(t @ _np(layer.linear1.weight).T + _np(layer.linear1.bias)) @ _np(
            layer.linear2.weight
        ).T + _np(layer.linear2.bias)

    if norm_first:
        x = x + _attention(_layer_norm(x, layer.norm1), layer.self_attn, nhead, key_padding)
        return x + ff(_layer_norm(x, layer.norm2))
    x = _layer_norm(x + _attention(x, layer.self_attn, nhead, key_padding), layer.norm1)
    return _layer_norm(x + ff(x), layer.norm2)


def _build_layer(device, dtype, d_model, nhead, dim_ff, **kwargs):
    layer = nn.TransformerEncoderLayer(
        d_model, nhead, dim_feedforward=dim_ff, dropout=0.0, batch_first=True, dtype=dtype, **kwargs
    ).to(device)
    return layer.eval()


def _tensor(shape, dtype, device, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "sizes",
    [(8, 2, 16, 2, 5), (12, 3, 20, 1, 1), (8, 2, 16, 0, 4), (256, 8, 512, 2, 128)],
    ids=["small", "odd_heads", "empty_batch", "large"],
)
def test_encoder_layer_forward(device, timed, dtype, sizes):
    d_model, nhead, dim_ff, batch, seq = sizes
    layer = _build_layer(device, dtype, d_model, nhead, dim_ff)
    assert layer.self_attn.in_proj_weight.shape == (3 * d_model, d_model)
    assert all(p.dtype == dtype for p in layer.parameters())
    x = _tensor((batch, seq, d_model), dtype, device)
    with torch.no_grad():
        y = timed(layer, x)
    assert y.shape == x.shape and y.dtype == dtype
    expected = _reference(layer, _np(x), nhead, False, "relu")
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(y), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_options(device, timed, norm_first, activation):
    layer = _build_layer(device, torch.float64, 12, 4, 24, norm_first=norm_first, activation=activation)
    x = _tensor((3, 7, 12), torch.float64, device, 1)
    y = timed(layer, x)
    np.testing.assert_allclose(
        _np(y), _reference(layer, _np(x), 4, norm_first, activation), rtol=1e-10, atol=1e-10
    )


def test_encoder_layer_key_padding_mask(device, timed):
    layer = _build_layer(device, torch.float64, 8, 2, 16)
    x = _tensor((2, 5, 8), torch.float64, device, 2)
    mask = torch.tensor([[False] * 5, [False, False, False, True, True]], device=device)
    y = timed(layer, x, src_key_padding_mask=mask)
    expected = _reference(layer, _np(x), 2, False, "relu", key_padding=mask.cpu().numpy())
    np.testing.assert_allclose(_np(y), expected, rtol=1e-10, atol=1e-10)


def test_encoder_stack(device, timed):
    layer = _build_layer(device, torch.float64, 8, 2, 16)
    enc = nn.TransformerEncoder(layer, num_layers=3, enable_nested_tensor=False).to(device)
    enc.eval()
    assert len(enc.layers) == 3 and enc.layers[0] is not layer
    x = _tensor((2, 4, 8), torch.float64, device, 3)
    y = timed(enc, x)
    expected = _np(x)
    for sub in enc.layers:
        expected = _reference(sub, expected, 2, False, "relu")
    np.testing.assert_allclose(_np(y), expected, rtol=1e-10, atol=1e-10)


def test_encoder_layer_gradients_and_errors(device, timed):
    with pytest.raises(AssertionError):
        nn.TransformerEncoderLayer(10, 3)
    layer = _build_layer(device, torch.float64, 4, 2, 6).train()
    x = _tensor((2, 3, 4), torch.float64, device, 4).requires_grad_()
    assert torch.autograd.gradcheck(layer, (x,), fast_mode=True)
    timed(layer, x).sum().backward()
    assert all(p.grad is not None for p in layer.parameters())
