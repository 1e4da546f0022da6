"""torch.distributed.tensor.parallel.ColwiseParallel: a Linear/Embedding parallelized on a one-device mesh
has column-sharded DTensor parameters and computes the same output and gradients as NumPy."""

from collections.abc import Iterator

import numpy as np
import pytest
import torch
import torch.distributed as dist
from torch.distributed.tensor import DeviceMesh, DTensor, Replicate, Shard
from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# (batch, in_features, out_features): empty batch, odd sizes, ~1 MB of input and weight.
SHAPES = [(0, 4, 6), (7, 5, 9), (512, 512, 512)]
TOL = {torch.float32: 1e-4, torch.float64: 1e-10, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def _ids(value) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return "x".join(map(str, value))


@pytest.fixture
def mesh(tmp_path, device) -> Iterator[DeviceMesh]:
    # One rank, a FileStore in tmp_path (no port); the mesh is the device under test.
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group(backend=None, store=store, rank=0, world_size=1)
    try:
        yield DeviceMesh(torch.device(device).type, [0])
    finally:
        dist.destroy_process_group()


def _host(t: torch.Tensor) -> np.ndarray:
    if isinstance(t, DTensor):
        t = t.full_tensor()
    return t.detach().cpu().double().numpy()


def _linear(n_in: int, n_out: int, dtype: torch.dtype, device: str) -> torch.nn.Linear:
    torch.manual_seed(0)
    return torch.nn.Linear(n_in, n_out, device=device, dtype=dtype)


def _input(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(1).standard_normal(shape)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_colwise_linear_forward(device, timed, mesh, dtype, shape):
    batch, n_in, n_out = shape
    layer = _linear(n_in, n_out, dtype, device)
    w, b = _host(layer.weight), _host(layer.bias)
    model = parallelize_module(layer, mesh, ColwiseParallel())
    # The style shards the weight by output rows (columns of x @ W.T) and the bias alike.
    assert isinstance(model.weight, DTensor) and model.weight.placements == (Shard(0),)
    assert isinstance(model.bias, DTensor) and model.bias.placements == (Shard(0),)
    x = _input((batch, n_in), dtype, device)
    out = timed(model, x)
    assert type(out) is torch.Tensor and out.dtype == dtype and out.shape == (batch, n_out)
    expected = _host(x) @ w.T + b
    np.testing.assert_allclose(_host(out), expected, rtol=TOL[dtype], atol=TOL[dtype] * max(1, np.sqrt(n_in)))


def test_colwise_keeps_dtensor_output(device, timed, mesh):
    layer = _linear(5, 8, torch.float64, device)
    w, b = _host(layer.weight), _host(layer.bias)
    model = parallelize_module(layer, mesh, ColwiseParallel(use_local_output=False))
    x = _input((3, 5), torch.float64, device)
    out = timed(model, x)
    assert isinstance(out, DTensor) and out.placements in ((Shard(-1),), (Shard(1),))
    np.testing.assert_allclose(_host(out), _host(x) @ w.T + b, rtol=1e-12)


def test_colwise_replicated_output_layout(device, timed, mesh):
    layer = _linear(5, 8, torch.float32, device)
    w, b = _host(layer.weight), _host(layer.bias)
    model = parallelize_module(
        layer, mesh, ColwiseParallel(output_layouts=Replicate(), use_local_output=False)
    )
    x = _input((3, 5), torch.float32, device)
    out = timed(model, x)
    assert isinstance(out, DTensor) and out.placements == (Replicate(),)
    np.testing.assert_allclose(_host(out), _host(x) @ w.T + b, rtol=1e-5, atol=1e-5)


def test_colwise_gradients(device, timed, mesh):
    layer = _linear(4, 6, torch.float64, device)
    w = _host(layer.weight)
    model = parallelize_module(layer, mesh, ColwiseParallel())
    x = _input((5, 4), torch.float64, device).requires_grad_()
    out = timed.once(model, x)
    out.sum().backward()
    ones = np.ones((5, 6))
    # d(sum)/dW = ones.T @ x, d/db = column sums, d/dx = ones @ W.
    np.testing.assert_allclose(_host(model.weight.grad), ones.T @ _host(x), rtol=1e-12)
    np.testing.assert_allclose(_host(model.bias.grad), ones.sum(0), rtol=1e-12)
    np.testing.assert_allclose(_host(x.grad), ones @ w, rtol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=_ids)
def test_colwise_embedding(device, timed, mesh, dtype):
    torch.manual_seed(0)
    emb = torch.nn.Embedding(11, 6, device=device, dtype=dtype)
    table = _host(emb.weight)
    model = parallelize_module(emb, mesh, ColwiseParallel())
    assert model.weight.placements == (Shard(1),)  # an embedding is sharded by embedding columns
    idx = torch.tensor([[0, 10, 3], [3, 3, 7]], device=device)
    out = timed(model, idx)
    assert out.shape == (2, 3, 6) and out.dtype == dtype
    np.testing.assert_array_equal(_host(out), table[idx.cpu().numpy()])


def test_colwise_refuses_other_modules(device, timed, mesh):
    with timed.region() as r:
        with pytest.raises(NotImplementedError, match=r"nn\.Linear and nn\.Embedding"):
            parallelize_module(torch.nn.ReLU(), mesh, ColwiseParallel())
        r.result = None
