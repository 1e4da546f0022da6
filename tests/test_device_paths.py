"""Device paths as records (issue 50): one module per path, a registry that finds them, a harness
digest per path (the shared core and the path's module), and the move that carried the committed
runs' digests over without a re-measure."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from portability_data.runner import devices
from portability_data.runner.backends import DeviceUnavailableError
from portability_data.runner.provenance import (
    CARRIED_HARNESS,
    CORE_FILES,
    DEVICES_FOLDER,
    LEGACY_HARNESS_FILE_SETS,
    carried_digests,
    device_modules,
    harness_digest,
    harness_digest_of,
    path_harness_digest,
)
from portability_data.runner.spec import RunError, RunSpec
from portability_data.tables import contracts

REPO_ROOT = Path(__file__).resolve().parents[1]
RUNNER = REPO_ROOT / "src" / "portability_data" / "runner"
RUNNER_IN_GIT = "src/portability_data/runner"


def test_the_registry_is_the_tables_vocabulary_and_each_path_says_what_it_needs() -> None:
    found = devices.registry()
    assert set(found) == set(contracts.DEVICES)
    for name, path in found.items():
        assert path.module == f"{name}.py" and (RUNNER / DEVICES_FOLDER / path.module).is_file()
        assert path.summary and path.what_to_do and path.backends
        assert set(path.backends) | set(path.not_served) == set(contracts.FRAMEWORKS)
        for framework, backend in path.backends.items():
            assert backend.name == framework
    assert devices.path_named("xla").needs and ".[xla]" in devices.path_named("xla").needs
    assert devices.compiler_of("torch", "cpu", "compiled") == "inductor"
    assert devices.compiler_of("torch", "xla", "compiled") == "openxla"
    assert devices.compiler_of("jax", "cpu", "compiled") == "xla"
    assert devices.compiler_of("torch", "cpu", "eager") is None


def test_unknown_devices_and_compilers_name_the_registered_ones() -> None:
    with pytest.raises(RunError, match=r"unknown device 'npu'; the registered device paths are cpu, "):
        RunSpec(framework="torch", device="npu").validate()
    with pytest.raises(RunError, match=r"unknown compiler 'tvm' for torch on cpu; registered: inductor"):
        RunSpec(framework="torch", device="cpu", mode="compiled", compiler="tvm").validate()
    with pytest.raises(RunError, match="a compiler needs --mode compiled"):
        RunSpec(framework="torch", device="cpu", mode="eager", compiler="inductor2").validate()
    RunSpec(framework="torch", device="xla", mode="compiled", compiler="openxla").validate()
    # the path's own compiler is the spec without one: same params hash as runs made before the axis
    assert RunSpec(framework="torch", device="cpu").params_hash("x") == RunSpec(
        framework="torch", device="cpu", compiler=None
    ).params_hash("x")
    with pytest.raises(DeviceUnavailableError, match="TensorFlow's XLA is its compiled mode"):
        devices.backend_for("tensorflow", "xla")


def test_a_path_whose_packages_are_missing_says_which_environment_to_build() -> None:
    try:
        importlib.import_module("torch_xla")
    except ImportError:
        with pytest.raises(DeviceUnavailableError, match=r"pip install -e \"\.\[xla\]\""):
            devices.backend_for("torch", "xla")
        # the tpu path builds on xla's backend but gives its own advice, not the xla environment's
        with pytest.raises(DeviceUnavailableError, match=r"TPU VM") as tpu:
            devices.backend_for("torch", "tpu")
        assert ".venv-xla" not in str(tpu.value) and "--device xla" not in str(tpu.value)
    else:
        pytest.skip("torch_xla is installed in this environment: the path starts")


def test_the_cli_lists_the_registry() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "portability_data.cli", "devices"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    ).stdout
    for name in contracts.DEVICES:
        assert f"{name} (runner/devices/{name}.py)" in shown
        assert f"harness digest: {harness_digest(REPO_ROOT / 'cases', name)[:16]}" in shown
    assert "tensorflow: not on this path" in shown and "compiler openxla" in shown


def test_a_path_digest_changes_with_its_module_or_the_core_only() -> None:
    core = [(RUNNER / name).read_bytes() for name in CORE_FILES]
    modules = device_modules(RUNNER / DEVICES_FOLDER)
    conftest = (REPO_ROOT / "cases" / "conftest.py").read_bytes()
    # the registered paths' modules (a shared module such as compiled_only.py is no path: its bytes
    # are in the digest of each path that imports it)
    names = [path.module.removesuffix(".py") for path in devices.registry().values()]
    assert set(names) < {m.removesuffix(".py") for m in modules}
    today = {n: path_harness_digest(core, modules, n, conftest) for n in names}
    assert today == {n: harness_digest(REPO_ROOT / "cases", n) for n in names}
    assert len(set(today.values())) == len(today)
    edited = {**modules, "gpu.py": modules["gpu.py"] + b"\n# edited\n"}
    after = {n: path_harness_digest(core, edited, n, conftest) for n in names}
    assert [n for n in names if after[n] != today[n]] == ["gpu"]
    # tpu builds on xla's torch_xla backend: an edit of xla.py is an edit of both
    edited = {**modules, "xla.py": modules["xla.py"] + b"\n# edited\n"}
    after = {n: path_harness_digest(core, edited, n, conftest) for n in names}
    assert sorted(n for n in names if after[n] != today[n]) == ["tpu", "xla"]
    # the compiled-only paths share compiled_only.py: an edit of it is an edit of each path importing it
    edited = {**modules, "compiled_only.py": modules["compiled_only.py"] + b"\n# edited\n"}
    after = {n: path_harness_digest(core, edited, n, conftest) for n in names}
    assert sorted(n for n in names if after[n] != today[n]) == [
        "executorch", "executorch_xnnpack", "iree", "iree_torch_mlir", "litert", "litert_flex",
        "onnxruntime", "openvino", "openvino_f32",
    ]  # fmt: skip
    # openvino_f32 is openvino with the precision pinned: an edit of openvino.py is an edit of both
    edited = {**modules, "openvino.py": modules["openvino.py"] + b"\n# edited\n"}
    after = {n: path_harness_digest(core, edited, n, conftest) for n in names}
    assert sorted(n for n in names if after[n] != today[n]) == ["openvino", "openvino_f32"]
    changed_core = [core[0] + b"\n# edited\n", *core[1:]]
    after = {n: path_harness_digest(changed_core, modules, n, conftest) for n in names}
    assert all(after[n] != today[n] for n in names)


SKELETON = '''\
"""A skeleton path for tests/test_device_paths.py: torch on the host CPU under another name."""

from portability_data.runner.backends import TorchBackend
from portability_data.runner.devices import DevicePath


class TorchSkeleton(TorchBackend):
    device_type = "cpu"

    def describe(self) -> str:
        return "skeleton CPU"


PATH = DevicePath(
    name="skeleton",
    summary="torch on the host CPU under another name",
    backends={"torch": TorchSkeleton},
    what_to_do="nothing: it is the host",
)
'''


def test_a_new_path_is_one_module_and_re_measures_nothing_else(case_repo) -> None:
    """The recipe of runner/devices/__init__.py: a module with a backend subclass and PATH is a
    registered path that really runs a case, with a digest of its own; no other path's changes."""
    from portability_data.runner.spec import Paths
    from portability_data.runner.supervisor import run

    before = {n: harness_digest(case_repo.root / "cases", n) for n in devices.path_names()}
    module = RUNNER / DEVICES_FOLDER / "skeleton.py"
    assert not module.exists()
    module.write_text(SKELETON)
    devices._REGISTRY.clear()
    try:
        assert len(SKELETON.splitlines()) <= 20  # what a path costs: this file, no other edit
        assert "skeleton" in devices.path_names()
        after = {n: harness_digest(case_repo.root / "cases", n) for n in devices.path_names()}
        assert {n: after[n] for n in before} == before
        assert after["skeleton"] not in before.values()
        case_repo.add(
            "torch",
            "add",
            "import torch\n\ndef test_a(device, timed):\n"
            "    assert timed(torch.add, torch.ones(2), 1).tolist() == [2.0, 2.0]\n",
        )
        paths = Paths.under(case_repo.root)
        spec = RunSpec(framework="torch", device="skeleton", repeats=1, timeout_s=300)
        run_id = run(spec, paths, log=lambda message: None)
        row = pq.read_table(paths.runs_dir / "portability" / f"{run_id}.parquet").to_pylist()[0]
        assert (row["device"], row["device_model"], row["status"]) == ("skeleton", "skeleton CPU", "complete")
        assert row["harness_digest"] == after["skeleton"]
        shard = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
        assert [r["outcome"] for r in shard] == ["passed"]
    finally:
        module.unlink()
        devices._REGISTRY.clear()
    assert "skeleton" not in devices.path_names()


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, check=True
    ).stdout


