"""torch.nn.Dropout: training zeroes an element or scales it by 1/(1-p), at rate about p; eval is identity."""

import numpy as np
import pytest
import torch
from torch import nn

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float64).numpy()


def _positive(shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int = 0) -> torch.Tensor:
    # Strictly positive inputs: a zero in the output can then only be a dropped element.
    data = np.random.default_rng(seed).uniform(0.5, 2.0, shape)
    return torch.from_numpy(data).to(device=device, dtype=dtype)


def _check(out: torch.Tensor, x: torch.Tensor, p: float) -> np.ndarray:
    """Every element is 0 or x / (1 - p) (computed in the input's dtype); returns the kept mask."""
    o, ref = _np(out), _np(x)
    kept = o != 0
    rtol = 1e-2 if x.dtype in (torch.float16, torch.bfloat16) else 1e-6
    np.testing.assert_allclose(o[kept], ref[kept] / (1.0 - p), rtol=rtol)
    return kept


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "shape,p",
    [((0, 4), 0.5), ((3, 5, 17), 0.2), ((512, 512), 0.3)],
    ids=["empty", "odd_3d", "large"],
)
def test_dropout_training(device, timed, dtype, shape, p):
    module = nn.Dropout(p)
    assert module.training and module.p == p
    x = _positive(shape, dtype, device)
    torch.manual_seed(0)
    out = timed(module, x)
    assert out.shape == x.shape and out.dtype == dtype
    kept = _check(out, x, p)
    if kept.size >= 10_000:  # the drop rate is p (binomial: 262k draws, 0.01 is > 10 sigma)
        assert abs((1 - kept.mean()) - p) < 0.01


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=_ids)
def test_dropout_eval_is_identity(device, timed, dtype):
    module = nn.Dropout(0.7).eval()
    x = _positive((5, 33), dtype, device)
    out = timed(module, x)
    assert torch.equal(out, x)


@pytest.mark.parametrize("p,expected", [(0.0, "identity"), (1.0, "zeros")])
def test_dropout_extreme_p(device, timed, p, expected):
    module = nn.Dropout(p)
    x = _positive((6, 10), torch.float32, device)
    out = timed(module, x)
    assert torch.equal(out, x if expected == "identity" else torch.zeros_like(x))


def test_dropout_same_seed_same_mask(device, timed):
    module = nn.Dropout(0.5)
    x = _positive((64, 64), torch.float32, device)
    torch.manual_seed(123)
    first = timed.once(module, x)
    torch.manual_seed(123)
    second = timed.once(module, x)
    # Same generator state, same mask; and the masks are not trivial.
    assert torch.equal(first, second)
    kept = _check(first, x, 0.5)
    assert 0 < kept.mean() < 1


def test_dropout_inplace(device, timed):
    module = nn.Dropout(0.5, inplace=True)
    y = _positive((8, 16), torch.float64, device)
    original = y.clone()
    out = timed.once(module, y)  # once: the call overwrites its input
    assert torch.equal(out, y), "inplace=True writes the result into the input"
    _check(out, original, 0.5)


def test_dropout_gradient_is_the_scaled_mask(device, timed):
    module = nn.Dropout(0.25)
    x = _positive((40, 30), torch.float64, device).requires_grad_()
    out = timed.once(module, x)
    (grad,) = torch.autograd.grad(out.sum(), x)
    kept = (out.detach() != 0).to(torch.float64)
    np.testing.assert_allclose(_np(grad), _np(kept) / 0.75, rtol=1e-12)


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_rejects_bad_p(p):
    with pytest.raises(ValueError):
        nn.Dropout(p)
