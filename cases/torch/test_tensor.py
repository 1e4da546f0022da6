"""torch.tensor: build a tensor on the device from Python data (construction timed), checked for
values, inferred and requested dtypes, shapes (empty, nested, large) and error cases."""

import numpy as np
import pytest
import torch


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


# Above this many Python elements the construction is timed with timed.region() (recorded as
# not_routed in compiled mode): torch.compile bakes the list into the graph as constants and dynamo
# traces it element by element. Measured here with torch 2.13 on 2 CPU cores: 1,024 elements compile
# in 1.3 s, 4,096 in 2.8 s, and one 2^18-element subtest ran over 6 minutes before we stopped it;
# the 9 dtypes x 3 repeats of that subtest would take hours under the study's 15-minute budget.
COMPILE_LIMIT = 4096


def _make(timed, data, **kwargs):
    if isinstance(data, list) and len(data) > COMPILE_LIMIT:
        with timed.region() as region:
            region.result = torch.tensor(data, **kwargs)
        return region.result
    return timed(torch.tensor, data, **kwargs)


DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.bool,
    torch.complex64,
]


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "data",
    [[], [3], [[1, 2, 3], [4, 5, 6]], [[[0, 1]], [[2, 3]], [[4, 5]]], [i % 200 for i in range(1 << 18)]],
    ids=["empty", "single", "2d", "3d", "large"],
)
def test_tensor_values(device, timed, dtype, data):
    t = _make(timed, data, dtype=dtype, device=device)
    ref = np.array(data)
    assert t.dtype == dtype and tuple(t.shape) == ref.shape
    assert t.device.type == torch.device(device).type
    as_np = t.to(torch.complex128 if dtype.is_complex else torch.float64).cpu().numpy()
    # every value is exact in every dtype tested (small non-negative integers)
    expected = ref.astype(bool).astype(np.float64) if dtype == torch.bool else ref
    np.testing.assert_array_equal(as_np, expected)


@pytest.mark.parametrize(
    "data,dtype",
    [
        ([1, 2], torch.int64),
        ([1.5, 2], torch.float32),
        ([True, False], torch.bool),
        ([1 + 2j], torch.complex64),
        (3.0, torch.float32),
    ],
    ids=["int", "float", "bool", "complex", "python_scalar"],
)
def test_tensor_infers_dtype(device, timed, data, dtype):
    t = _make(timed, data, device=device)
    assert t.dtype == dtype and t.shape == np.shape(data)


def test_tensor_from_numpy_and_tensor_copies(device, timed):
    arr = np.arange(12, dtype=np.float64).reshape(3, 4)
    t = _make(timed, arr, device=device)
    assert t.dtype == torch.float64
    arr[0, 0] = 100.0
    assert t[0, 0].item() == 0.0  # a copy, not a view of the array
    u = _make(timed, [t[0, 1], t[1, 1]], device=device)
    assert u.tolist() == [1.0, 5.0]


def test_tensor_special_values_and_rounding(device, timed):
    t = _make(
        timed, [float("inf"), -float("inf"), float("nan"), 1e-45, 70000.0], dtype=torch.float16, device=device
    )
    values = t.float().cpu().numpy()
    assert values[0] == np.inf and values[1] == -np.inf and np.isnan(values[2])
    assert values[3] == 0.0 and values[4] == np.inf  # underflows and overflows as float16 does
    b = _make(timed, [1.0000001, 3.14159], dtype=torch.bfloat16, device=device)
    np.testing.assert_array_equal(b.float().cpu().numpy(), [1.0, 3.140625])


def test_tensor_requires_grad(device, timed):
    t = _make(timed, [[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, device=device, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    (t**2).sum().backward()
    np.testing.assert_array_equal(t.grad.cpu().numpy(), [[2.0, 4.0], [6.0, 8.0]])


@pytest.mark.parametrize(
    "data,kwargs,error",
    [
        ([[1, 2], [3]], {}, ValueError),
        (["a"], {}, (TypeError, ValueError)),
        ([1], {"requires_grad": True}, RuntimeError),
    ],
    ids=["ragged", "strings", "int_requires_grad"],
)
def test_tensor_errors(device, timed, data, kwargs, error):
    with pytest.raises(error):
        _make(timed, data, device=device, **kwargs)
