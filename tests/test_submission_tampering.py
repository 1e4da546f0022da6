"""Tampering a reviewer would try (issue 55): a real run is made and packaged in a throwaway
repository that also commits an earlier run of the same setting; each tampered copy, with
system.json's sha256 recomputed, is checked with `portability submission check` and must be refused
or flagged with a line naming the row and the check. What leaves every count consistent (an
outcome flipped, latencies scaled, a message changed, a row copied between repeats) is refused by
the journal's digest chain (dataset/submission/chain.py)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from portability_data.cli import main
from portability_data.dataset.submission.files import SYSTEM_FILE, file_sha256
from portability_data.dataset.submission.package import system_description
from tests.conftest import REPO_ROOT
from tests.test_submission import git, packaged_run

CASE = """
import jax.numpy as jnp
import numpy as np
import pytest

@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_{name}(device, timed, n):
    out = timed(jnp.{name}, jnp.zeros((n,)))
    np.testing.assert_allclose(np.asarray(out), np.full(n, {value}))
"""
SOURCE, EARLIER = "local", "earlier"
Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Made:
    """The throwaway repository, the run made there (not committed) and its submission folder."""

    root: Path
    run_id: str
    out: Path
    earlier_id: str


def _as_earlier(row: dict[str, Any], run_id: str) -> dict[str, Any]:
    return {**row, "run_id": run_id, "source": EARLIER}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    """Two jax cases of 6 subtests each, committed with a copy of the harness; one real run of
    them (2 repeats: 24 rows), packaged; its rows also committed as an earlier run of the same
    setting under another id and source (what the dataset holds for the same device and version)."""
    root = tmp_path_factory.mktemp("tampering") / "repo"
    cases = {
        "numpy_cos": (CASE.format(name="cos", value=1.0), "jax.numpy.cos"),
        "numpy_sin": (CASE.format(name="sin", value=0.0), "jax.numpy.sin"),
    }
    run_id, out = packaged_run(root, cases)
    earlier_id = run_id.replace("eager-", "eager-earlier-")
    for table in ("results", "runs"):
        data = pq.read_table(root / "data" / table / SOURCE / f"{run_id}.parquet")
        rows = [_as_earlier(row, earlier_id) for row in data.to_pylist()]
        target = root / "data" / table / EARLIER / f"{earlier_id}.parquet"
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=data.schema), target)
        git(root, "add", str(target))
    git(root, "commit", "-q", "-m", "an earlier run of the same setting")
    return Made(root, run_id, out, earlier_id)


def submitted(
    made: Made,
    folder: Path,
    shard: Callable[[Rows], Rows] | None = None,
    runs: Callable[[Rows], Rows] | None = None,
    run_id: str | None = None,
    chain: bool = True,
) -> Path:
    """A copy of the submission folder with its tables changed (schema kept), optionally renamed to
    `run_id`, and system.json's paths, sha256 and run fields made to match the runs row, as a careful
    tamperer would (its hosts list is left as packaged)."""
    shutil.copytree(made.out, folder)
    system = json.loads((folder / SYSTEM_FILE).read_text())
    for table, change in (("results", shard), ("runs", runs)):
        path = folder / table / SOURCE / f"{made.run_id}.parquet"
        if change is not None:
            data = pq.read_table(path)
            pq.write_table(pa.Table.from_pylist(change(data.to_pylist()), schema=data.schema), path)
        if run_id:
            path = path.rename(path.with_name(f"{run_id}.parquet"))
        if table == "runs":
            [row] = pq.read_table(path).to_pylist()
            files = system["runs"][0]["files"]
            described = system_description([row], {row["run_id"]: []})["runs"][0]
            system["runs"][0] = {**described, "files": files, "chain": system["runs"][0].get("chain")}
        for described in system["runs"][0]["files"]:
            if described["path"].startswith(f"{table}/"):
                described["path"] = path.relative_to(folder).as_posix()
                described["sha256"] = file_sha256(path)
    if not chain:  # as a run made before the runner wrote one: the chain only warns, the rest is tested
        shutil.rmtree(folder / "chain")
        for described in system["runs"]:
            described["files"] = [f for f in described["files"] if not f["path"].startswith("chain/")]
            described["chain"] = None
    (folder / SYSTEM_FILE).write_text(json.dumps(system, indent=2, sort_keys=True) + "\n")
    return folder


def check(made: Made, folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """Exit code and stderr lines of `portability submission check <folder>` in the made repo."""
    capsys.readouterr()
    try:
        code = main(["submission", "check", str(folder), "--root", str(made.root)])
    except SystemExit as exited:
        code = int(exited.code or 0)
    return code, capsys.readouterr().err.splitlines()


def each(change: Callable[[dict[str, Any]], None]) -> Callable[[Rows], Rows]:
    def apply(rows: Rows) -> Rows:
        for row in rows:
            change(row)
        return rows

    return apply


def n_results(delta: int) -> Callable[[Rows], Rows]:
    return each(lambda row: row.update(n_results=row["n_results"] + delta))


def flip_first_passed(rows: Rows) -> Rows:
    """(i) passed -> failed, with a category, error type and confirmation, as the runner fills them."""
    row = next(r for r in rows if r["outcome"] == "passed")
    row.update(
        outcome="failed",
        failure_category="float_precision",
        error_type="AssertionError",
        error_message="Not equal to tolerance rtol=1e-07, atol=0",
        confirmation="confirmed",
    )
    return rows


def times_ten(row: dict[str, Any]) -> None:
    row["op_latencies_ms"] = [v * 10 for v in row["op_latencies_ms"] or []]


def drop_repeat_one_rows(rows: Rows) -> Rows:
    """(iii) 9 rows of repeat 1 dropped: the other repeat still has them."""
    dropped = [r for r in rows if r["repeat"] == 1][:9]
    return [r for r in rows if r not in dropped]


def drop_subtests(rows: Rows) -> Rows:
    """(iii) 9 of the 12 subtests dropped from every repeat, each case kept (its coverage intact):
    only committed runs of the same case digests still have them."""
    return [r for r in rows if r["test_id"].endswith("[1]") or r["test_id"].endswith("test_cos[2]")]


def test_the_untampered_submission_passes_and_accounts_for_every_subtest(
    made: Made, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = check(made, made.out, capsys)
    assert (code, err) == (0, []), err
    [rows] = [pq.read_table(made.out / "runs" / SOURCE / f"{made.run_id}.parquet").to_pylist()]
    assert rows[0]["n_results"] == 24


def test_i_an_outcome_flipped_with_its_fields_filled_is_flagged_by_plausibility(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = submitted(made, tmp_path / "s", shard=flip_first_passed, chain=False)  # the chain refuses it
    code, err = check(made, folder, capsys)
    assert code == 0, err  # a warning, not a refusal: a real regression looks the same
    [line] = [line for line in err if "[plausibility]" in line]
    assert line.startswith("WARNING ") and f"results/{SOURCE}/{made.run_id}.parquet" in line
    assert "1 outcome(s) contradict every committed row" in line and "repeat 0: failed where 1" in line


def test_ii_every_latency_times_ten_is_flagged_by_plausibility(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = check(made, submitted(made, tmp_path / "s", shard=each(times_ten), chain=False), capsys)
    assert code == 0, err
    [line] = [line for line in err if "[plausibility]" in line]
    assert "latencies 10x those of 1 committed run(s)" in line and "repeat" in line and " ms vs " in line


def test_latencies_below_the_timer_floor_are_flagged(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    floor = each(lambda row: row.update(timer_floor_ms=1e6))  # system.json re-described to match
    code, err = check(made, submitted(made, tmp_path / "s", runs=floor), capsys)
    assert code == 0, err
    [line] = err
    assert (
        line.startswith(f"WARNING {tmp_path / 's' / 'results' / SOURCE}") and "[plausibility] 24 op" in line
    )
    assert "below the run's own timer_floor_ms 1000000.0" in line and "repeat 0: " in line


def test_a_partial_run_is_told_which_subtests_it_misses(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    partial = each(lambda row: row.update(status="partial", n_results=row["n_results"] - 9))
    folder = submitted(made, tmp_path / "s", drop_repeat_one_rows, partial, chain=False)
    code, err = check(made, folder, capsys)
    assert code == 0, err
    [line] = [line for line in err if "[chain]" not in line]
    assert (
        line.startswith(f"WARNING {tmp_path / 's' / 'runs' / SOURCE}")
        and "[subtests] partial run: 9 " in line
    )


def other_message(rows: Rows) -> Rows:
    rows[0]["error_message"] = "edited after the run"
    return rows


def copied_from_another_repeat(rows: Rows) -> Rows:
    """A row replaced by the same subtest's row of the other repeat (its repeat index rewritten)."""
    at = next(i for i, r in enumerate(rows) if r["repeat"] == 0)
    other = next(r for r in rows if r["repeat"] == 1 and r["test_id"] == rows[at]["test_id"])
    rows[at] = {**other, "repeat": 0}
    return rows


