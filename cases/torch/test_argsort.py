"""torch.argsort: the indices that sort a tensor, against NumPy's stable argsort."""

import numpy as np
import pytest
import torch

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64]
SHAPES = [(0,), (7,), (5, 33), (3, 4, 129), (1 << 18,)]


def _values(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    # Small integers give ties, so a stable sort is needed to match NumPy exactly.
    data = torch.randint(-50, 50, shape, generator=gen, device="cpu")
    return data.to(dtype=dtype, device=device)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_argsort_stable(device, timed, dtype, shape):
    x = _values(shape, dtype, device)
    out = timed(torch.argsort, x, dim=-1, stable=True)
    assert out.dtype == torch.int64
    assert out.shape == x.shape
    expected = np.argsort(x.float().cpu().numpy(), axis=-1, kind="stable")
    np.testing.assert_array_equal(out.cpu().numpy(), expected)


@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_argsort_dims(device, timed, dim, descending):
    x = _values((6, 9, 4), torch.float32, device)
    out = timed(torch.argsort, x, dim=dim, descending=descending, stable=True)
    reference = x.cpu().numpy()
    expected = np.argsort(-reference if descending else reference, axis=dim, kind="stable")
    np.testing.assert_array_equal(out.cpu().numpy(), expected)


def test_argsort_orders_values(device, timed):
    x = torch.tensor([3.0, float("nan"), -float("inf"), 1.0, float("inf"), -0.0, 0.0], device=device)
    order = timed(torch.argsort, x, stable=True)
    # NaN sorts last; -0.0 and 0.0 compare equal so stability keeps their order.
    assert order.tolist() == [2, 5, 6, 3, 0, 4, 1]
    assert torch.equal(x[order][:-1], torch.sort(x, stable=True).values[:-1])