def _blob(commit: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(REPO_ROOT), "show", f"{commit}:{path}"], capture_output=True, check=True
    ).stdout


def test_each_carried_digest_is_the_commit_before_the_move_and_the_paths_of_the_move() -> None:
    """provenance.CARRIED_HARNESS, recomputed from git objects: `legacy` is the harness digest of
    the commit before the move (its one file set), `paths` the per-path digests of the move."""
    assert CARRIED_HARNESS, "the move of issue 50 carries the harness of its parent commit"
    if _git("rev-parse", "--is-shallow-repository").strip() == "true":
        pytest.skip("a shallow clone lacks the move's commits; `git fetch --unshallow` to check the carry")
    for carry in CARRIED_HARNESS:
        commit = carry["commit"]
        parent = _git("rev-parse", f"{commit}^").strip()
        conftest = _blob(parent, "cases/conftest.py")
        legacy = [_blob(parent, f"{RUNNER_IN_GIT}/{name}") for name in LEGACY_HARNESS_FILE_SETS[0]]
        assert harness_digest_of(legacy, conftest) == carry["legacy"]
        listed = _git("ls-tree", "--name-only", f"{commit}:{RUNNER_IN_GIT}/{DEVICES_FOLDER}").split()
        modules = {
            name: _blob(commit, f"{RUNNER_IN_GIT}/{DEVICES_FOLDER}/{name}")
            for name in listed
            if name.endswith(".py") and name != "__init__.py"
        }
        core = [_blob(commit, f"{RUNNER_IN_GIT}/{name}") for name in CORE_FILES]
        conftest = _blob(commit, "cases/conftest.py")
        assert carry["paths"] == {
            name.removesuffix(".py"): path_harness_digest(core, modules, name.removesuffix(".py"), conftest)
            for name in modules
        }


