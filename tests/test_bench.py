"""`portability bench`: this machine is measured as source `local`, beside the committed runs and
never pooled into them; a second bench is a no-op; a changed case is measured again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from portability_data.pipeline.aggregate.build import aggregate
from portability_data.pipeline.bench import BenchError, bench, detect_devices, plan
from portability_data.runner.spec import Paths
from tests.conftest import REPO_ROOT, example_rows

JAX_CASE = """
import jax.numpy as jnp
import numpy as np
import pytest

@pytest.mark.parametrize("n", [1, 3])
def test_cos(device, timed, n):
    out = timed(jnp.cos, jnp.zeros((n,)))
    np.testing.assert_allclose(np.asarray(out), np.ones(n))
"""

PARAMS = {
    "run": {"frameworks": ["jax"], "devices": ["cpu"], "modes": ["eager"], "repeats": 3,
            "timeout_s": 120, "memory_mb": 4096},
    "bench": {"profiles": {"quick": {"modes": ["eager"], "repeats": 1},
                           "full": {"modes": ["eager", "compiled"], "repeats": 2}}},
}  # fmt: skip


def local_shards(root) -> list:
    return sorted((root / "data" / "results" / "local").glob("*.parquet"))


def test_bench_lands_a_local_shard_and_a_second_bench_does_nothing(case_repo) -> None:
    case_repo.add("jax", "numpy_cos", JAX_CASE, function="jax.numpy.cos")
    said: list[str] = []
    first = bench(PARAMS, case_repo.root, "quick", ("jax",), say=said.append)
    assert len(first.covering) == 1 and first.ran_now == first.covering and not first.not_run
    assert "jax: devices found: cpu" in said[0] and any("\nOK: all 1 case(s) ran" in line for line in said)
    [shard] = local_shards(case_repo.root)
    rows = pq.read_table(shard).to_pylist()
    assert {r["source"] for r in rows} == {"local"} and {r["repeat"] for r in rows} == {0}
    assert sorted(r["outcome"] for r in rows) == ["passed", "passed"]
    [runs_row] = pq.read_table(case_repo.root / "data" / "runs" / "local" / shard.name).to_pylist()
    assert runs_row["source"] == "local" and runs_row["repeats"] == 1 and runs_row["mode"] == "eager"

    said.clear()
    second = bench(PARAMS, case_repo.root, "quick", ("jax",), say=said.append)
    assert second.covering == first.covering and second.ran_now == []
    assert len(local_shards(case_repo.root)) == 1
    assert any("has it already" in line for line in said)


def test_a_changed_case_or_another_profile_is_measured_again(case_repo) -> None:
    case_repo.add("jax", "numpy_cos", JAX_CASE, function="jax.numpy.cos")
    devices = {"jax": ["cpu"]}
    bench(PARAMS, case_repo.root, "quick", ("jax",), say=lambda m: None)
    assert all(s.done_run_id for s in plan(PARAMS, case_repo.root, "quick", ("jax",), devices))
    full = plan(PARAMS, case_repo.root, "full", ("jax",), devices)
    assert [(s.spec.mode, s.done_run_id) for s in full] == [("eager", None), ("compiled", None)]
    test_file = case_repo.root / "cases" / "jax" / "test_numpy_cos.py"
    test_file.write_text(test_file.read_text() + "\n# edited\n")
    assert [s.done_run_id for s in plan(PARAMS, case_repo.root, "quick", ("jax",), devices)] == [None]


def test_unknown_profile_or_framework_is_refused_before_anything_runs(case_repo) -> None:
    case_repo.add("jax", "numpy_cos", JAX_CASE, function="jax.numpy.cos")
    with pytest.raises(BenchError, match=r"unknown profile 'fast'.*quick, full"):
        bench(PARAMS, case_repo.root, "fast", ("jax",), say=lambda m: None)
    with pytest.raises(BenchError, match="unknown framework 'mxnet'"):
        plan(PARAMS, case_repo.root, "quick", ("mxnet",))
    assert not (case_repo.root / "data" / "results").exists()


def test_devices_are_detected_by_the_framework_itself() -> None:
    found, problem = detect_devices("jax")
    assert problem is None and found[0] == "cpu"
    # The base interpreter (outside the venv) lacks the framework: skipped with the reason.
    base = Path(sys.base_prefix) / "bin" / "python3"
    bare, why = detect_devices("jax", python=str(base))
    assert bare == [] and why is not None and "does not import here" in why and "jax" in why
    missing, reason = detect_devices("jax", python=str(base) + "-missing")
    assert missing == [] and "could not be asked" in reason


def test_a_local_run_stands_beside_ours_and_is_never_pooled_into_them() -> None:
    rows = example_rows()
    ours = pd.DataFrame(rows["results"])
    local = ours.assign(run_id="torch-cpu-eager-local", source="local", outcome="failed",
                        failure_category="other", failure_rule="unclassified",
                        error_type="AssertionError", error_message="boom")  # fmt: skip
    our_runs = pd.DataFrame(rows["runs"])
    alone, _ = aggregate(ours, our_runs)
    runs = pd.concat(
        [our_runs, our_runs.assign(run_id="torch-cpu-eager-local", source="local")], ignore_index=True
    )
    outcomes, _ = aggregate(pd.concat([ours, local], ignore_index=True), runs)
    by_source = dict(zip(outcomes["source"], outcomes["outcome"], strict=True))
    # The local run is newer and of the same framework, version, device model and mode: were it
    # pooled or allowed to supersede, ours would change.
    assert by_source == {"portability": alone["outcome"].item(), "local": "complete_failure"}


def test_bench_command_help_and_bad_profile_exit_cleanly() -> None:
    cli = [sys.executable, "-m", "portability_data.cli"]
    shown = subprocess.run([*cli, "bench", "--help"], capture_output=True, text=True, cwd=REPO_ROOT)
    assert shown.returncode == 0 and "--profile" in shown.stdout
    local = Paths.under(REPO_ROOT).results_dir / "local"  # committed by a contributor's pull request
    before = sorted(local.rglob("*")) if local.exists() else []
    bad = subprocess.run([*cli, "bench", "--profile", "nope"], capture_output=True, text=True, cwd=REPO_ROOT)
    assert bad.returncode != 0 and bad.stderr.strip().endswith("bench.profiles has quick, full")
    assert (sorted(local.rglob("*")) if local.exists() else []) == before  # nothing written


def test_the_full_profile_measures_the_census_too_under_its_own_section() -> None:
    """A contributor's `bench --profile full` runs the curated cases (3 repeats, both modes) and
    each framework's census (the census section's repeats, both modes) where it has one."""
    import yaml

    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    devices = {"torch": ["cpu"]}
    settings = plan(params, REPO_ROOT, "full", ("torch",), devices)
    found = [(s.spec.suite, s.spec.mode, s.spec.repeats) for s in settings]
    census_repeats = params["census"]["repeats"]
    assert found == [
        ("curated", "eager", 3),
        ("curated", "compiled", 3),
        ("census", "eager", census_repeats),
        ("census", "compiled", census_repeats),
    ]
    assert len({s.key for s in settings}) == 4  # each its own skip key
    quick = plan(params, REPO_ROOT, "quick", ("torch",), devices)
    assert [(s.spec.suite, s.spec.mode) for s in quick] == [("curated", "eager")]


def test_after_a_pull_only_the_new_or_edited_cases_run_and_another_host_is_not_credited(
    case_repo, monkeypatch
) -> None:
    """A bench on a committed checkout measures the whole suite; a new case, then an edited one,
    cost one run of that case each (beside the earlier local runs, which still cover the rest);
    a run this host made is never credited to another machine."""
    import json

    from portability_data.pipeline import bench as bench_module
    from tests.test_run_stage import _git

    params = {**PARAMS, "run": {**PARAMS["run"], "frameworks": ["torch"]}}
    devices = {"torch": ["cpu"]}
    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    case_repo.add("torch", "two", "def test_b():\n    assert 2 > 1\n")
    _git(case_repo.root, "init", "-q")
    _git(case_repo.root, "add", "cases")
    _git(case_repo.root, "commit", "-q", "-m", "cases")
    first = bench(params, case_repo.root, "quick", ("torch",), say=lambda m: None)
    assert len(first.ran_now) == 1

    case_repo.add("torch", "three", "def test_c():\n    assert 3 > 2\n")
    [planned] = plan(params, case_repo.root, "quick", ("torch",), devices)
    assert planned.spec.cases == ("torch.three",) and planned.covering == tuple(first.ran_now)
    said: list[str] = []
    second = bench(params, case_repo.root, "quick", ("torch",), say=said.append)
    assert len(second.ran_now) == 1 and second.covering == [*first.ran_now, *second.ran_now]
    assert any("running 1 new or changed case(s)" in line for line in said)
    [added] = pq.read_table(
        case_repo.root / "data" / "runs" / "local" / f"{second.ran_now[0]}.parquet"
    ).to_pylist()
    assert set(json.loads(added["case_digests"])) == {"torch.three"} and added["source"] == "local"

    (case_repo.root / "cases" / "torch" / "test_one.py").write_text("def test_a():\n    assert 1 == 1\n")
    [edited] = plan(params, case_repo.root, "quick", ("torch",), devices)
    assert edited.spec.cases == ("torch.one",)
    bench(params, case_repo.root, "quick", ("torch",), say=lambda m: None)
    [settled] = plan(params, case_repo.root, "quick", ("torch",), devices)
    assert settled.done_run_id is not None and len(settled.covering) == 3

    monkeypatch.setattr(bench_module, "host_key", lambda: "another-machine|another cpu|x86_64")
    [elsewhere] = plan(params, case_repo.root, "quick", ("torch",), devices)
    assert elsewhere.done_run_id is None and elsewhere.spec.cases == () and elsewhere.covering == ()
