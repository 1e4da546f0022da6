"""torch.utils.data.Subset: a view of a dataset at given indices (construction timed), over device tensors."""

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Subset, TensorDataset


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _dataset(n, dtype, device, width=3):
    features = torch.from_numpy(np.arange(n * width, dtype=np.float64).reshape(n, width)).to(
        device=device, dtype=dtype
    )
    labels = torch.arange(n, device=device)
    return TensorDataset(features, labels)


def _subset(timed, dataset, indices):
    with timed.region() as r:
        subset = Subset(dataset, indices)
        r.result = None
    return subset


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
@pytest.mark.parametrize(
    "n,indices",
    [(5, []), (10, [3]), (10, [9, 0, 4, 4]), (1 << 16, list(range(0, 1 << 16, 7)))],
    ids=["empty", "single", "reordered_repeated", "large"],
)
def test_subset_items(device, timed, dtype, n, indices):
    dataset = _dataset(n, dtype, device, width=4)
    subset = _subset(timed, dataset, indices)
    assert len(subset) == len(indices) and subset.dataset is dataset and list(subset.indices) == indices
    for position in range(0, len(indices), max(1, len(indices) // 50)):
        features, label = subset[position]
        assert features.dtype == dtype and features.device.type == torch.device(device).type
        expected = torch.arange(4, dtype=torch.float64) + 4 * indices[position]
        np.testing.assert_array_equal(_np(features), _np(expected.to(dtype)))
        assert label.item() == indices[position]


def test_subset_batched_getitems(device, timed):
    dataset = _dataset(20, torch.float32, device)
    subset = _subset(timed, dataset, [5, 1, 12])
    items = subset.__getitems__([2, 0])
    assert [int(label) for _, label in items] == [12, 5]
    batch = next(iter(DataLoader(subset, batch_size=3)))
    assert batch[1].tolist() == [5, 1, 12] and batch[0].shape == (3, 3)


def test_subset_tensor_indices_and_negative_position(device, timed):
    dataset = _dataset(8, torch.float64, device)
    subset = _subset(timed, dataset, torch.tensor([6, 2, 7]))
    assert len(subset) == 3
    assert int(subset[-1][1]) == 7 and int(subset[0][1]) == 6


def test_subset_of_subset(device, timed):
    dataset = _dataset(30, torch.float32, device)
    outer = _subset(timed, dataset, list(range(10, 30)))
    inner = _subset(timed, outer, [0, 19, 5])
    assert [int(inner[i][1]) for i in range(3)] == [10, 29, 15]


def test_subset_out_of_range(device, timed):
    dataset = _dataset(4, torch.float32, device)
    subset = _subset(timed, dataset, [1, 9])
    assert int(subset[0][1]) == 1
    with pytest.raises(IndexError):
        subset[1]
    with pytest.raises(IndexError):
        subset[2]
