"""The dask engine (issue 26): the same counter on a real Dask cluster gives the local engine's table.

A real ``distributed.LocalCluster`` of 2 single-threaded worker processes on 127.0.0.1 (its HTTP
server on a free port, no outside network), started once for the module and closed by its fixture.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from portability_data.pipeline.corpus import Record, path_records
from portability_data.pipeline.frequencies import build as freq
from portability_data.pipeline.frequencies.counting import CorpusStats

pytestmark = pytest.mark.timeout(120)

FRAMEWORKS = ["jax", "tensorflow", "torch"]

_API = [
    ("torch", "torch", "zeros", "function"),
    ("torch", "torch", "ones", "function"),
    ("torch", "torch", "sum", "function"),
    ("torch", "torch.nn", "Linear", "class"),
    ("torch", "torch.nn.functional", "relu", "function"),
    ("torch", "torch.optim", "SGD", "class"),
    ("jax", "jax", "jit", "function"),
    ("jax", "jax", "grad", "function"),
    ("jax", "jax.numpy", "sum", "function"),
    ("jax", "jax.numpy", "zeros", "function"),
    ("tensorflow", "tensorflow", "constant", "function"),
    ("tensorflow", "tensorflow", "reduce_sum", "function"),
    ("tensorflow", "tensorflow.compat.v1", "Session", "class"),
    ("tensorflow", "tensorflow.keras.layers", "Dense", "class"),
]

_TEMPLATES = [
    "import torch\nimport torch.nn as nn\nfrom torch.nn import functional as F\n"
    "x = torch.zeros({i}) + torch.ones(2)\nlayer = nn.Linear({i}, 3)\ny = F.relu(x).sum()\n"
    "opt = torch.optim.SGD(layer.parameters(), lr=0.{i})\n",
    "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.sum(x) * {i}\n\n"
    "g = jax.grad(f)\nz = jnp.zeros(({i},))\n",
    "import tensorflow as tf\nc = tf.constant({i})\ns = tf.reduce_sum(c)\n"
    "sess = tf.Session()\nd = tf.keras.layers.Dense({i})\n",
    "import torch\nimport jax.numpy as jnp\nimport tensorflow as tf\n"
    "a = torch.sum(torch.zeros({i}))\nb = jnp.sum(jnp.zeros({i}))\nc = tf.reduce_sum(tf.constant({i}))\n",
    "def zeros(n):\n    return [0] * n\n\nprint(zeros({i}))\n",  # no framework: skipped with its reason
]


@pytest.fixture(scope="module")
def api() -> pd.DataFrame:
    return pd.DataFrame(
        [(fw, "1.0", f"{mod}.{name}", mod, name, kind) for fw, mod, name, kind in _API],
        columns=["framework", "framework_version", "qualified_name", "module", "name", "kind"],
    )


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few dozen files using the three frameworks, a syntax error, a non-UTF-8 file, a binary one."""
    folder = tmp_path_factory.mktemp("dask_corpus")
    for i in range(40):
        (folder / f"file_{i:02d}.py").write_text(_TEMPLATES[i % len(_TEMPLATES)].format(i=i + 1))
    (folder / "broken.py").write_text("import torch\ndef f(:\n    torch.zeros(3)\nx = torch.ones(1\n")
    (folder / "python2.py").write_text("import tensorflow as tf\nprint 'hi'\nc = tf.constant(1)\n")
    (folder / "latin1.py").write_bytes("import torch  # caf\xe9\nx = torch.zeros(2)\n".encode("latin-1"))
    (folder / "binary.py").write_bytes(b"import jax\x00\x01\x02")
    (folder / "empty.py").write_bytes(b"")
    return folder


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    local = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    )
    try:
        yield local
    finally:
        local.close()


def _text_records(folder: Path) -> list[Record]:
    """Records that carry their text (as the pinned and codeparrot sources do) rather than a path."""
    out = []
    for path in sorted(folder.glob("*.py")):
        try:
            out.append(Record(key=path.name, text=path.read_text("utf-8")))
        except UnicodeDecodeError:
            out.append(Record(key=path.name, path=str(path)))
    return out


@pytest.mark.parametrize("kind", ["paths", "texts"])
def test_dask_engine_equals_the_local_engine(kind: str, api: pd.DataFrame, corpus_dir: Path, cluster) -> None:
    def records():
        return path_records(corpus_dir) if kind == "paths" else iter(_text_records(corpus_dir))

    local_stats, dask_stats = CorpusStats(), CorpusStats()
    local = freq.count_frequencies(records(), FRAMEWORKS, api, corpus="c", num_proc=1, stats=local_stats)
    options = {"scheduler_address": cluster.scheduler_address, "partition_files": 7}  # 7 batches
    on_dask = freq.count_frequencies(
        records(), FRAMEWORKS, api, corpus="c", stats=dask_stats, engine="dask", dask=options
    )
    pd.testing.assert_frame_equal(on_dask, local)
    assert dask_stats == local_stats
    assert sum(local_stats.files.values()) > 30 and set(local_stats.files) == set(FRAMEWORKS)
    assert local_stats.skipped["encoding"] == 1 and local_stats.skipped["binary"] == 1
    assert local_stats.skipped["no_framework_import"] >= 8
    assert local_stats.flags["syntax_error"] >= 1
    assert (local["resolution"] == "resolved").any() and len(local) > 10


def test_run_frequencies_with_its_own_local_cluster(
    api: pd.DataFrame, corpus_dir: Path, tmp_path: Path
) -> None:
    """engine: dask with no scheduler address starts (and closes) a LocalCluster of num_proc workers."""
    from portability_data.tables.tableio import read_table, write_table

    api_path = tmp_path / "api.parquet"
    write_table("api", api, api_path)
    params = {"source": "path", "path": str(corpus_dir), "num_proc": 2}
    freq.run_frequencies({**params, "engine": "local"}, api_path, tmp_path / "local.parquet")
    freq.run_frequencies(
        {**params, "engine": "dask", "dask": {"scheduler_address": None, "partition_files": 10}},
        api_path,
        tmp_path / "dask.parquet",
    )
    local = read_table("frequencies", tmp_path / "local.parquet")
    pd.testing.assert_frame_equal(read_table("frequencies", tmp_path / "dask.parquet"), local)
    assert len(local) > 10


def test_unknown_engine_is_refused_naming_the_param(
    api: pd.DataFrame, corpus_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=r"frequencies\.engine .*local, dask.*'spark'"):
        freq.count_frequencies(path_records(corpus_dir), FRAMEWORKS, api, engine="spark")
    with pytest.raises(ValueError, match=r"frequencies\.engine"):  # before reading any corpus or table
        freq.run_frequencies({"source": "path", "path": "/nonexistent", "engine": "ray"}, tmp_path, tmp_path)


def test_unknown_dask_option_is_refused(api: pd.DataFrame, corpus_dir: Path) -> None:
    with pytest.raises(ValueError, match=r"frequencies\.dask .*'workers'"):
        freq.count_frequencies(path_records(corpus_dir), FRAMEWORKS, api, engine="dask", dask={"workers": 4})
