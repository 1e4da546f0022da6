"""torch.nn.Transformer: construction and .to(device) (the study timed these), parameter layout, and the
encoder-decoder forward pass (eval, no dropout; timed) against a NumPy transformer."""

import numpy as np
import pytest
import torch
from torch import nn


def _np(t):
    """A tensor as a float64 NumPy array on the host."""
    return t.detach().double().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 2e-4, torch.float64: 1e-10, torch.float16: 5e-2, torch.bfloat16: 2.5e-1}


def _ln(x, ln):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + ln.eps) * _np(ln.weight) + _np(ln.bias)


def _mha(q_in, kv_in, mha, nhead, mask=None):
    """Multi-head attention on (N, S, E) inputs with an additive float mask of shape (T, S)."""
    e = q_in.shape[-1]
    hd = e // nhead
    wq, wk, wv = np.split(_np(mha.in_proj_weight), 3)
    bq, bk, bv = np.split(_np(mha.in_proj_bias), 3)

    def heads(t):
        return t.reshape(t.shape[0], t.shape[1], nhead, hd).transpose(0, 2, 1, 3)

    q, k, v = heads(q_in @ wq.T + bq), heads(kv_in @ wk.T + bk), heads(kv_in @ wv.T + bv)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    if mask is not None:
        scores = scores + mask
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    out = (scores / scores.sum(-1, keepdims=True)) @ v
    out = out.transpose(0, 2, 1, 3).reshape(q_in.shape)
    return out @ _np(mha.out_proj.weight).T + _np(mha.out_proj.bias)


def _ff(x, layer):
    h = np.maximum(x @ _np(layer.linear1.weight).T + _np(layer.linear1.bias), 0)
    return h @ _np(layer.linear2.weight).T + _np(layer.linear2.bias)


def _reference(model, src, tgt, nhead, tgt_mask=None):
    """Post-norm encoder-decoder (Vaswani et al. 2017) with final encoder and decoder norms."""
    mem = src
    for layer in model.encoder.layers:
        mem = _ln(mem + _mha(mem, mem, layer.self_attn, nhead), layer.norm1)
        mem = _ln(mem + _ff(mem, layer), layer.norm2)
    mem = _ln(mem, model.encoder.norm)
    out = tgt
    for layer in model.decoder.layers:
        out = _ln(out + _mha(out, out, layer.self_attn, nhead, tgt_mask), layer.norm1)
        out = _ln(out + _mha(out, mem, layer.multihead_attn, nhead), layer.norm2)
        out = _ln(out + _ff(out, layer), layer.norm3)
    return _ln(out, model.decoder.norm)


def _build(device, dtype, d_model, nhead, layers, dim_ff, batch_first=True):
    model = nn.Transformer(
        d_model=d_model,
        nhead=nhead,
        num_encoder_layers=layers,
        num_decoder_layers=layers,
        dim_feedforward=dim_ff,
        dropout=0.0,
        batch_first=batch_first,
        dtype=dtype,
    ).to(device)
    return model.eval()


def _tensor(shape, dtype, device, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "sizes",
    [(8, 2, 1, 16, 2, 5, 4), (12, 3, 2, 20, 1, 3, 7), (8, 2, 1, 16, 0, 5, 4), (128, 8, 1, 256, 2, 64, 64)],
    ids=["small", "odd", "empty_batch", "large"],
)
def test_transformer_forward(device, timed, dtype, sizes):
    d_model, nhead, layers, dim_ff, batch, s_len, t_len = sizes
    model = _build(device, dtype, d_model, nhead, layers, dim_ff)
    assert len(model.encoder.layers) == layers and len(model.decoder.layers) == layers
    assert all(p.dtype == dtype and p.device.type == torch.device(device).type for p in model.parameters())
    src, tgt = (
        _tensor((batch, s_len, d_model), dtype, device, 1),
        _tensor((batch, t_len, d_model), dtype, device, 2),
    )
    mask = nn.Transformer.generate_square_subsequent_mask(t_len, device=device, dtype=dtype)
    with torch.no_grad():
        out = timed(model, src, tgt, tgt_mask=mask)
    assert out.shape == tgt.shape and out.dtype == dtype
    expected = _reference(model, _np(src), _np(tgt), nhead, _np(mask))
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), expected, rtol=tol, atol=tol)


def test_transformer_sequence_first_layout(device, timed):
    model = _build(device, torch.float64, 8, 4, 2, 12, batch_first=False)
    src, tgt = _tensor((5, 3, 8), torch.float64, device, 3), _tensor((4, 3, 8), torch.float64, device, 4)
    out = timed(model, src, tgt)
    assert out.shape == (4, 3, 8)
    expected = _reference(model, _np(src).transpose(1, 0, 2), _np(tgt).transpose(1, 0, 2), 4)
    np.testing.assert_allclose(_np(out), expected.transpose(1, 0, 2), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("size", [1, 4, 9])
def test_transformer_subsequent_mask(device, timed, size):
    mask = timed(nn.Transformer.generate_square_subsequent_mask, size, device=device)
    expected = np.triu(np.full((size, size), -np.inf), k=1)
    assert mask.device.type == torch.device(device).type
    np.testing.assert_array_equal(mask.cpu().numpy(), expected)


def test_transformer_rejects_mismatched_inputs(device, timed):
    model = _build(device, torch.float32, 8, 2, 1, 16)
    with pytest.raises(RuntimeError):
        timed(model, torch.zeros(2, 3, 6, device=device), torch.zeros(2, 3, 8, device=device))
    with pytest.raises(RuntimeError):
        timed(model, torch.zeros(2, 3, 8, device=device), torch.zeros(3, 3, 8, device=device))


def test_transformer_gradients(device, timed):
    model = _build(device, torch.float64, 4, 2, 1, 6).train()
    src = _tensor((2, 3, 4), torch.float64, device, 5).requires_grad_()
    tgt = _tensor((2, 2, 4), torch.float64, device, 6).requires_grad_()
    assert torch.autograd.gradcheck(model, (src, tgt), fast_mode=True)
    timed(model, src, tgt).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
