"""torch.accelerator.reset_peak_memory_stats: after a reset the peak equals the memory in use and
then tracks new allocations (against tensor sizes); without an accelerator the call is refused."""

import pytest
import torch

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _reset(timed, *args: object) -> object:
    with timed.region() as r:
        r.result = torch.accelerator.reset_peak_memory_stats(*args)
    return r.result


def _require_accelerator() -> None:
    if not torch.accelerator.is_available():
        pytest.fail("no accelerator: torch.accelerator.is_available() is False on an accelerator run")


def test_refused_without_an_accelerator(device, timed):
    if torch.accelerator.is_available():
        assert _reset(timed) is None  # with one, the call succeeds and returns nothing
        assert torch.accelerator.max_memory_allocated() == torch.accelerator.memory_allocated()
        return
    assert torch.accelerator.current_accelerator() is None
    # there is no accelerator allocator to reset: the accelerator API refuses with RuntimeError
    with pytest.raises(RuntimeError, match="accelerator"):
        _reset(timed)


@pytest.mark.parametrize("index", [0, "device"], ids=["int", "torch_device"])
def test_refused_with_an_explicit_device_without_an_accelerator(device, timed, index):
    if torch.accelerator.is_available():
        pytest.skip("covered by the accelerator-only subtests")
    target = torch.device("cpu") if index == "device" else index
    with pytest.raises(RuntimeError):
        _reset(timed, target)


@pytest.mark.accelerator_only
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("n", [0, 1023, 1 << 18], ids=["empty", "odd", "large"])  # large: 1 MB in float32
def test_peak_restarts_from_current_usage(device, timed, dtype, n):
    _require_accelerator()
    spike = torch.empty(n + (1 << 20), dtype=dtype, device=device)  # a peak well above what stays in use
    del spike
    torch.accelerator.synchronize()
    assert torch.accelerator.max_memory_allocated() > torch.accelerator.memory_allocated()
    assert _reset(timed) is None
    in_use = torch.accelerator.memory_allocated()
    assert torch.accelerator.max_memory_allocated() == in_use  # the peak starts again from current usage
    x = torch.empty(n, dtype=dtype, device=device)
    # the caching allocator rounds blocks up, so the new peak is at least the tensor's bytes
    assert torch.accelerator.max_memory_allocated() >= in_use + x.nbytes
    if n == 0:
        assert torch.accelerator.max_memory_allocated() == in_use
    del x
    _reset(timed)
    assert torch.accelerator.max_memory_allocated() == torch.accelerator.memory_allocated() == in_use


@pytest.mark.accelerator_only
@pytest.mark.parametrize("form", ["none", "int", "torch_device", "str"])
def test_device_argument_forms(device, timed, form):
    _require_accelerator()
    index = torch.accelerator.current_device_index()
    kind = torch.accelerator.current_accelerator().type
    forms = {"none": None, "int": index, "torch_device": torch.device(kind, index), "str": f"{kind}:{index}"}
    arg = forms[form]
    spike = torch.empty(1 << 20, device=device)
    del spike
    _reset(timed, arg)
    assert torch.accelerator.max_memory_allocated(index) == torch.accelerator.memory_allocated(index)
    stats = torch.accelerator.memory_stats(index)
    assert stats["allocated_bytes.all.peak"] == stats["allocated_bytes.all.current"]


@pytest.mark.accelerator_only
def test_device_of_another_type_is_refused(device, timed):
    _require_accelerator()
    # documented: a torch.device or str must match the current accelerator's device type
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        _reset(timed, torch.device("cpu"))
