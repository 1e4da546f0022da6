"""torch.distributed.reduce: in a one-rank process group the reduced tensor on dst equals the input
(sum, product, min, max, bitwise ops of one contribution), checked against NumPy per dtype and size."""

from collections.abc import Iterator

import numpy as np
import pytest
import torch
import torch.distributed as dist

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int64]
SHAPES = [(0,), (7, 3), (1 << 18,)]


def _ids(value) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    if isinstance(value, tuple):
        return "x".join(map(str, value))
    return str(value).removeprefix("RedOpType.")


@pytest.fixture
def group(tmp_path) -> Iterator[None]:
    # One rank, a FileStore in tmp_path (no port); backend None: gloo for CPU, plus NCCL where there is CUDA.
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group(backend=None, store=store, rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def _reduce(x: torch.Tensor, op: dist.ReduceOp) -> torch.Tensor:
    y = x.clone()  # reduce works in place: keep the input for the check and the warm-up idempotent
    dist.reduce(y, dst=0, op=op)
    return y


def _data(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> tuple[torch.Tensor, np.ndarray]:
    rng = np.random.default_rng(0)
    if dtype.is_floating_point:
        x = torch.from_numpy(rng.standard_normal(shape) * 10).to(dtype)
    else:
        x = torch.from_numpy(rng.integers(0, 100, shape)).to(dtype)
    expected = x.float().numpy() if dtype == torch.bfloat16 else x.numpy()
    return x.to(device), expected


def _host(t: torch.Tensor) -> np.ndarray:
    return t.cpu().float().numpy() if t.dtype == torch.bfloat16 else t.cpu().numpy()


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_reduce_sum(device, timed, group, dtype, shape):
    x, expected = _data(shape, dtype, device)
    out = timed(_reduce, x, dist.ReduceOp.SUM)
    assert out.dtype == dtype and out.shape == shape
    np.testing.assert_array_equal(_host(out), expected)  # one rank: the sum of one contribution


@pytest.mark.parametrize("op", [dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX], ids=_ids)
@pytest.mark.parametrize("dtype", [torch.float16, torch.int32], ids=_ids)
def test_reduce_ops(device, timed, group, op, dtype):
    x, expected = _data((5, 9), dtype, device)
    out = timed(_reduce, x, op)
    np.testing.assert_array_equal(_host(out), expected)


@pytest.mark.parametrize("op", [dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR], ids=_ids)
def test_reduce_bitwise_ints(device, timed, group, op):
    x, expected = _data((33,), torch.int32, device)
    out = timed(_reduce, x, op)
    np.testing.assert_array_equal(_host(out), expected)


def test_reduce_bitwise_refuses_floats(device, timed, group):
    x = torch.ones(4, device=device)
    with pytest.raises(RuntimeError, match="non-integral"):
        timed.once(_reduce, x, dist.ReduceOp.BAND)


def test_reduce_avg(device, timed, group):
    # AVG is documented as NCCL-only: the mean of one contribution, or a refusal, are both correct.
    x, expected = _data((4, 5), torch.float32, device)
    try:
        out = timed(_reduce, x, dist.ReduceOp.AVG)
    except (RuntimeError, ValueError) as err:
        assert "AVG" in str(err) or "avg" in str(err).lower()
        return
    np.testing.assert_allclose(_host(out), expected, rtol=1e-6)


def test_reduce_special_values(device, timed, group):
    data = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45], dtype=np.float32)
    x = torch.from_numpy(data.copy()).to(device)
    out = timed(_reduce, x, dist.ReduceOp.SUM)
    assert _host(out).tobytes() == data.tobytes()  # NaN, infinities and the sign of -0.0 pass through


def test_reduce_async_work(device, timed, group):
    x, expected = _data((6,), torch.float64, device)
    y = x.clone()
    with timed.region() as r:
        work = dist.reduce(y, dst=0, op=dist.ReduceOp.SUM, async_op=True)
        assert work is not None
        work.wait()
        r.result = y
    assert work.is_completed()
    np.testing.assert_array_equal(_host(y), expected)


def test_reduce_refuses_bad_dst(device, timed, group):
    x = torch.ones(3, device=device)
    with timed.region() as r:
        with pytest.raises((RuntimeError, ValueError)):
            dist.reduce(x, dst=1)  # only rank 0 exists
        r.result = x
    np.testing.assert_array_equal(_host(x), np.ones(3, dtype=np.float32))


def test_reduce_needs_process_group(device, timed):
    x = torch.ones(3, device=device)
    with timed.region() as r:
        with pytest.raises(ValueError, match="not been initialized"):
            dist.reduce(x, dst=0)
        r.result = x
