"""torch.cuda.Stream.synchronize: blocks the host until all work queued on the stream is done.
Nothing to do on the CPU, so every subtest is accelerator-only."""

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.accelerator_only


def _require_cuda():
    if not torch.cuda.is_available():
        pytest.fail("this accelerator is not a CUDA device: torch.cuda.is_available() is False")


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16],
    ids=lambda d: str(d).removeprefix("torch."),
)
@pytest.mark.parametrize("n", [0, 1023, 1 << 22], ids=["empty", "odd", "large"])
def test_stream_synchronize_completes_work(device, timed, dtype, n):
    _require_cuda()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.arange(n, device=device, dtype=torch.float32).remainder(13).to(dtype)
        y = (x * 2 + 1).sum(dtype=torch.float64)
        done = torch.cuda.Event()
        done.record(s)
    with timed.region() as r:
        s.synchronize()
        r.result = None
    assert s.query() and done.query()
    expected = float(np.sum(np.arange(n) % 13 * 2 + 1))
    assert abs(y.item() - expected) <= 1e-6 * max(expected, 1)


def test_stream_synchronize_returns_none_and_is_idempotent(device, timed):
    _require_cuda()
    s = torch.cuda.Stream()
    with timed.region() as r:
        r.result = s.synchronize()
    assert r.result is None and s.query()
    s.synchronize()
    assert s.query()


def test_stream_synchronize_after_cross_stream_copy(device, timed):
    _require_cuda()
    src = torch.randn(1 << 20, device=device)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        dst = src.clone().mul_(3)
    with timed.region() as r:
        s.synchronize()
        r.result = None
    torch.testing.assert_close(dst.cpu(), src.cpu() * 3)


def test_stream_synchronize_on_default_stream(device, timed):
    _require_cuda()
    s = torch.cuda.current_stream()
    a = torch.full((2048, 2048), 0.5, device=device)
    b = a @ a
    with timed.region() as r:
        s.synchronize()
        r.result = None
    assert s.query()
    assert abs(b[0, 0].item() - 512.0) < 1e-3


def test_stream_synchronize_with_priority(device, timed):
    _require_cuda()
    s = torch.cuda.Stream(priority=-1)  # negative: higher priority than the default stream
    with torch.cuda.stream(s):
        x = torch.ones(1000, device=device).cumsum(0)
    with timed.region() as r:
        s.synchronize()
        r.result = None
    assert x[-1].item() == 1000.0
