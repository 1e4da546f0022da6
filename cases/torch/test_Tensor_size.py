"""torch.Tensor.size: the torch.Size of a tensor or the length of one (possibly negative) dim, for
every dtype, empty and 0-d tensors, views, and out-of-range dims."""

import numpy as np
import pytest
import torch


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool]
SHAPES = [(0,), (7,), (0, 3), (5, 33), (2, 1, 4, 3), (512, 1024)]


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_size_per_dim(device, timed, dtype, shape):
    mat = torch.zeros(shape, dtype=dtype, device=device)
    full = timed(torch.Tensor.size, mat)
    assert isinstance(full, torch.Size) and full == shape and full == np.empty(shape).shape
    for i in range(-len(shape), len(shape)):
        n = timed(torch.Tensor.size, mat, i)
        assert isinstance(n, int) and n == shape[i]
        assert timed(torch.Tensor.size, mat, dim=i) == shape[i]


def test_size_scalar_tensor(device, timed):
    s = torch.tensor(1.5, device=device)
    assert timed(torch.Tensor.size, s) == torch.Size([])
    with pytest.raises(IndexError):
        timed(torch.Tensor.size, s, 0)


@pytest.mark.parametrize("dim", [2, -3, 100])
def test_size_out_of_range(device, timed, dim):
    mat = torch.zeros(2, 3, device=device)
    with pytest.raises(IndexError):
        timed(torch.Tensor.size, mat, dim)


def test_size_views_and_broadcast(device, timed):
    mat = torch.zeros(4, 6, device=device)
    assert timed(torch.Tensor.size, mat.t()) == (6, 4)
    assert timed(torch.Tensor.size, mat[:, ::4], 1) == 2
    assert timed(torch.Tensor.size, mat.unsqueeze(1).expand(4, 5, 6), 1) == 5
    assert timed(torch.Tensor.size, mat.reshape(2, -1), -1) == 12


def test_size_sparse_and_nested_shapes(device, timed):
    sparse = torch.sparse_coo_tensor(torch.tensor([[0, 2], [1, 3]]), torch.tensor([1.0, 2.0]), (4, 5)).to(
        device
    )
    assert timed(torch.Tensor.size, sparse) == (4, 5)
    assert timed(torch.Tensor.size, sparse, -2) == 4
    batched = torch.zeros(3, 0, 2, device=device)
    assert timed(torch.Tensor.size, batched, 1) == 0 and batched.numel() == 0
