"""torch.distributed.tensor.distribute_tensor: on a one-device mesh the DTensor's placements, global and
local shapes and values (local shard and full_tensor) against the NumPy array it was made from."""

from collections.abc import Iterator

import numpy as np
import pytest
import torch
import torch.distributed as dist
from torch.distributed.tensor import DeviceMesh, DTensor, Partial, Replicate, Shard, distribute_tensor

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]
SHAPES = [(0,), (7, 3), (1 << 18,)]


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
    return t.detach().cpu().float().numpy() if t.dtype == torch.bfloat16 else t.detach().cpu().numpy()


def _source(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> tuple[torch.Tensor, np.ndarray]:
    tensor = torch.from_numpy(np.random.default_rng(0).standard_normal(shape) * 100).to(dtype)
    return tensor.to(device), _host(tensor)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_distribute_tensor_shard0(device, timed, mesh, dtype, shape):
    x, expected = _source(shape, dtype, device)
    out = timed(distribute_tensor, x, mesh, [Shard(0)])
    assert isinstance(out, DTensor)
    assert out.placements == (Shard(0),) and out.device_mesh == mesh
    assert out.shape == shape and out.dtype == dtype
    local = out.to_local()
    assert local.shape == shape  # one device holds the whole shard
    np.testing.assert_array_equal(_host(local), expected)
    np.testing.assert_array_equal(_host(out.full_tensor()), expected)


@pytest.mark.parametrize(
    "placement",
    [Shard(0), Shard(1), Shard(-1), Replicate(), Partial()],
    ids=["s0", "s1", "s_neg1", "rep", "partial"],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=_ids)
def test_distribute_tensor_placements(device, timed, mesh, placement, dtype):
    x, expected = _source((5, 9), dtype, device)
    out = timed(distribute_tensor, x, mesh, [placement])
    want = Shard(1) if placement == Shard(-1) else placement  # negative dims are normalised
    assert out.placements == (want,)
    np.testing.assert_array_equal(_host(out.to_local()), expected)
    np.testing.assert_array_equal(_host(out.full_tensor()), expected)


def test_distribute_tensor_default_placement(device, timed, mesh):
    x, expected = _source((4, 4), torch.float64, device)
    out = timed(distribute_tensor, x, mesh)  # no placements: replicated
    assert out.placements == (Replicate(),)
    np.testing.assert_array_equal(_host(out.to_local()), expected)


def test_distribute_tensor_special_values(device, timed, mesh):
    data = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45], dtype=np.float32)
    x = torch.from_numpy(data.copy()).to(device)
    out = timed(distribute_tensor, x, mesh, [Shard(0)])
    assert _host(out.to_local()).tobytes() == data.tobytes()


def test_distribute_tensor_gradient(device, timed, mesh):
    x = torch.from_numpy(np.arange(6.0).reshape(2, 3)).to(device).requires_grad_()
    with timed.region() as r:
        out = distribute_tensor(x, mesh, [Shard(0)])
        r.result = out
    assert out.is_leaf and out.requires_grad  # a new leaf, as the docs say
    (out.full_tensor() ** 2).sum().backward()
    assert isinstance(out.grad, DTensor)
    np.testing.assert_array_equal(_host(out.grad.full_tensor()), 2 * np.arange(6.0).reshape(2, 3))


def test_distribute_tensor_refusals(device, timed, mesh):
    x = torch.ones(3, 4, device=device)
    with timed.region() as r:
        with pytest.raises(IndexError):
            distribute_tensor(x, mesh, [Shard(2)])  # no dim 2
        with pytest.raises(ValueError, match="same length"):
            distribute_tensor(x, mesh, [Shard(0), Shard(1)])  # two placements, a 1-d mesh
        r.result = None
