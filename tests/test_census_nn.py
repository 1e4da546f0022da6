"""The NN-op census (issue 60): the reviewed mapping is checked before anything runs, every op of it
is in each framework's manifest once (mapped, or with the reason it has no counterpart), the
adapters turn torch's samples into calls that give torch's answer, and a real run holds JAX to the
torch CPU result (oracle `torch_cpu`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from portability_data.pipeline.census.nn import (
    MAPPING_FILE,
    load_test_module,
    nn_manifest,
    read_mapping,
)
from portability_data.pipeline.frameworks.manifest import HarvestError
from portability_data.runner.nn_samples import NnSample, NotApplicable, pool_window, torch_samples
from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import run
from portability_data.tables.tableio import read_table
from tests.conftest import REPO_ROOT, census_checkout

MAPPING = REPO_ROOT / MAPPING_FILE


def manifest(framework: str) -> dict:
    return yaml.safe_load((REPO_ROOT / "cases" / framework / "census" / "nn.yaml").read_text())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda op: op.update(source="made_up"), "source 'made_up' is not one of"),
        (lambda op: op["tensorflow"].update(docs=[]), "tensorflow needs"),
        (lambda op: op["jax"].pop("adapter"), "jax needs"),
        (lambda op: op.update(signature="nope"), "SIGNATURES"),
    ],
)
def test_a_faulty_mapping_row_is_named(tmp_path: Path, change, message: str) -> None:
    mapping = yaml.safe_load(MAPPING.read_text())
    change(mapping["ops"][1])
    path = tmp_path / "nn_ops.yml"
    path.write_text(yaml.safe_dump(mapping))
    with pytest.raises(HarvestError, match=message) as raised:
        read_mapping(path)
    assert f"{path}: op 2 ({mapping['ops'][1]['entry']})" in str(raised.value)


def test_each_mapping_row_is_in_each_manifest_once() -> None:
    """Mapped or listed with the mapping's reason: counted, never dropped."""
    ops = read_mapping(MAPPING)["ops"]
    for framework in ("tensorflow", "jax"):
        found = manifest(framework)
        assert found["oracle"] == "torch_cpu"
        mapped = {e["entry"]: e for e in found["entries"]}
        unmapped = {u["entry"]: u["reason"] for u in found["unmapped"]}
        assert sorted([*mapped, *unmapped]) == sorted(op["entry"] for op in ops)
        for op in ops:
            target = op[framework]
            if "none" in target:
                assert unmapped[op["entry"]] == target["none"]
            elif op["entry"] in mapped:
                assert mapped[op["entry"]]["function"] == target["function"]
                assert all(n > 0 for n in mapped[op["entry"]]["samples"].values())
    jax_unmapped = {u["entry"] for u in manifest("jax")["unmapped"]}
    assert jax_unmapped == {
        "nn.functional.cross_entropy",
        "nn.functional.mse_loss",
        "nn.functional.l1_loss",
        "nn.functional.dropout",
        "nn.LSTMCell",
        "nn.GRUCell",
    }


def test_the_jax_manifest_is_what_the_mapping_and_wheels_give() -> None:
    census = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["census"]
    api = read_table("api", REPO_ROOT / "data" / "api" / "api.parquet")
    made = nn_manifest("jax", api, census, MAPPING, REPO_ROOT / "cases" / "jax" / "census")
    assert made == manifest("jax")


def test_a_pool_window_refuses_what_only_torch_expresses() -> None:
    """ceil_mode is kept where it adds no window, refused where it does (torch's formula)."""

    def sample(size: int, **bound: object) -> NnSample:
        defaults = {"stride": 2, "padding": 0, "dilation": 1, "return_indices": False}
        return NnSample(0, np.zeros((1, 1, size), np.float32), {**defaults, **bound}, None)

    assert pool_window(sample(3, kernel_size=3, ceil_mode=True), 1).kernel == (3,)
    with pytest.raises(NotApplicable, match="ceil_mode"):
        pool_window(sample(6, kernel_size=3, ceil_mode=True), 1)
    with pytest.raises(NotApplicable, match="return_indices"):
        pool_window(sample(6, kernel_size=3, ceil_mode=False, return_indices=True), 1)