def test_the_committed_runs_keep_their_digest_match() -> None:
    """Every setting the run and census stages measure is covered by the committed runs (today's
    harness, a digest carried over the move, or an earlier harness params.yaml keeps for the
    setting: nothing to re-measure), and the newest xla run stands on today's xla harness or one
    carried to it (xla is measured by hand, in chunks: issue 48's re-measure began 2026-12-05)."""
    import yaml

    from portability_data.pipeline import run_stage as stage
    from portability_data.runner.spec import Paths

    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    paths = Paths.under(REPO_ROOT)
    rows = stage.finished_runs(paths.runs_dir)
    for section, suite in (("run", "curated"), ("census", "census")):
        run_params = params[section]
        today = {d: stage.todays_harness(paths.cases_dir, d) for d in run_params["devices"]}
        kept = stage.earlier_harness(run_params, today, rows, section)
        for framework in run_params["frameworks"]:
            for device in run_params["devices"]:
                for mode in run_params.get("modes_by_framework", {}).get(framework, run_params["modes"]):
                    spec = stage.setting_spec(
                        framework, device, mode, run_params["repeats"], run_params, suite=suite
                    )
                    name = f"{framework}/{device}/{mode}"
                    covered = stage.coverage(spec, paths, today[device], rows, earlier=kept.get(name, ()))
                    assert covered.missing == {}, f"{section} {name}: {sorted(covered.missing)[:5]}"
    xla_today = harness_digest(paths.cases_dir, "xla")
    newest = max((r for r in rows if r["device"] == "xla"), key=lambda r: str(r["started_at"]))
    assert newest["harness_digest"] in (xla_today, *carried_digests("xla", xla_today))
    assert json.loads(newest["case_digests"])
