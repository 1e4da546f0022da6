"""torch.cuda (the study timed torch.device('cuda'[, index]) construction): CUDA device handles parse
and compare correctly everywhere; on an accelerator, tensors land on and round-trip through them."""

import numpy as np
import pytest
import torch


def _device(timed, *args):
    return timed(torch.device, *args)


@pytest.mark.parametrize(
    "args,index",
    [(("cuda",), None), (("cuda", 0), 0), (("cuda:1",), 1), (("cuda", 7), 7)],
    ids=["bare", "index0", "string_index", "index7"],
)
def test_cuda_device_construction(device, timed, args, index):
    d = _device(timed, *args)
    assert d.type == "cuda" and d.index == index
    assert str(d) == ("cuda" if index is None else f"cuda:{index}")
    assert d == torch.device(str(d)) and hash(d) == hash(torch.device(str(d)))
    assert d != torch.device("cpu")


@pytest.mark.parametrize(
    "bad",
    [("cuda", -1), ("cuda:x",), ("cuda:0:1",), ("gpu",)],
    ids=["negative", "letters", "two_index", "unknown_type"],
)
def test_cuda_device_rejects_bad_specs(device, timed, bad):
    with pytest.raises(RuntimeError):
        _device(timed, *bad)


def test_cuda_module_reports_consistently(device, timed):
    available = timed(torch.cuda.is_available)
    assert isinstance(available, bool)
    count = torch.cuda.device_count()
    assert count >= 0 and (count > 0) == available
    assert torch.cuda.is_initialized() in (True, False)


@pytest.mark.accelerator_only
@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64],
    ids=lambda d: str(d).removeprefix("torch."),
)
@pytest.mark.parametrize("n", [0, 7, 1 << 18], ids=["empty", "odd", "large"])
def test_cuda_tensor_roundtrip(device, timed, dtype, n):
    if not torch.cuda.is_available():
        pytest.fail("this accelerator is not a CUDA device: torch.cuda.is_available() is False")
    d = _device(timed, "cuda", torch.cuda.current_device())
    # deliberately on the host: this subtest moves data host -> device -> host
    host = torch.arange(n, dtype=torch.float64, device="cpu").remainder(97).to(dtype)
    on_gpu = host.to(d)
    assert on_gpu.is_cuda and on_gpu.device == d and on_gpu.dtype == dtype
    back = on_gpu.cpu()
    np.testing.assert_array_equal(back.double().numpy(), host.double().numpy())


@pytest.mark.accelerator_only
def test_cuda_current_device_and_properties(device, timed):
    if not torch.cuda.is_available():
        pytest.fail("this accelerator is not a CUDA device: torch.cuda.is_available() is False")
    index = torch.cuda.current_device()
    d = _device(timed, "cuda", index)
    assert 0 <= index < torch.cuda.device_count()
    props = torch.cuda.get_device_properties(d)
    assert props.total_memory > 0 and props.name == torch.cuda.get_device_name(index)
    with torch.cuda.device(d):
        x = torch.ones(3, device=d) * 2
    assert x.device == d and x.sum().item() == 6.0
