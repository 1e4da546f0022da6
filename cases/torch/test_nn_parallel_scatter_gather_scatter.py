"""torch.nn.parallel.scatter_gather.scatter: tensors split into torch.chunk pieces on the target GPUs and
non-tensor inputs replicated per target, against torch.chunk and the documented container rules."""

import numpy as np
import pytest
import torch
from torch.nn.parallel.scatter_gather import scatter

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]
SHAPES = [(0, 3), (7, 3), (512, 512)]


def _ids(value) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return "x".join(map(str, value))


def _host(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().float().numpy() if t.dtype == torch.bfloat16 else t.detach().cpu().numpy()


def _tensor(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(0).standard_normal(shape) * 100).to(
        device=device, dtype=dtype
    )


# Tensor inputs: scatter is a CUDA collective (torch._C._scatter); the device under test gives the input,
# target GPU 0 receives it. On a CPU-only build these subtests record what the build does.
@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_scatter_tensor_one_target(device, timed, dtype, shape):
    x = _tensor(shape, dtype, device)
    out = timed(scatter, x, [0])
    assert isinstance(out, tuple) and len(out) == 1
    assert out[0].dtype == dtype and out[0].shape == shape and out[0].device == torch.device("cuda", 0)
    np.testing.assert_array_equal(_host(out[0]), _host(x))


@pytest.mark.parametrize("dim", [0, 1, -1], ids=["dim0", "dim1", "dim_neg1"])
def test_scatter_tensor_chunks(device, timed, dim):
    x = _tensor((5, 7), torch.float32, device)
    out = timed(scatter, x, [0, 0], dim=dim)
    expected = torch.chunk(x.cpu(), 2, dim=dim)  # approximately equal chunks, the first the larger
    assert len(out) == 2
    for got, want in zip(out, expected):
        assert got.shape == want.shape
        np.testing.assert_array_equal(_host(got), want.numpy())


def test_scatter_tensor_in_containers(device, timed):
    x = _tensor((4, 2), torch.float64, device)
    out = timed(scatter, (x, {"k": x}), [0])
    # A tuple of inputs becomes one tuple per target; dicts keep their keys.
    (part,) = out
    assert isinstance(part, tuple) and set(part[1]) == {"k"}
    np.testing.assert_array_equal(_host(part[0]), _host(x))
    np.testing.assert_array_equal(_host(part[1]["k"]), _host(x))


@pytest.mark.parametrize(
    "obj,targets,expected",
    [
        (7, [0, 1], [7, 7]),
        ("s", [0, 1, 2], ["s", "s", "s"]),
        (None, [0], [None]),
        ({"a": 1, "b": "x"}, [0, 1], [{"a": 1, "b": "x"}, {"a": 1, "b": "x"}]),
        ([1, 2], [0, 1], [[1, 2], [1, 2]]),
        ((1, "a"), [0, 1], [(1, "a"), (1, "a")]),
        ([], [0, 1], [[], []]),
    ],
    ids=["int", "str", "none", "dict", "list", "tuple", "empty_list"],
)
def test_scatter_replicates_non_tensors(device, timed, obj, targets, expected):
    # No tensor inside: nothing is split or moved, so this runs on any build.
    with timed.region() as r:
        r.result = scatter(obj, targets)
    assert r.result == expected
    assert [type(v) for v in r.result] == [type(v) for v in expected]


def test_scatter_refuses_cpu_target(device, timed):
    x = _tensor((4,), torch.float32, device)
    with timed.region() as r:
        with pytest.raises(ValueError, match="non cpu device"):
            scatter(x, ["cpu"])
        r.result = None
