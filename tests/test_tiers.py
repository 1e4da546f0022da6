"""The test tiers are read from the code (tests/tiers.py, issue 56), so they cannot drift: a test
that imports a framework or starts a process, itself or through a fixture or a function of this
repository it calls, is not unit; a unit test that does so anyway fails, naming what it did."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import case_repo, sh
from tests.test_bare_runner import bare_venv
from tests.tiers import COLLECTED, Reach, TierError, reached_by, tier_of, unit_guard


def pure(values: list[int]) -> int:
    return sum(values)


def imports_torch_late() -> object:
    import torch

    return torch.zeros(1)


def calls_a_helper_that_imports_jax() -> object:
    return pure([1]) and imports_torch_late()


def runs_git() -> str:
    return subprocess.check_output(["git", "--version"], text=True)


def imports_by_a_runtime_name(name: str) -> object:
    import importlib

    return importlib.import_module(name)


def uses_a_conftest_helper() -> str:
    return sh(["true"], ".")


def reaches_the_run_stage_lazily() -> object:
    from portability_data.pipeline import run_stage as stage

    return stage.coverage


def makes_a_backend() -> object:
    from portability_data.runner import devices

    return devices.backend_for("torch", "cpu")


def builds_a_venv() -> None:
    subprocess.run([sys.executable, "-m", "venv", "/nowhere"], check=True)


@pytest.mark.parametrize(
    ("name", "tier"),
    [
        ("pure", "unit"),
        ("imports_torch_late", "e2e"),
        ("calls_a_helper_that_imports_jax", "e2e"),
        ("runs_git", "e2e"),
        ("imports_by_a_runtime_name", "e2e"),
        ("uses_a_conftest_helper", "e2e"),  # conftest's `sh` runs a process
        ("reaches_the_run_stage_lazily", "e2e"),  # run_stage's digests of earlier commits run git
        ("makes_a_backend", "e2e"),  # the device registry's backend imports the framework
        ("builds_a_venv", "env"),
    ],
)
def test_a_function_is_tiered_by_what_it_reaches(name: str, tier: str) -> None:
    """By name, so that this test itself reads as unit (it runs none of them)."""
    assert tier_of(reached_by(Reach(), globals()[name], [])) == tier


def test_fixtures_count_as_the_test_does() -> None:
    """A pure test body with the bare-venv fixture is env; with the case repository (files only), unit."""
    assert tier_of(reached_by(Reach(), pure, [bare_venv])) == "env"
    assert tier_of(reached_by(Reach(), pure, [case_repo])) == "unit"


def test_the_collected_tests_carry_their_tier(request: pytest.FixtureRequest) -> None:
    """conftest.py marked the tests of this file as they read: this one and the guard's pure test
    unit, the guard's framework and process tests e2e (they name functions that import torch or run
    git, though the guard stops both)."""
    assert {m.name for m in request.node.iter_markers()} & {"unit", "e2e", "env"} == {"unit"}
    tiers = request.config.stash[COLLECTED]  # every collected test's, `-m` deselected ones too
    here = "tests/test_tiers.py::"
    assert tiers[here + "test_the_guard_lets_a_pure_test_through"] == "unit"
    assert tiers[here + "test_a_unit_test_that_imports_a_framework_fails_naming_it"] == "e2e"
    assert tiers[here + "test_a_unit_test_that_starts_a_process_fails_naming_it"] == "e2e"


def test_a_unit_test_that_imports_a_framework_fails_naming_it() -> None:
    with (
        pytest.raises(TierError, match=r"t::x is in the unit tier .* but imported torch"),
        unit_guard("t::x"),
    ):
        imports_torch_late()


def test_a_unit_test_that_starts_a_process_fails_naming_it() -> None:
    refused = r"t::y is in the unit tier .* started a process \(\['git', '--version'\]"
    with pytest.raises(TierError, match=refused), unit_guard("t::y"):
        runs_git()


def test_the_guard_lets_a_pure_test_through() -> None:
    with unit_guard("t::z"):
        assert pure([1, 2]) == 3
        import json  # not a framework

        assert json.dumps(1) == "1"
