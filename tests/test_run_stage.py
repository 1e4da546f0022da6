"""The run stage redoes nothing that is done: complete runs, and partial runs closed by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from portability_data.pipeline.run_stage import cases_digest, existing_runs
from portability_data.tables.tableio import write_table
from tests.conftest import example_rows


def _run(tmp_path: Path, run_id: str, status: str, key: str) -> None:
    row = {**example_rows()["runs"][0], "run_id": run_id, "status": status, "params_hash": key}
    write_table("runs", pd.DataFrame([row]), tmp_path / "runs" / "portability" / f"{run_id}.parquet")


def test_complete_beats_partial_and_running_is_ignored(tmp_path: Path) -> None:
    _run(tmp_path, "a-partial", "partial", "k1")
    _run(tmp_path, "b-complete", "complete", "k1")
    _run(tmp_path, "c-partial", "partial", "k1")
    _run(tmp_path, "d-partial", "partial", "k2")
    _run(tmp_path, "e-running", "running", "k3")
    found = existing_runs(tmp_path / "runs")
    assert {k: v["run_id"] for k, v in found.items()} == {"k1": "b-complete", "k2": "d-partial"}


def test_cases_digest_changes_with_a_case_file(case_repo) -> None:
    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    before = cases_digest(case_repo.root, "torch")
    (case_repo.root / "cases" / "torch" / "__pycache__").mkdir()
    (case_repo.root / "cases" / "torch" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert cases_digest(case_repo.root, "torch") == before  # caches are not cases
    (case_repo.root / "cases" / "torch" / "test_one.py").write_text("def test_a():\n    assert 1\n")
    assert cases_digest(case_repo.root, "torch") != before


def test_per_framework_modes_and_timeouts_choose_the_settings(case_repo, monkeypatch) -> None:
    """census.modes_by_framework leaves JAX's compiled setting out; timeout_s_by_framework gives
    JAX its own limit, so its key differs from one made with the common limit. With a complete run
    for every setting chosen, the stage runs nothing and lists exactly those."""
    from portability_data.pipeline import run_stage as stage
    from portability_data.runner.provenance import harness_digest
    from portability_data.runner.spec import Paths

    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    params = {
        "frameworks": ["torch", "jax"],
        "devices": ["cpu"],
        "modes": ["eager", "compiled"],
        "modes_by_framework": {"jax": ["eager"]},
        "repeats": 1,
        "timeout_s": 900,
        "timeout_s_by_framework": {"jax": 120},
        "memory_mb": 1024,
    }
    paths = Paths.under(case_repo.root)
    harness = harness_digest(paths.cases_dir, "cpu")
    settings = [("torch", "eager"), ("torch", "compiled"), ("jax", "eager")]
    for framework, mode in settings:
        spec = stage.setting_spec(framework, "cpu", mode, 1, params, suite="census")
        assert spec.timeout_s == (120.0 if framework == "jax" else 900.0)
        key = spec.params_hash(stage.cases_digest(paths.repo_root, framework, "census") + harness)
        _run(paths.runs_dir.parent, f"{framework}-{mode}", "complete", key)
    monkeypatch.setattr(stage, "run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("ran")))
    covering = stage.run_stage(params, case_repo.root, case_repo.root / "manifest.json", suite="census")
    assert covering == ["torch-eager", "torch-compiled", "jax-eager"]


PARAMS = {
    "frameworks": ["torch"],
    "devices": ["cpu"],
    "modes": ["eager"],
    "repeats": 1,
    "timeout_s": 120,
    "memory_mb": 4096,
}


def _git(root: Path, *args: str) -> None:
    import subprocess

    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


def _runs_rows(root: Path) -> dict[str, dict]:
    import pyarrow.parquet as pq

    rows = {}
    for path in (root / "data" / "runs").rglob("*.parquet"):
        for row in pq.read_table(path).to_pylist():
            rows[row["run_id"]] = row
    return rows


def test_a_new_or_edited_case_is_measured_alone(case_repo, capsys) -> None:
    """The real stage and runner on a committed case repository: the first call measures the whole
    suite; a new case, then an edited one, cost one run of that case each (the whole-suite run is
    proven by the case files at its commit, the one-case run by the digests it recorded); with
    nothing changed nothing runs, and the manifest names every run that measured a current case."""
    import json

    from portability_data.pipeline import run_stage as stage

    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    case_repo.add("torch", "two", "def test_b():\n    assert 2 > 1\n")
    _git(case_repo.root, "init", "-q")
    _git(case_repo.root, "add", "cases")
    _git(case_repo.root, "commit", "-q", "-m", "cases")
    manifest = case_repo.root / "manifest.json"

    first = stage.run_stage(PARAMS, case_repo.root, manifest)
    assert len(first) == 1
    assert set(json.loads(_runs_rows(case_repo.root)[first[0]]["case_digests"])) == {"torch.one", "torch.two"}

    case_repo.add("torch", "three", "def test_c():\n    assert 3 > 2\n")  # not committed: proven by digests
    second = stage.run_stage(PARAMS, case_repo.root, manifest)
    assert second[0] == first[0] and len(second) == 2
    added = _runs_rows(case_repo.root)[second[1]]
    assert set(json.loads(added["case_digests"])) == {"torch.three"}
    assert added["status"] == "complete"
    assert "running 1 new or changed case(s)" in capsys.readouterr().out

    (case_repo.root / "cases" / "torch" / "test_one.py").write_text("def test_a():\n    assert 1 == 1\n")
    third = stage.run_stage(PARAMS, case_repo.root, manifest)
    edited = _runs_rows(case_repo.root)[third[-1]]
    assert set(json.loads(edited["case_digests"])) == {"torch.one"}
    assert set(third) == {*second, edited["run_id"]}

    runs_before = set(_runs_rows(case_repo.root))
    again = stage.run_stage(PARAMS, case_repo.root, manifest)
    assert set(_runs_rows(case_repo.root)) == runs_before  # nothing ran
    assert set(again) == set(third)
    assert json.loads(manifest.read_text())["runs"] == again


def _subset_run(case_repo, params: dict, digests_of: list[str], run_id: str) -> dict[str, str]:
    """A complete runs row as the stage would write for a run of these cases (no runner)."""
    import json

    from portability_data.pipeline import run_stage as stage
    from portability_data.runner.provenance import case_digests, harness_digest
    from portability_data.runner.spec import Paths

    paths = Paths.under(case_repo.root)
    harness = harness_digest(paths.cases_dir, "cpu")
    digests = case_digests(paths, digests_of, "torch")
    spec = stage.setting_spec("torch", "cpu", "eager", params["repeats"], params)
    _, key = stage.subset_key(spec, digests, harness)
    row = {
        **example_rows()["runs"][0],
        "run_id": run_id,
        "framework": "torch",
        "device": "cpu",
        "mode": "eager",
        "source": "portability",
        "status": "complete",
        "params_hash": key,
        "harness_digest": harness,
        "case_digests": json.dumps(digests, sort_keys=True),
        "git_commit": None,
    }
    write_table("runs", pd.DataFrame([row]), paths.runs_dir / "portability" / f"{run_id}.parquet")
    return digests


def test_other_limits_or_another_harness_are_not_credited(case_repo, monkeypatch) -> None:
    """A run made under other limits (here the memory cap, which the runs row does not record) or
    with another harness measured nothing that counts today: the whole suite runs again."""
    from portability_data.pipeline import run_stage as stage

    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    case_repo.add("torch", "two", "def test_b():\n    assert True\n")
    asked = []
    monkeypatch.setattr(stage, "run", lambda spec, *a, **k: asked.append(spec) or f"new-{len(asked)}")
    manifest = case_repo.root / "manifest.json"

    _subset_run(case_repo, {**PARAMS, "memory_mb": 8192}, ["torch.one"], "other-cap")
    assert stage.run_stage(PARAMS, case_repo.root, manifest) == ["new-1"]
    assert asked[-1].cases == ()  # nothing proven: the whole suite, as one run of the setting

    _subset_run(case_repo, PARAMS, ["torch.one"], "same-cap")
    assert stage.run_stage(PARAMS, case_repo.root, manifest) == ["same-cap", "new-2"]
    assert asked[-1].cases == ("torch.two",)

    (case_repo.root / "cases" / "conftest.py").write_text("# another harness\n")
    assert stage.run_stage(PARAMS, case_repo.root, manifest) == ["new-3"]
    assert asked[-1].cases == ()


def test_suite_digest_at_a_commit_matches_the_tree(case_repo) -> None:
    """The digest git gives for a commit is the digest of the files as they were committed; a path
    outside git (or an unknown commit) says it cannot tell."""
    from portability_data.pipeline.run_stage import cases_digest, cases_digest_at

    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    assert cases_digest_at(case_repo.root, "HEAD", "torch") is None  # not a repository
    _git(case_repo.root, "init", "-q")
    _git(case_repo.root, "add", "cases")
    _git(case_repo.root, "commit", "-q", "-m", "cases")
    committed = cases_digest(case_repo.root, "torch")
    assert cases_digest_at(case_repo.root, "HEAD", "torch") == committed
    (case_repo.root / "cases" / "torch" / "test_one.py").write_text("def test_a():\n    assert 0\n")
    assert cases_digest(case_repo.root, "torch") != committed
    assert cases_digest_at(case_repo.root, "HEAD", "torch") == committed
    assert cases_digest_at(case_repo.root, "0" * 40, "torch") is None


def test_an_earlier_harness_kept_in_params_is_credited_and_stale_entries_refused(
    case_repo, monkeypatch, capsys
) -> None:
    """After a harness change, a setting that params.yaml keeps on its earlier harness is covered by
    that harness's runs (said, and recorded in the manifest); an entry naming today's harness, a
    digest no run of the setting has, or a setting re-measured since, is refused by name."""
    import json

    import pytest

    from portability_data.pipeline import run_stage as stage
    from portability_data.runner.provenance import harness_digest
    from portability_data.runner.spec import Paths

    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    asked = []
    monkeypatch.setattr(stage, "run", lambda spec, *a, **k: asked.append(spec) or f"new-{len(asked)}")
    manifest = case_repo.root / "manifest.json"
    cases_dir = Paths.under(case_repo.root).cases_dir
    _subset_run(case_repo, PARAMS, ["torch.one"], "before")
    before = harness_digest(cases_dir, "cpu")

    (cases_dir / "conftest.py").write_text("# another harness\n")
    today = harness_digest(cases_dir, "cpu")
    kept = {**PARAMS, "earlier_harness": {"torch/cpu/eager": before}}
    assert stage.run_stage(kept, case_repo.root, manifest) == ["before"]
    assert asked == []
    assert "measured by the earlier harness" in capsys.readouterr().out
    assert json.loads(manifest.read_text())["earlier_harness"] == {"torch/cpu/eager": before}

    for entry, says in [
        ({"torch/cpu/eager": today}, "is today's harness"),
        ({"torch/cpu/eager": [before, before]}, "a list of distinct digests"),
        ({"torch/cpu/eager": []}, "a list of distinct digests"),
        ({"torch/cpu/eager": "0" * 64}, "no complete run of torch/cpu/eager"),
        ({"torch/gpu/eager": before}, "not a setting of this stage"),
    ]:
        with pytest.raises(stage.EarlierHarnessError, match=says):
            stage.run_stage({**PARAMS, "earlier_harness": entry}, case_repo.root, manifest)
    assert asked == []  # refused before anything ran

    # a run made before runs recorded a harness digest proves nothing, kept setting or not
    spec = stage.setting_spec("torch", "cpu", "eager", 1, PARAMS)
    undated = {"status": "complete", "run_id": "old", "case_digests": '{"torch.one": "x"}'}
    assert stage.proven_digests(undated, spec, today, case_repo.root) == {}
    assert stage.proven_digests(undated, spec, today, case_repo.root, earlier=(before,)) == {}

    _subset_run(case_repo, PARAMS, ["torch.one"], "remeasured")  # today's harness covers it now
    with pytest.raises(stage.EarlierHarnessError, match="re-measured"):
        stage.run_stage(kept, case_repo.root, manifest)
    assert stage.run_stage(PARAMS, case_repo.root, manifest) == ["remeasured"]
    assert "earlier_harness" not in json.loads(manifest.read_text())


def test_a_setting_whose_cases_stand_on_two_earlier_harnesses_keeps_both(
    case_repo, monkeypatch, capsys
) -> None:
    """A setting re-measured in part between two harness changes stands on two earlier harnesses:
    params.yaml lists both, both runs are credited, and naming only one re-measures the other's
    cases (the list is not a default: each digest must be named)."""
    import json

    from portability_data.pipeline import run_stage as stage
    from portability_data.runner.provenance import harness_digest
    from portability_data.runner.spec import Paths

    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    case_repo.add("torch", "two", "def test_b():\n    assert True\n")
    asked = []
    monkeypatch.setattr(stage, "run", lambda spec, *a, **k: asked.append(spec) or f"new-{len(asked)}")
    manifest = case_repo.root / "manifest.json"
    cases_dir = Paths.under(case_repo.root).cases_dir
    _subset_run(case_repo, PARAMS, ["torch.one"], "first")
    first = harness_digest(cases_dir, "cpu")
    (cases_dir / "conftest.py").write_text("# the second harness\n")
    _subset_run(case_repo, PARAMS, ["torch.two"], "second")  # two, added since, measured on it
    second = harness_digest(cases_dir, "cpu")
    (cases_dir / "conftest.py").write_text("# today's harness\n")

    both = {**PARAMS, "earlier_harness": {"torch/cpu/eager": [first, second]}}
    assert sorted(stage.run_stage(both, case_repo.root, manifest)) == ["first", "second"]
    assert asked == []
    assert f"{first[:12]}, {second[:12]}" in capsys.readouterr().out
    assert json.loads(manifest.read_text())["earlier_harness"] == {"torch/cpu/eager": [first, second]}

    only_first = {**PARAMS, "earlier_harness": {"torch/cpu/eager": first}}
    stage.run_stage(only_first, case_repo.root, manifest)
    assert [spec.cases for spec in asked] == [("torch.two",)]  # the second harness's run is not credited


def test_a_census_run_of_todays_key_is_not_up_to_date_when_an_input_file_changed(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """The whole-suite key of a census run covers its manifests, modules, oracle and harness, not
    the shared generator or the dtype ledger that a case's digest also holds: a complete run with
    today's key whose recorded digests are no longer today's is not up to date; its changed cases
    are measured again."""
    import json

    from portability_data.pipeline import run_stage as stage
    from portability_data.runner.provenance import case_digests, harness_digest
    from portability_data.runner.spec import Paths
    from tests.conftest import census_checkout

    root = census_checkout(tmp_path / "repo", "torch", {"numpy": {"sin": ["float32"]}})
    params = {**PARAMS, "repeats": 1}
    paths = Paths.under(root)
    spec = stage.setting_spec("torch", "cpu", "eager", 1, params, suite="census")
    harness = harness_digest(paths.cases_dir, "cpu")
    key = spec.params_hash(stage.cases_digest(root, "torch", "census") + harness)
    today = case_digests(paths, ["torch.census.numpy.sin"], "torch")
    asked = []
    monkeypatch.setattr(stage, "run", lambda spec, *a, **k: asked.append(spec) or "new-1")
    for recorded, ran in (
        (today, []),
        ({"torch.census.numpy.sin": "made-with-another-generator"}, [("torch.census.numpy.sin",)]),
    ):
        row = {
            **example_rows()["runs"][0],
            "run_id": "whole",
            "source": "portability",
            "framework": "torch",
            "device": "cpu",
            "mode": "eager",
            "status": "complete",
            "params_hash": key,
            "case_digests": json.dumps(recorded),
        }
        write_table("runs", pd.DataFrame([row]), paths.runs_dir / "portability" / "whole.parquet")
        asked.clear()
        covering = stage.run_stage(params, root, root / "manifest.json", suite="census")
        assert [s.cases or ("torch.census.numpy.sin",) for s in asked] == ran
        assert covering == (["whole"] if not ran else ["new-1"])
