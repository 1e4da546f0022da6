"""torch.utils.data.ConcatDataset: construction (timed), length, cumulative sizes and index
mapping (negative indices, empty parts) over TensorDatasets of device tensors."""

import numpy as np
import pytest
import torch
from torch.utils.data import ConcatDataset, IterableDataset, TensorDataset


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _np(t):
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _part(n, width, dtype, device, seed):
    data = np.random.default_rng(seed).standard_normal((n, width))
    return TensorDataset(torch.from_numpy(data).to(device=device, dtype=dtype))


def _concat(timed, parts):
    with timed.region() as r:
        ds = ConcatDataset(parts)
        r.result = None
    return ds


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "sizes,width",
    [([1, 1], 3), ([5, 0, 7], 2), ([0], 4), ([3, 11, 2, 9], 5), ([1024, 1024], 256)],
    ids=["singletons", "empty_middle", "only_empty", "odd", "large"],
)
def test_concat_dataset_indexing(device, timed, dtype, sizes, width):
    parts = [_part(n, width, dtype, device, i) for i, n in enumerate(sizes)]
    ds = _concat(timed, parts)
    assert len(ds) == sum(sizes)
    assert ds.cumulative_sizes == list(np.cumsum(sizes))
    reference = np.concatenate([_np(p.tensors[0]) for p in parts])
    for i in sorted({0, len(ds) // 2, len(ds) - 1, -1, -len(ds)}) if len(ds) else ():
        (row,) = ds[i]
        assert row.dtype == dtype and row.device.type == torch.device(device).type
        np.testing.assert_array_equal(_np(row), reference[i])


def test_concat_dataset_full_iteration(device, timed):
    parts = [_part(n, 2, torch.float32, device, i) for i, n in enumerate([2, 0, 3, 1])]
    ds = _concat(timed, parts)
    rows = np.stack([_np(ds[i][0]) for i in range(len(ds))])
    np.testing.assert_array_equal(rows, np.concatenate([_np(p.tensors[0]) for p in parts]))


def test_concat_dataset_nested(device, timed):
    inner = _concat(timed, [_part(2, 2, torch.float32, device, 0), _part(3, 2, torch.float32, device, 1)])
    outer = _concat(timed, [inner, _part(4, 2, torch.float32, device, 2)])
    assert len(outer) == 9 and outer.cumulative_sizes == [5, 9]
    np.testing.assert_array_equal(_np(outer[4][0]), _np(inner.datasets[1].tensors[0])[2])


def test_concat_dataset_errors(device, timed):
    with pytest.raises(AssertionError), timed.region() as r:
        r.result = ConcatDataset([])

    class Stream(IterableDataset):
        def __iter__(self):
            yield torch.zeros(1, device=device)

    with pytest.raises(AssertionError), timed.region() as r:
        r.result = ConcatDataset([Stream()])
    ds = _concat(timed, [_part(2, 2, torch.float32, device, 0)])
    with pytest.raises(ValueError):
        ds[-3]
    with pytest.raises(IndexError):
        ds[2]
