"""torch.distributed.rpc.shutdown: a graceful shutdown of a one-worker RPC agent drains calls in flight
(their values checked against NumPy per dtype and size), a non-graceful one fails them, and afterwards
RPC calls are refused until init_rpc runs again."""

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.distributed.rpc as rpc

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]
SHAPES = [(0,), (7, 3), (1 << 18,)]
NAME = "worker0"


def _ids(value) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return "x".join(map(str, value))


def _slow_double(x: torch.Tensor, delay: float) -> torch.Tensor:
    # A plain module-level function: RPC pickles it by name (builtins go the TorchScript path).
    time.sleep(delay)
    return x * 2


def _start(folder: Path) -> None:
    # One worker; a file:// rendezvous in tmp_path needs no port.
    folder.mkdir(parents=True, exist_ok=True)
    opts = rpc.TensorPipeRpcBackendOptions(init_method=(folder / "rendezvous").as_uri(), num_worker_threads=4)
    rpc.init_rpc(NAME, rank=0, world_size=1, rpc_backend_options=opts)


@pytest.fixture
def agent(tmp_path) -> Iterator[None]:
    _start(tmp_path / "rpc")
    try:
        yield
    finally:
        # The test normally shut it down already; after a failure, do it here.
        with contextlib.suppress(RuntimeError):
            rpc.shutdown(graceful=False)


def _host(t: torch.Tensor) -> np.ndarray:
    return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()


# RPC payloads stay on the host: TensorPipe sends CPU tensors unless a device map is set.
@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_shutdown_graceful_drains_pending(timed, agent, dtype, shape):
    x = torch.from_numpy(np.random.default_rng(0).integers(-100, 100, shape)).to(dtype)
    fut = rpc.rpc_async(NAME, _slow_double, args=(x, 0.1))
    with timed.region() as r:
        r.result = rpc.shutdown()  # graceful: waits for outstanding work
    assert r.result is None and fut.done()
    out = fut.wait()
    assert out.dtype == dtype and out.shape == shape
    np.testing.assert_array_equal(_host(out), _host(x) * 2)


def test_shutdown_refuses_later_calls(timed, agent):
    assert rpc.get_worker_info().name == NAME
    with timed.region() as r:
        r.result = rpc.shutdown()
    with pytest.raises(RuntimeError, match="not been initialized"):
        rpc.rpc_sync(NAME, torch.add, args=(torch.ones(2), 1))
    with pytest.raises(RuntimeError, match="not been initialized"):
        rpc.shutdown()  # a second shutdown has no agent to stop


def test_shutdown_not_graceful_fails_pending(timed, agent):
    fut = rpc.rpc_async(NAME, _slow_double, args=(torch.ones(3), 0.5))
    with timed.region() as r:
        r.result = rpc.shutdown(graceful=False)
    # The local agent stopped at once: the reply never arrives.
    with pytest.raises(RuntimeError):
        fut.wait()


def test_shutdown_without_init(timed):
    with timed.region() as r:
        with pytest.raises(RuntimeError, match="not been initialized"):
            rpc.shutdown()
        r.result = None


def test_shutdown_allows_restart(timed, tmp_path):
    _start(tmp_path / "first")
    with timed.region() as r:
        r.result = rpc.shutdown()
    _start(tmp_path / "second")
    try:
        out = rpc.rpc_sync(NAME, torch.add, args=(torch.tensor([1.5, -0.0]), 1.0))
    finally:
        rpc.shutdown()
    np.testing.assert_array_equal(out.numpy(), [2.5, 1.0])
