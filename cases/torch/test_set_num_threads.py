"""torch.set_num_threads: get_num_threads reads back what was set, results stay right at every thread
count (against NumPy), and non-positive or non-int values are refused with RuntimeError."""

from collections.abc import Iterator

import numpy as np
import pytest
import torch


@pytest.fixture(autouse=True)
def _restore_threads() -> Iterator[None]:
    # the intra-op pool size is process-global: leave it as found
    before = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _set(timed, n: object) -> object:
    with timed.region() as r:
        r.result = torch.set_num_threads(n)
    return r.result


@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_set_num_threads_reads_back(device, timed, n):
    returned = _set(timed, n)
    assert returned is None
    assert torch.get_num_threads() == n


def test_set_num_threads_accepts_numpy_int(device, timed):
    _set(timed, np.int64(2))
    assert torch.get_num_threads() == 2


@pytest.mark.parametrize("bad", [0, -1, -(2**31)], ids=["zero", "minus_one", "int32_min"])
def test_set_num_threads_refuses_non_positive(device, timed, bad):
    _set(timed, 2)
    with pytest.raises(RuntimeError, match="positive integer"):
        _set(timed, bad)
    assert torch.get_num_threads() == 2  # a refused call changes nothing


@pytest.mark.parametrize("bad", [1.5, "2", None], ids=["float", "str", "none"])
def test_set_num_threads_refuses_non_int(device, timed, bad):
    _set(timed, 1)
    with pytest.raises(RuntimeError, match="expects an int"):
        _set(timed, bad)
    assert torch.get_num_threads() == 1


TOLERANCE = {torch.float32: 1e-4, torch.float64: 1e-10, torch.float16: 2e-2, torch.bfloat16: 5e-2}


@pytest.mark.parametrize("n", [1, 2], ids=["one_thread", "two_threads"])
@pytest.mark.parametrize("dtype", list(TOLERANCE), ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("size", [0, 33, 512], ids=["empty", "odd", "large"])
def test_results_right_at_each_thread_count(device, timed, n, dtype, size):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (size, size))
    b = rng.uniform(-1, 1, (size, 7))
    _set(timed, n)
    ta = torch.tensor(a, device=device).to(dtype)
    tb = torch.tensor(b, device=device).to(dtype)
    out = (ta @ tb).sum(dim=0)  # a 512x512 matrix (1 MB in float32) splits across threads
    assert torch.get_num_threads() == n and out.dtype == dtype and out.shape == (7,)
    # reference from the values the tensors really hold (after rounding to dtype)
    expected = (ta.double().cpu().numpy() @ tb.double().cpu().numpy()).sum(axis=0)
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(out.double().cpu().numpy(), expected, rtol=0, atol=TOLERANCE[dtype] * scale)
