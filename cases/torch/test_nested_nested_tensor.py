"""torch.nested.nested_tensor: a nested tensor from tensors of one rank and ragged sizes, against the
inputs themselves and NumPy padding/concatenation (strided and jagged layouts), with its refusals."""

import numpy as np
import pytest
import torch

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# row counts of the constituents (each row has 5 columns, or 256 for the 1 MB case)
RAGGED = {
    "odd": ([3, 1, 4], 5),
    "with_empty": ([0, 2, 0], 5),
    "large": ([511, 513], 256),  # 1024 x 256 float32 = 1 MB
}


def _parts(rows: list[int], cols: int, dtype: torch.dtype, device: str) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(sum(rows) + cols)
    # drawn on the host so every device gets the same values
    drawn = [torch.randint(-20, 20, (r, cols), generator=gen, device="cpu") for r in rows]
    return [d.to(device=device, dtype=dtype) for d in drawn]


def _padded(parts: list[torch.Tensor], fill: float) -> np.ndarray:
    arrays = [p.cpu().double().numpy() for p in parts]
    longest = max(a.shape[0] for a in arrays)
    out = np.full((len(arrays), longest, arrays[0].shape[1]), fill)
    for i, a in enumerate(arrays):
        out[i, : a.shape[0]] = a
    return out


def _nested(parts: list[torch.Tensor]) -> torch.Tensor:
    return torch.nested.nested_tensor(parts)


def _jagged(parts: list[torch.Tensor]) -> torch.Tensor:
    return torch.nested.nested_tensor(parts, layout=torch.jagged)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("case", list(RAGGED))
def test_nested_tensor_strided(device, timed, dtype, case):
    rows, cols = RAGGED[case]
    parts = _parts(rows, cols, dtype, device)
    nt = timed(_nested, parts)
    assert nt.is_nested and nt.layout == torch.strided and nt.dtype == dtype
    assert nt.dim() == 3 and nt.size(0) == len(rows)
    for got, want in zip(nt.unbind(), parts):
        assert got.shape == want.shape and torch.equal(got, want)
    padded = torch.nested.to_padded_tensor(nt, -1.0)
    np.testing.assert_array_equal(padded.cpu().double().numpy(), _padded(parts, -1.0))


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.bfloat16, torch.int64], ids=lambda d: str(d).removeprefix("torch.")
)
@pytest.mark.parametrize("case", ["with_empty", "large"])
def test_nested_tensor_jagged(device, timed, dtype, case):
    rows, cols = RAGGED[case]
    parts = _parts(rows, cols, dtype, device)
    nt = timed(_jagged, parts)
    assert nt.is_nested and nt.layout == torch.jagged and nt.dtype == dtype
    assert nt.size(0) == len(rows) and nt.size(-1) == cols
    # jagged = the constituents concatenated, with offsets at the running row counts
    expected = np.concatenate([p.cpu().double().numpy() for p in parts])
    np.testing.assert_array_equal(nt.values().cpu().double().numpy(), expected)
    np.testing.assert_array_equal(nt.offsets().cpu().numpy(), np.concatenate([[0], np.cumsum(rows)]))


def test_nested_tensor_copies_its_inputs(device, timed):
    parts = _parts([2, 3], 4, torch.float32, device)
    nt = timed(_nested, parts)
    before = [p.clone() for p in parts]
    parts[0].fill_(100.0)  # documented: the constituents are copied, so this must not show
    for got, want in zip(nt.unbind(), before):
        assert torch.equal(got, want)


def test_nested_tensor_keeps_special_values(device, timed):
    a = torch.from_numpy(np.array([[-0.0, np.nan], [np.inf, -np.inf]], dtype=np.float32)).to(device)
    b = torch.from_numpy(np.array([[1.5, -0.0]], dtype=np.float32)).to(device)
    nt = timed(_nested, [a, b])
    first, second = nt.unbind()
    assert first.cpu().numpy().tobytes() == a.cpu().numpy().tobytes()  # sign of zero and NaN kept
    assert second.cpu().numpy().tobytes() == b.cpu().numpy().tobytes()


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16], ids=str)
def test_nested_tensor_dtype_and_requires_grad(device, timed, dtype):
    parts = _parts([2, 3], 4, torch.float32, device)
    with timed.region() as r:
        r.result = torch.nested.nested_tensor(parts, dtype=dtype, requires_grad=True)
    nt = r.result
    assert nt.dtype == dtype and nt.requires_grad and nt.is_leaf
    for got, want in zip(nt.unbind(), parts):
        assert torch.equal(got.detach(), want.to(dtype))


def test_nested_tensor_from_nested_lists(device, timed):
    with timed.region() as r:
        r.result = torch.nested.nested_tensor([[1.0, 2.0, 3.0], [4.0]], device=device)
    sizes = [t.shape for t in r.result.unbind()]
    assert sizes == [(3,), (1,)] and r.result.dtype == torch.get_default_dtype()
    assert [t.tolist() for t in r.result.unbind()] == [[1.0, 2.0, 3.0], [4.0]]


@pytest.mark.parametrize(
    "shapes,layout",
    [
        ([(2, 3), (3,)], torch.strided),  # constituents of different rank
        ([(2, 3), (3, 4)], torch.jagged),  # jagged allows only one ragged dimension
        ([(2, 3), (3, 3)], torch.sparse_coo),  # not a nested layout
    ],
    ids=["mixed_rank", "two_ragged_dims_jagged", "sparse_layout"],
)
def test_nested_tensor_refusals(device, timed, shapes, layout):
    parts = [torch.ones(s, device=device) for s in shapes]
    with pytest.raises(RuntimeError):
        timed(torch.nested.nested_tensor, parts, layout=layout)
