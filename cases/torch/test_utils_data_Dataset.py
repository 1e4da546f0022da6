"""torch.utils.data.Dataset: a map-style Dataset subclass holding device tensors (construction
timed, as the study timed its DictDataset), indexing, batching through DataLoader, and `+`."""

import numpy as np
import pytest
import torch
from torch.utils.data import ConcatDataset, DataLoader, Dataset


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


def _np(t):
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


class DictDataset(Dataset):
    """Each item is a dict of one row of features and its label, kept on the device."""

    def __init__(self, features, labels):
        self.features, self.labels = features, labels

    def __len__(self):
        return self.labels.shape[0]

    def __getitem__(self, index):
        return {"x": self.features[index], "y": self.labels[index]}


def _build(timed, n, width, dtype, device, seed=0):
    data = np.random.default_rng(seed).standard_normal((n, width))
    features = torch.from_numpy(data).to(device=device, dtype=dtype)
    labels = torch.arange(n, device=device)
    with timed.region() as r:
        ds = DictDataset(features, labels)
        r.result = [ds.features, ds.labels]
    return ds


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32]


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "n,width", [(0, 4), (1, 3), (17, 5), (2048, 256)], ids=["empty", "single", "odd", "large"]
)
def test_dataset_items(device, timed, dtype, n, width):
    ds = _build(timed, n, width, dtype, device)
    assert isinstance(ds, Dataset) and len(ds) == n
    for i in {0, n // 2, n - 1} if n else ():
        item = ds[i]
        assert item["x"].dtype == dtype and item["x"].shape == (width,)
        assert item["x"].device.type == torch.device(device).type
        np.testing.assert_array_equal(_np(item["x"]), _np(ds.features)[i])
        assert item["y"].item() == i


@pytest.mark.parametrize("batch_size,drop_last", [(4, False), (4, True), (1, False), (64, False)])
def test_dataset_dataloader_collates_dicts(device, timed, batch_size, drop_last):
    ds = _build(timed, 17, 3, torch.float32, device)
    batches = list(DataLoader(ds, batch_size=batch_size, drop_last=drop_last))
    expected_sizes = [min(batch_size, 17 - s) for s in range(0, 17, batch_size)]
    if drop_last and expected_sizes[-1] < batch_size:
        expected_sizes.pop()
    assert [b["y"].shape[0] for b in batches] == expected_sizes
    seen = torch.cat([b["y"] for b in batches]).cpu().numpy()
    np.testing.assert_array_equal(seen, np.arange(len(seen)))
    x = torch.cat([b["x"] for b in batches])
    assert x.device.type == torch.device(device).type
    np.testing.assert_array_equal(_np(x), _np(ds.features)[: len(seen)])


def test_dataset_add_makes_concat(device, timed):
    a = _build(timed, 3, 2, torch.float32, device, 0)
    b = _build(timed, 4, 2, torch.float32, device, 1)
    both = a + b
    assert isinstance(both, ConcatDataset) and len(both) == 7
    assert both[5]["y"].item() == 2
    np.testing.assert_array_equal(_np(both[5]["x"]), _np(b.features)[2])


def test_dataset_base_class_is_abstract(device, timed):
    with timed.region() as r:
        base = Dataset()
        r.result = None
    with pytest.raises(NotImplementedError):
        base[0]
    ds = _build(timed, 5, 2, torch.float32, device)
    with pytest.raises(IndexError):
        ds[5]
    np.testing.assert_array_equal(_np(ds[-1]["x"]), _np(ds.features)[4])
