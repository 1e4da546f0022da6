"""torch.utils.model_zoo.load_url: a saved state dict fetched from a file:// URL (sha256-prefix check,
cache, map_location to the device) comes back bit-exact against the NumPy arrays it was made from."""

import collections
import hashlib
import pickle
import urllib.error
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils import model_zoo

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]
SHAPES = [(0,), (7, 3), (1 << 18,)]


def _ids(value) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return "x".join(map(str, value))


def _publish(state: dict, folder: Path, stem: str, hash_prefix: str | None = None) -> str:
    """Save `state` as <stem>-<sha256 prefix>.pth (the hub naming) and return its file:// URL."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / "tmp.pth"
    torch.save(state, tmp)
    prefix = hash_prefix or hashlib.sha256(tmp.read_bytes()).hexdigest()[:10]
    final = folder / f"{stem}-{prefix}.pth"
    tmp.rename(final)
    return final.resolve().as_uri()


def _reference(shape: tuple[int, ...], dtype: torch.dtype) -> tuple[np.ndarray, torch.Tensor]:
    rng = np.random.default_rng(0)
    data = rng.standard_normal(shape) * 100
    tensor = torch.from_numpy(data).to(dtype)
    return tensor.float().numpy() if dtype == torch.bfloat16 else tensor.numpy(), tensor


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_load_url_roundtrip(device, timed, tmp_path, dtype, shape):
    expected, tensor = _reference(shape, dtype)
    url = _publish({"weight": tensor, "step": 7}, tmp_path / "remote", "model")
    with timed.region() as r:
        state = model_zoo.load_url(
            url, model_dir=str(tmp_path / "cache"), map_location=device, progress=False, check_hash=True
        )
        r.result = state["weight"]
    out = r.result
    assert set(state) == {"weight", "step"} and state["step"] == 7
    assert out.dtype == dtype and out.shape == shape
    assert out.device.type == torch.device(device).type
    got = out.cpu().float().numpy() if dtype == torch.bfloat16 else out.cpu().numpy()
    np.testing.assert_array_equal(got, expected)


def test_load_url_special_values(device, timed, tmp_path):
    data = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, 3.4e38], dtype=np.float32)
    url = _publish({"w": torch.from_numpy(data.copy())}, tmp_path / "remote", "special")
    with timed.region() as r:
        state = model_zoo.load_url(url, model_dir=str(tmp_path / "c"), map_location=device, progress=False)
        r.result = state["w"]
    got = r.result.cpu().numpy()
    assert got.tobytes() == data.tobytes()  # bitwise: NaN payload and the sign of -0.0 survive


def test_load_url_uses_cache(device, timed, tmp_path):
    url = _publish({"w": torch.arange(5.0)}, tmp_path / "remote", "cached")
    cache = tmp_path / "cache"
    model_zoo.load_url(url, model_dir=str(cache), progress=False, check_hash=True)
    for f in (tmp_path / "remote").iterdir():
        f.unlink()  # the source is gone: only the cache can answer now
    with timed.region() as r:
        r.result = model_zoo.load_url(url, model_dir=str(cache), map_location=device, progress=False)["w"]
    np.testing.assert_array_equal(r.result.cpu().numpy(), np.arange(5.0, dtype=np.float32))


def test_load_url_prepopulated_cache_needs_no_network(device, timed, tmp_path):
    # The cache is keyed by the URL's basename: an unreachable host is never contacted.
    cache = tmp_path / "cache"
    cache.mkdir()
    torch.save({"w": torch.full((3,), 2.5, dtype=torch.float64)}, cache / "resnet-0123abcd.pth")
    with timed.region() as r:
        state = model_zoo.load_url(
            "https://models.invalid/zoo/resnet-0123abcd.pth", model_dir=str(cache), map_location=device
        )
        r.result = state["w"]
    assert r.result.dtype == torch.float64
    np.testing.assert_array_equal(r.result.cpu().numpy(), [2.5, 2.5, 2.5])


def test_load_url_file_name_option(device, timed, tmp_path):
    url = _publish({"w": torch.ones(2, 2)}, tmp_path / "remote", "named")
    cache = tmp_path / "cache"
    with timed.region() as r:
        r.result = model_zoo.load_url(url, model_dir=str(cache), file_name="mine.pt", progress=False)["w"]
    assert [p.name for p in cache.iterdir()] == ["mine.pt"]
    np.testing.assert_array_equal(r.result.numpy(), np.ones((2, 2), dtype=np.float32))


def test_load_url_refuses_wrong_hash(device, timed, tmp_path):
    url = _publish({"w": torch.zeros(4)}, tmp_path / "remote", "bad", hash_prefix="deadbeef")
    cache = tmp_path / "cache"
    with timed.region() as r:
        with pytest.raises(RuntimeError, match="invalid hash value"):
            model_zoo.load_url(url, model_dir=str(cache), progress=False, check_hash=True)
        r.result = None
    assert list(cache.iterdir()) == []  # nothing half-downloaded is left in the cache
    # Without check_hash the same file loads.
    state = model_zoo.load_url(url, model_dir=str(cache), progress=False, check_hash=False)
    np.testing.assert_array_equal(state["w"].numpy(), np.zeros(4, dtype=np.float32))


def test_load_url_missing_file(device, timed, tmp_path):
    url = (tmp_path / "nowhere" / "gone-12345678.pth").as_uri()
    with timed.region() as r:
        with pytest.raises(urllib.error.URLError):
            model_zoo.load_url(url, model_dir=str(tmp_path / "cache"), progress=False)
        r.result = None


def test_load_url_weights_only_refuses_objects(device, timed, tmp_path):
    # An arbitrary pickled class is not a weight: weights_only=True must refuse it.
    url = _publish({"w": torch.ones(1), "extra": collections.UserDict(a=1)}, tmp_path / "remote", "obj")
    with timed.region() as r:
        with pytest.raises(pickle.UnpicklingError):
            model_zoo.load_url(url, model_dir=str(tmp_path / "cache"), progress=False, weights_only=True)
        cache = str(tmp_path / "cache")
        r.result = model_zoo.load_url(url, model_dir=cache, progress=False, weights_only=False)
    assert r.result["extra"]["a"] == 1
