"""torch.distributed.all_gather_object: in a one-rank group the output list holds an unpickled copy of
the object, checked for Python objects and for tensors bit-exact against NumPy per dtype and size."""

import math
import pickle
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
import torch
import torch.distributed as dist

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool]
SHAPES = [(0,), (7, 3), (1 << 18,)]


def _ids(value) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return "x".join(map(str, value))


@dataclass
class Record:
    name: str
    values: list[float]


@pytest.fixture
def group(tmp_path) -> Iterator[None]:
    # One rank, a FileStore in tmp_path (no port); backend None: gloo for CPU, plus NCCL where there is CUDA.
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group(backend=None, store=store, rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def _gather(obj: object) -> list:
    out = ["sentinel"] * dist.get_world_size()  # every slot must be overwritten
    dist.all_gather_object(out, obj)
    return out


@pytest.mark.parametrize(
    "obj",
    [7, "text", None, {"a": [1, 2, (3, "x")], "b": {"c": None}}, Record("r", [1.5, -2.0]), b"\x00\xff"],
    ids=["int", "str", "none", "nested", "dataclass", "bytes"],
)
def test_all_gather_object_python(device, timed, group, obj):
    with timed.region() as r:
        r.result = _gather(obj)
    assert len(r.result) == 1
    assert r.result[0] == obj and type(r.result[0]) is type(obj)
    if obj is not None and not isinstance(obj, (int, str, bytes)):
        assert r.result[0] is not obj  # a copy through pickle, not the same object


def test_all_gather_object_special_floats(device, timed, group):
    obj = [float("nan"), float("inf"), -float("inf"), -0.0, 5e-324]
    with timed.region() as r:
        r.result = _gather(obj)
    got = r.result[0]
    assert math.isnan(got[0]) and got[1:3] == [math.inf, -math.inf]
    assert got[3] == 0.0 and math.copysign(1.0, got[3]) == -1.0 and got[4] == 5e-324


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_all_gather_object_tensor(device, timed, group, dtype, shape):
    rng = np.random.default_rng(0)
    tensor = torch.from_numpy(rng.standard_normal(shape) * 50).to(dtype)
    expected = tensor.float().numpy() if dtype == torch.bfloat16 else tensor.numpy()
    x = tensor.to(device)
    with timed.region() as r:
        r.result = _gather({"t": x, "step": 3})[0]["t"]
    out = r.result
    assert out.dtype == dtype and out.shape == shape and out.device == x.device
    got = out.cpu().float().numpy() if dtype == torch.bfloat16 else out.cpu().numpy()
    np.testing.assert_array_equal(got, expected)
    if out.numel():
        assert out.data_ptr() != x.data_ptr()


def test_all_gather_object_numpy(device, timed, group):
    arr = np.array([[np.nan, -0.0], [1e300, -1e-300]])
    with timed.region() as r:
        r.result = _gather(arr)
    assert r.result[0].dtype == np.float64
    assert r.result[0].tobytes() == arr.tobytes()


def test_all_gather_object_refuses_unpicklable(device, timed, group):
    with timed.region() as r:
        with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
            _gather(lambda: 1)
        r.result = None


def test_all_gather_object_refuses_short_list(device, timed, group):
    # The output list must hold one slot per rank.
    with timed.region() as r:
        with pytest.raises((IndexError, ValueError, RuntimeError)):
            dist.all_gather_object([], {"a": 1})
        r.result = None


def test_all_gather_object_needs_process_group(device, timed):
    with timed.region() as r:
        with pytest.raises(ValueError, match="not been initialized"):
            dist.all_gather_object([None], 1)
        r.result = None