def test_the_tensorflow_adapters_give_torchs_answer() -> None:
    """NCHW -> NHWC and OIHW -> HWIO with strides, explicit padding and groups: TensorFlow's
    result is torch's; a max pool with dilation is refused (tf.nn.max_pool has none), JAX takes it."""
    import tensorflow as tf

    from portability_data.runner.oracle import deviation

    module = load_test_module(REPO_ROOT / "cases" / "tensorflow" / "census" / "test_nn.py")
    tolerances = {"float32": {"atol": 1e-5, "rtol": 1.3e-6}}
    grouped = [
        s
        for s in torch_samples("opinfo", "nn.functional.conv2d", "conv", "float32")
        if s["groups"] == 2 and not isinstance(s["padding"], str)
    ]
    assert grouped
    for given in grouped:
        call = module.ADAPTERS["conv2d"](given, "float32")
        result = call.make()(*[tf.constant(a) for a in call.arrays], **call.kwargs)
        assert deviation(result, given.expected, tolerances)[2] is None, given.describe()
    dilated = next(
        s
        for s in torch_samples("opinfo", "nn.functional.max_pool2d", "max_pool", "float32")
        if s["dilation"] not in (1, (1, 1)) and not s["return_indices"] and not s["ceil_mode"]
    )
    with pytest.raises(NotApplicable, match="dilation"):
        module.ADAPTERS["max_pool2d"](dilated, "float32")
    jax_module = load_test_module(REPO_ROOT / "cases" / "jax" / "census" / "test_nn.py")
    call = jax_module.ADAPTERS["max_pool2d"](dilated, "float32")
    assert deviation(call.function(*call.arrays, **call.kwargs), dilated.expected, tolerances)[2] is None


def test_a_jax_census_run_is_held_to_torch_cpu(tmp_path: Path) -> None:
    """Real torch samples, real JAX, real runner: conv1d (torch's layout through dimension_numbers,
    strides, padding, groups, dilation) matches torch on all 10 samples; softmax fails on the 0-d
    sample torch takes (JAX's own error), the other six matching."""
    root = census_checkout(
        tmp_path / "repo", "jax", {"nn": {"nn.functional.conv1d": ["float32"], "softmax": ["float32"]}}
    )
    paths = Paths.under(root)
    spec = RunSpec(framework="jax", device="cpu", repeats=1, timeout_s=300, suite="census")
    run_id = run(spec, paths, log=lambda message: None)
    results = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pandas()
    by_subtest = results.set_index("subtest")
    conv = by_subtest.loc["test_entry[nn.functional.conv1d-float32]"]
    assert (conv["outcome"], conv["oracle"], conv["samples"], conv["samples_compared"]) == (
        "passed",
        "torch_cpu",
        10,
        10,
    )
    softmax = by_subtest.loc["test_entry[softmax-float32]"]
    assert (softmax["outcome"], softmax["error_type"], softmax["samples"], softmax["samples_failed"]) == (
        "failed",
        "ValueError",
        7,
        1,
    )
    assert softmax["case_id"] == "jax.census.nn.softmax"


def test_the_crossframework_table_sets_the_nn_ops_beside_torchs_own_row() -> None:
    """conv2d: TensorFlow and JAX (origin nn) beside torch's OpInfo row of the same entry, named
    torch.<entry>, held to torch_cpu; the NumPy namesake tanh stays its own group."""
    import pandas as pd

    from portability_data.pipeline.crossframework import crossframework
    from tests.test_crossframework import matrix_row

    matrix = pd.DataFrame(
        [
            matrix_row("torch", "opinfo", "nn.functional.conv2d", "float32", "works"),
            matrix_row("tensorflow", "nn", "nn.functional.conv2d", "float32", "works"),
            matrix_row("jax", "nn", "nn.functional.conv2d", "float32", "deviates"),
            matrix_row("torch", "opinfo", "nn.functional.relu", "float32", "works"),  # no nn row
            matrix_row("jax", "numpy", "tanh", "float32", "works"),
            matrix_row("tensorflow", "tnp", "tanh", "float32", "works"),
            matrix_row("jax", "nn", "tanh", "float32", "works"),
            matrix_row("torch", "opinfo", "tanh", "float32", "works"),
        ]
    )
    table = crossframework(matrix).set_index(["name", "framework"])
    conv = table.loc["torch.nn.functional.conv2d"]
    assert sorted(conv.index) == ["jax", "tensorflow", "torch"]
    assert set(conv["reference"]) == {"torch_cpu"}
    assert conv.loc["jax", "stands_apart"] == "alone_fails"
    assert "torch.nn.functional.relu" not in table.index.get_level_values("name")
    assert sorted(table.loc["tanh"].index) == ["jax", "tensorflow"]  # NumPy's tanh: numpy namesakes
    assert sorted(table.loc["torch.tanh"].index) == ["jax", "torch"]
