"""torch.cuda.FloatTensor: the legacy CUDA float32 tensor type: its type attributes and isinstance
checks everywhere, a refusal without CUDA, and on a CUDA device the tensors it builds (against NumPy)."""

import numpy as np
import pytest
import torch

T = torch.cuda.FloatTensor


def _dtype_id(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _require_cuda() -> None:
    if not torch.cuda.is_available():
        pytest.fail("this accelerator is not a CUDA device: torch.cuda.is_available() is False")


def test_type_attributes(device, timed):
    with timed.region():
        attributes = (T.dtype, T.is_cuda, T.is_sparse, T.layout, T.__module__, T.__name__)
    assert attributes == (torch.float32, True, False, torch.strided, "torch.cuda", "FloatTensor")
    assert T is not torch.FloatTensor and torch.FloatTensor.dtype == torch.float32


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int32], ids=_dtype_id)
def test_isinstance_of_host_tensors_is_false(device, timed, dtype):
    host = torch.zeros(3, dtype=dtype, device="cpu")  # deliberately on the host
    with timed.region():
        verdict = isinstance(host, T)
    # a legacy type matches only tensors of its own device and dtype
    assert verdict is False
    assert isinstance(host, torch.FloatTensor) is (dtype == torch.float32)


@pytest.mark.parametrize("args", [(3,), (2, 5), ([1.0, 2.0],)], ids=["size", "sizes", "data"])
def test_construction_without_cuda_is_refused(device, timed, args):
    if torch.cuda.is_available():
        out = timed(T, *args)  # with CUDA the same call must build a CUDA float32 tensor
        assert out.is_cuda and out.dtype == torch.float32
        return
    # without CUDA: TypeError "Torch not compiled with CUDA enabled" on CPU builds,
    # RuntimeError on CUDA builds without a driver
    with pytest.raises((TypeError, RuntimeError), match="CUDA"):
        timed(T, *args)


def test_conversion_without_cuda_is_refused(device, timed):
    host = torch.ones(4, device="cpu")  # deliberately on the host
    if torch.cuda.is_available():
        with timed.region() as r:
            r.result = host.type(T)
        assert r.result.is_cuda and torch.equal(r.result.cpu(), host)
        return
    with pytest.raises((TypeError, RuntimeError), match="CUDA"), timed.region():
        host.type(T)


@pytest.mark.accelerator_only
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 5, 11), (1 << 18,)], ids=lambda s: "x".join(map(str, s)))
def test_sizes_build_cuda_float32(device, timed, shape):
    _require_cuda()
    out = timed(T, *shape)
    assert out.is_cuda and out.dtype == torch.float32 and tuple(out.shape) == shape
    assert isinstance(out, T) and out.type() == "torch.cuda.FloatTensor"
    out.fill_(2.5)
    assert bool((out == 2.5).all())


@pytest.mark.accelerator_only
def test_data_keeps_special_values(device, timed):
    _require_cuda()
    values = [1.5, -0.0, float("nan"), float("inf"), -float("inf"), 1e-40]
    out = timed(T, values)
    assert out.is_cuda and out.dtype == torch.float32
    # bit for bit: sign of zero, NaN, the float32 denormal that 1e-40 rounds to
    assert out.cpu().numpy().tobytes() == np.array(values, dtype=np.float32).tobytes()


@pytest.mark.accelerator_only
@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16, torch.int64], ids=_dtype_id)
@pytest.mark.parametrize("n", [0, 1023, 1 << 18], ids=["empty", "odd", "large"])
def test_type_converts_host_data(device, timed, dtype, n):
    _require_cuda()
    rng = np.random.default_rng(n)
    host = torch.from_numpy(rng.uniform(-1e3, 1e3, n)).to(dtype)  # deliberately on the host
    out = timed(lambda t: t.type(T), host)
    assert out.is_cuda and out.dtype == torch.float32 and out.shape == (n,)
    np.testing.assert_array_equal(out.cpu().numpy(), host.double().numpy().astype(np.float32))
