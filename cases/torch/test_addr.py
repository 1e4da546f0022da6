"""torch.addr: beta * input + alpha * outer(vec1, vec2), against NumPy."""

import numpy as np
import pytest
import torch

FLOATS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def _rand(shape, dtype, device, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=gen, dtype=torch.float64, device="cpu").to(dtype=dtype, device=device)


@pytest.mark.parametrize("dtype", list(FLOATS), ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("n,m", [(0, 3), (5, 7), (257, 129)], ids=["empty", "odd", "large"])
def test_addr_values(device, timed, dtype, n, m):
    mat, v1, v2 = _rand((n, m), dtype, device, 0), _rand(n, dtype, device, 1), _rand(m, dtype, device, 2)
    out = timed(torch.addr, mat, v1, v2, beta=0.5, alpha=2.0)
    assert out.dtype == dtype and out.shape == (n, m)
    as64 = [t.double().cpu().numpy() for t in (mat, v1, v2)]
    expected = 0.5 * as64[0] + 2.0 * np.outer(as64[1], as64[2])
    tol = FLOATS[dtype]
    np.testing.assert_allclose(out.double().cpu().numpy(), expected, rtol=tol, atol=tol * 10)


def test_addr_beta_zero_ignores_nan(device, timed):
    mat = torch.full((3, 2), float("nan"), device=device)
    v1, v2 = torch.tensor([1.0, 2.0, 3.0], device=device), torch.tensor([4.0, 5.0], device=device)
    out = timed(torch.addr, mat, v1, v2, beta=0)
    np.testing.assert_array_equal(out.cpu().numpy(), np.outer([1.0, 2.0, 3.0], [4.0, 5.0]))


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool], ids=["int64", "bool"])
def test_addr_integral(device, timed, dtype):
    mat = torch.ones((2, 3), dtype=dtype, device=device)
    v1 = torch.tensor([1, 0], dtype=dtype, device=device)
    v2 = torch.tensor([1, 1, 0], dtype=dtype, device=device)
    out = timed(torch.addr, mat, v1, v2)
    expected = np.ones((2, 3), dtype=np.int64) + np.outer([1, 0], [1, 1, 0])
    if dtype == torch.bool:
        expected = expected.astype(bool)
    np.testing.assert_array_equal(out.cpu().numpy(), expected)


def test_addr_gradient(device, timed):
    mat = _rand((4, 3), torch.float64, device, 3).requires_grad_()
    v1 = _rand(4, torch.float64, device, 4).requires_grad_()
    v2 = _rand(3, torch.float64, device, 5).requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b, c: timed(torch.addr, a, b, c, alpha=1.5), (mat, v1, v2))
    out = timed(torch.addr, mat, v1, v2, alpha=1.5)
    out.sum().backward()
    np.testing.assert_allclose(v1.grad.cpu().numpy(), 1.5 * v2.detach().sum().item() * np.ones(4))
