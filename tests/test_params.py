"""params.yaml is checked up front: each malformed knob is named with the fix, all at once."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from portability_data.pipeline.params import check_params
from portability_data.readings.params import ParamsError
from tests.conftest import REPO_ROOT

PARAMS = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())


def test_repository_params_are_valid() -> None:
    assert check_params(copy.deepcopy(PARAMS)) == PARAMS


BAD = [
    ("run.devices", ["npu"], "run.devices: unknown value 'npu'; use one of cpu, gpu, tpu, mps"),
    ("run.frameworks", ["mxnet"], "run.frameworks: unknown value 'mxnet'"),
    ("run.modes", "eager", "run.modes: must be a non-empty list"),
    ("run.repeats", 0, "run.repeats: must be an integer >= 1, got 0"),
    ("run.repeats", "3", "run.repeats: must be an integer >= 1, got '3'"),
    ("run.timeout_s", -5, "run.timeout_s: must be a number >= 1"),
    ("run.memory_mb", True, "run.memory_mb: must be an integer >= 64, got True"),
    ("sample.seed", 1.5, "sample.seed: must be an integer >= 0"),
    ("sample.sample_id", "my sample; rm -rf", "sample.sample_id: must be a short id"),
    ("dataset.version", 1.0, "dataset.version: must be a semantic version"),
    ("enumerate.frameworks", [], "enumerate.frameworks: must be a non-empty list"),
]


@pytest.mark.parametrize("key, value, expected", BAD, ids=[f"{k}={v!r}" for k, v, _ in BAD])
def test_bad_knob_is_named_with_the_fix(key: str, value: object, expected: str) -> None:
    params = copy.deepcopy(PARAMS)
    section, name = key.split(".")
    params[section][name] = value
    with pytest.raises(ParamsError) as caught:
        check_params(params, "params.yaml")
    assert expected in str(caught.value)


def test_missing_section_and_not_a_mapping() -> None:
    params = copy.deepcopy(PARAMS)
    del params["run"]
    with pytest.raises(ParamsError, match="section 'run' is missing"):
        check_params(params)
    with pytest.raises(ParamsError, match="not a YAML mapping"):
        check_params(["run"])


def test_every_problem_at_once() -> None:
    params = copy.deepcopy(PARAMS)
    params["run"]["devices"], params["run"]["repeats"] = ["npu"], 0
    with pytest.raises(ParamsError) as caught:
        check_params(params)
    assert len(caught.value.problems) == 2


def test_cli_refuses_bad_params_before_any_work(tmp_path: Path) -> None:
    params = copy.deepcopy(PARAMS)
    params["run"]["devices"] = ["cpu", "quantum"]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "portability_data.cli",
            "run-stage",
            "--params",
            str(tmp_path / "params.yaml"),
            "--out",
            str(tmp_path / "m.json"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 2
    assert "run.devices: unknown value 'quantum'" in out.stderr
    assert not (tmp_path / "m.json").exists()
