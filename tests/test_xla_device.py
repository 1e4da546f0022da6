"""The xla device end to end (issue 27): `portability run --device xla` in the torch_xla environment
(the `xla` extra, its own venv: torch 2.9 + torch_xla 2.9) on XLA's CPU backend, with host fallback
recorded as its own outcome (issue 22) and confirmed alone, and the device's compile counts.

The environment is ~7 GB, so it is not part of `.[all]`: this test uses `.venv-xla` (or
PORTABILITY_XLA_PYTHON) and says how to make it when it is missing. CI makes it beside the main
install and sets PORTABILITY_REQUIRE_XLA=1, where a missing environment fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
CASE_ROW = """schema_version: 1
case_id: torch.{name}
framework: torch
function: torch.{name}
test_file: cases/torch/test_{name}.py
upstream_test: null
samples: []
status: active
removed_since: null
study_name: null
notes: "xla device test"
"""
CASES = {
    # lowered: runs on the device, compiled once in its warm-up, not again for the timed call
    "argsort": "def test_rows(device, timed):\n"
    "    out = timed(torch.argsort, torch.randn(5, 7), dim=1)\n"
    "    assert out.shape == (5, 7)\n",
    # not lowered by torch_xla: its counters say it ran on the host (aten::nonzero)
    "nonzero": "def test_mask(device, timed):\n"
    "    out = timed(torch.nonzero, torch.arange(6) % 2 == 0)\n"
    "    assert out.flatten().tolist() == [0, 2, 4]\n",
    # an output returned on the host
    "Tensor_cpu": "def test_to_host(device, timed):\n    timed(lambda t: t.cpu(), torch.ones(3))\n",
    # XLA cannot lower abs on bool; the failed graph leaves its live tensors without data, so the
    # next subtest in the same worker fails ("Check failed: tensor_data") unless the harness drops
    # the failure's frames first (harness.release_subtest)
    "abs": "def test_bool(device, timed):\n"
    "    flags = torch.ones(3, dtype=torch.bool)\n"
    "    timed(torch.abs, flags)\n\n\n"
    "def test_after_a_failure(device, timed):\n"
    "    assert timed(torch.abs, -torch.ones(3)).tolist() == [1.0, 1.0, 1.0]\n",
}


@pytest.fixture(scope="module")
def xla_python() -> Path:
    python = Path(os.environ.get("PORTABILITY_XLA_PYTHON") or REPO_ROOT / ".venv-xla" / "bin" / "python")
    if python.exists():
        return python
    how = 'python3 -m venv .venv-xla && .venv-xla/bin/pip install -q -e ".[xla]"'
    if os.environ.get("PORTABILITY_REQUIRE_XLA"):
        pytest.fail(f"no torch_xla environment at {python}: {how}")
    pytest.skip(f"no torch_xla environment at {python} (7 GB, not in .[all]): {how}")


def test_the_bench_finds_the_xla_device_in_its_environment(xla_python: Path, monkeypatch) -> None:
    from portability_data.pipeline.bench import detect_devices

    monkeypatch.setenv("PJRT_DEVICE", "CPU")
    assert detect_devices("torch", python=str(xla_python)) == (["cpu", "xla"], None)


def test_a_torch_run_on_xla_records_host_fallback_and_compiles(xla_python: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "cases" / "torch").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "cases" / "conftest.py", checkout / "cases" / "conftest.py")
    for name, body in CASES.items():
        (checkout / "cases" / "torch" / f"{name}.yaml").write_text(CASE_ROW.format(name=name))
        (checkout / "cases" / "torch" / f"test_{name}.py").write_text(f"import torch\n\n\n{body}")
    done = subprocess.run(
        [str(xla_python), "-m", "portability_data.cli", "run", "--framework", "torch", "--device", "xla",
         "--repeats", "1", "--confirm-by", "spawn"],
        cwd=checkout, capture_output=True, text=True, check=False, timeout=900,
        env={**os.environ, "PJRT_DEVICE": "CPU"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run_id = done.stdout.strip().splitlines()[-1]
    rows_of = pq.read_table(next((checkout / "data" / "results").rglob(f"{run_id}.parquet"))).to_pylist()
    rows = {r["case_id"]: r for r in rows_of}
    lowered, fell_back, to_host = rows["torch.argsort"], rows["torch.nonzero"], rows["torch.Tensor_cpu"]
    assert lowered["outcome"] == "passed" and lowered["host_fallback_ops"] == []
    assert (lowered["device_compiles"], lowered["device_compiles_timed"]) == (1, 0)
    assert fell_back["outcome"] == "host_fallback", fell_back
    assert fell_back["host_fallback_ops"] == ["aten::nonzero"] and fell_back["host_fallback_calls"] == 2
    assert "aten::nonzero" in fell_back["error_message"]
    assert to_host["outcome"] == "host_fallback" and to_host["error_type"] == "HostPlacementError"
    # a host fallback counts only once it recurs alone in a fresh worker
    assert fell_back["confirmation"] == to_host["confirmation"] == "confirmed"
    by_subtest = {r["subtest"]: r for r in rows_of}
    not_lowered, after = by_subtest["test_bool"], by_subtest["test_after_a_failure"]
    assert not_lowered["outcome"] == "failed" and "aten::abs" in not_lowered["error_message"]
    assert not_lowered["confirmation"] == "confirmed"
    assert (after["outcome"], after["confirmation"]) == ("passed", None), after
    assert {r["device"] for r in rows.values()} == {"xla"}
    assert {r["device_model"] for r in rows.values()} == {"XLA CPU (PJRT)"}
    run = pq.read_table(next((checkout / "data" / "runs").rglob(f"{run_id}.parquet"))).to_pylist()[0]
    assert run["framework_version"].startswith("2.9") and run["driver"].startswith("torch_xla 2.9")
    assert json.loads(run["build"])["pjrt_device"] == "CPU"


def test_the_module_census_finds_the_classes_torch_xla_rebinds(xla_python: Path) -> None:
    """Importing torch_xla binds torch.nn.GRU to torch_xla's own GRU, which torch's ModuleInfo
    database then names "GRU": the census still finds the entry nn.GRU (the class a user of the
    device gets) and lists nothing as absent from the wheel that is in it."""
    code = (
        "import importlib.util, torch, torch_xla, yaml\n"
        "path = 'cases/torch/census/test_module.py'\n"
        "spec = importlib.util.spec_from_file_location('census_module', path)\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        "found = module.infos_by_entry()\n"
        "assert found['nn.GRU'].module_cls is torch.nn.GRU, found['nn.GRU'].module_cls\n"
        "print(torch.nn.GRU.__module__)\n"
        "entries = yaml.safe_load(open('cases/torch/census/module.yaml'))['entries']\n"
        "print(sorted(e['entry'] for e in entries if e['entry'] not in found))\n"
    )
    done = subprocess.run(
        [str(xla_python), "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=False,
        timeout=300, env={**os.environ, "PJRT_DEVICE": "CPU"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rebound_in, absent = done.stdout.strip().splitlines()[-2:]
    assert rebound_in == "torch_xla.experimental.gru"
    assert absent == "['nn.LinearCrossEntropyLoss']"  # added to torch after 2.9 (the manifest: 2.13)


def test_the_confirmations_fork_server_preloads_torch_xla_then_the_databases(xla_python: Path) -> None:
    """On XLA's CPU backend the fork server imports what each fresh worker would (torch_xla, then
    torch's test databases, with CUDA hidden as worker_process does) in a spawned worker's order:
    torch_xla first, so the ModuleInfo database holds the GRU class torch_xla binds, as a spawned
    worker's collection does; no Python or extra native thread is left to make the fork unsafe."""
    code = (
        "import torch, threading\n"
        "from portability_data.runner import fork_worker\n"
        "before = fork_worker.native_threads()\n"
        "loaded = fork_worker.preload('torch', '.')\n"
        "from torch.testing._internal.common_modules import module_db\n"
        "gru = next(info.module_cls for info in module_db if info.module_cls.__name__ == 'GRU')\n"
        "print(loaded)\n"
        "print(gru.__module__, threading.active_count(), fork_worker.native_threads() - before)\n"
    )
    environment = {**os.environ, "PJRT_DEVICE": "CPU", "PORTABILITY_DEVICE": "xla"}
    environment.update(CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(REPO_ROOT / "src"))
    done = subprocess.run(
        [str(xla_python), "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=False,
        timeout=300, env=environment,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    loaded, state = done.stdout.strip().splitlines()[-2:]
    names = eval(loaded)  # a list of module and file names printed by the child
    assert names.index("torch_xla") < names.index("torch.testing._internal.common_modules"), names
    assert {"opinfo.yaml", "torch.testing._internal.common_methods_invocations"} <= set(names)
    gru_module, python_threads, new_native_threads = state.split()
    assert gru_module == "torch_xla.experimental.gru"
    assert python_threads == "1" and int(new_native_threads) <= 1  # scipy's OpenBLAS server at most