CHAIN_ONLY = [
    # what leaves every count, pairing and description consistent: only the journal's chain sees it
    ("outcome-flipped", flip_first_passed),
    ("latency-x10", each(times_ten)),
    ("error-message-changed", other_message),
    ("row-copied-from-another-repeat", copied_from_another_repeat),
]


@pytest.mark.parametrize("shard", [t[1] for t in CHAIN_ONLY], ids=[t[0] for t in CHAIN_ONLY])
def test_rows_edited_after_the_run_are_refused_by_the_chain(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str], shard: Callable[[Rows], Rows]
) -> None:
    code, err = check(made, submitted(made, tmp_path / "s", shard=shard), capsys)
    assert code == 1 and any("chain" in line for line in err), err


TAMPERED = [
    # (id, shard change, runs change, renamed run id, rule, words of the line)
    ("iii-9-rows-of-a-repeat-dropped", drop_repeat_one_rows, n_results(-9), None, "subtests",
     "complete run (n_results 15): 9 expected (subtest, repeat) row(s) missing, expected from this "
     "run's other repeats"),
    ("iii-9-subtests-dropped-everywhere", drop_subtests, n_results(-18), None, "subtests",
     "complete run (n_results 6): 18 expected (subtest, repeat) row(s) missing, expected from this run's "
     "other repeats, 12 subtest(s) of committed runs at the same case digests"),
    ("duplicated-subtest", lambda rows: [*rows, rows[0]], n_results(1), None, "rows",
     "1 (test_id, repeat) pair(s) appear more than once"),
    ("row-of-another-run-spliced", lambda rows: [*rows, {**rows[0], "run_id": "jax-cpu-eager-other"}],
     n_results(1), None, "pairing", "shard rows carry run_id jax-cpu-eager-other"),
    ("a-row-moved-to-the-other-repeat", lambda rows: [*rows, {**rows[0], "repeat": 1}][1:], None, None,
     "subtests", "1 expected (subtest, repeat) row(s) missing"),
    ("runs-row-with-another-host", None, each(lambda row: row.update(host="elsewhere")), None, "system",
     "the runs row and system.json differ in host (host=elsewhere)"),
    ("shard-renamed", None, None, "jax-cpu-eager-20990101T000000Z-abcdef", "pairing",
     "runs row has run_id"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("shard", "runs", "renamed", "rule", "words"), [t[1:] for t in TAMPERED], ids=[t[0] for t in TAMPERED]
)
def test_a_tampered_submission_is_refused_naming_the_file_and_the_check(
    made: Made,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    shard: Any,
    runs: Any,
    renamed: str | None,
    rule: str,
    words: str,
) -> None:
    code, err = check(made, submitted(made, tmp_path / "s", shard, runs, renamed), capsys)
    assert code == 1, err
    named = [line for line in err if f"[{rule}]" in line]
    assert named and any(words in line for line in named), "\n".join(err)
    assert all(line.startswith(str(tmp_path / "s")) for line in named), named
    assert err[-1].startswith("FAILED: ")


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_a_census_entry_is_held_to_the_dtypes_its_manifest_names(tmp_path: Path, mode: str) -> None:
    """A census entry's subtests are in its manifest at the run's commit (no collection, no committed
    run needed): a shard missing one dtype of an entry is refused; compiled mode expects only the
    manifest's compiled dtypes."""
    import yaml

    from portability_data.dataset.submission.accounting import census_subtests, check_accounting
    from portability_data.dataset.submission.problems import CheckReport

    root = tmp_path / "repo"
    census = root / "cases" / "torch" / "census"
    census.mkdir(parents=True)
    manifest = yaml.safe_load((REPO_ROOT / "cases" / "torch" / "census" / "opinfo.yaml").read_text())
    manifest["entries"] = [e for e in manifest["entries"] if e["entry"] in ("abs", "add")]
    (census / "opinfo.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    git(root, "init", "-q")
    git(root, "add", "cases")
    git(root, "commit", "-q", "-m", "a census")
    cases = {e["case_id"]: "digest" for e in manifest["entries"]}
    row = {"run_id": "r", "framework": "torch", "mode": mode, "repeats": 1, "status": "complete",
           "n_results": 0, "git_commit": git(root, "rev-parse", "HEAD").strip(), "code_modified": None,
           "framework_version": "2", "device": "cpu", "case_digests": json.dumps(cases)}  # fmt: skip
    expected = census_subtests(root, row)
    only = set(manifest["compiled"]["dtypes"]) if mode == "compiled" else None
    for entry in manifest["entries"]:
        dtypes = [d for d in entry["dtypes"] if only is None or d in only]
        node = "cases/torch/census/test_opinfo.py::test_entry["
        assert expected[entry["case_id"]] == {f"{node}{entry['entry']}-{d}]" for d in dtypes}
    held = sorted((case, test) for case, tests in expected.items() for test in tests)
    dropped = held.pop()
    shard = pa.table(
        {"case_id": [c for c, _ in held], "test_id": [t for _, t in held], "repeat": [0] * len(held)}
    )
    report = CheckReport()
    check_accounting({**row, "n_results": len(held)}, shard, "runs.parquet", "shard.parquet", root, report)
    [line] = report.lines()
    assert line.startswith("shard.parquet: [subtests] complete run") and f"{dropped[1]} repeat 0" in line
    assert "the census manifests at" in line
