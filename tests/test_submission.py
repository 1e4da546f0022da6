"""`portability submission`: a run made here is packaged and passes the check; every tampered variant
is refused with its own line, naming the rule it breaks. All against a throwaway git repository
whose commit holds the cases and harness that ran (never this checkout)."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from portability_data.cli import main
from portability_data.dataset.submission.check import check_submission
from portability_data.dataset.submission.files import SubmissionError, parquet_magic_problem
from portability_data.dataset.submission.history import CommitDigests
from portability_data.dataset.submission.package import package
from portability_data.runner.provenance import CORE_FILES, DEVICES_FOLDER, harness_digest, sha256_of_parts
from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import run
from tests.conftest import REPO_ROOT, CaseRepo

CASE = """
import jax.numpy as jnp
import numpy as np
import pytest

@pytest.mark.parametrize("n", [1, 3])
def test_{name}(device, timed, n):
    out = timed(jnp.{name}, jnp.zeros((n,)))
    np.testing.assert_allclose(np.asarray(out), np.full(n, {value}))
"""
SOURCE = "local"
Change = Callable[[pa.Table], pa.Table]


@dataclass(frozen=True)
class Made:
    """The throwaway repository, the run made in it and its submission folder."""

    root: Path
    run_id: str
    out: Path

    def file(self, table: str) -> Path:
        return self.out / table / SOURCE / f"{self.run_id}.parquet"


def git(root: Path, *args: str) -> str:
    command = [
        "git",
        "-c",
        "user.name=test",
        "-c",
        "user.email=test@example.org",
        "-c",
        "commit.gpgsign=false",
    ]
    return subprocess.run(
        [*command, "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    """Two jax cases committed with a copy of the harness (so the digests are a commit's), one run
    of them (2 repeats, source local) and its submission folder."""
    root = tmp_path_factory.mktemp("submission") / "repo"
    cases = {
        "numpy_cos": (CASE.format(name="cos", value=1.0), "jax.numpy.cos"),
        "numpy_sin": (CASE.format(name="sin", value=0.0), "jax.numpy.sin"),
    }
    return Made(root, *packaged_run(root, cases))


def packaged_run(root: Path, cases: dict[str, tuple[str, str]]) -> tuple[str, Path]:
    """jax cases (slug -> test source, function) committed with a copy of the harness, so the run's
    digests are a commit's; one real run of them (2 repeats, source local) and the folder
    `portability submission package` made of it beside the repository: (run id, folder)."""
    repository = CaseRepo(root)
    for slug, (source, function) in cases.items():
        repository.add("jax", slug, source, function=function)
    runner = REPO_ROOT / "src" / "portability_data" / "runner"
    path_modules = [f"{DEVICES_FOLDER}/{p.name}" for p in (runner / DEVICES_FOLDER).glob("*.py")]
    for name in [*CORE_FILES, *path_modules]:
        target = root / "src" / "portability_data" / "runner" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(runner / name, target)
    git(root, "init", "-q")
    git(root, "add", "cases", "src")
    git(root, "commit", "-q", "-m", "cases and harness")
    spec = RunSpec(framework="jax", device="cpu", repeats=2, timeout_s=120, memory_mb=4096, source=SOURCE)
    run_id = run(spec, Paths.under(root), log=lambda message: None)
    out = root.parent / "submission"
    package(root, [run_id], out)
    return run_id, out


def rules(report: Any) -> set[str]:
    return {problem.rule for problem in report.problems}


def rows_changed(change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> Change:
    """A table change made on its rows (the schema, with its metadata, kept)."""
    return lambda table: pa.Table.from_pylist(change(table.to_pylist()), schema=table.schema)


def each(change: Callable[[dict[str, Any]], None]) -> Change:
    def apply(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            change(row)
        return rows

    return rows_changed(apply)


def tampered(
    made: Made, folder: Path, shard: Change | bytes | None, runs: Change | bytes | None
) -> list[Path]:
    """The run's two files copied to folder/<table>/local/, each changed (a table change, or raw
    bytes written in its place) or left byte for byte."""
    paths = []
    for table, change in (("results", shard), ("runs", runs)):
        target = folder / table / SOURCE / f"{made.run_id}.parquet"
        target.parent.mkdir(parents=True, exist_ok=True)
        if change is None:
            shutil.copyfile(made.file(table), target)
        elif isinstance(change, bytes):
            target.write_bytes(change)
        else:
            pq.write_table(change(pq.read_table(made.file(table))), target)
        paths.append(target)
    return paths


def set_field(**values: Any) -> Change:
    return each(lambda row: row.update(values))


def runs_plus(**deltas: int) -> Change:
    return each(lambda row: row.update({k: row[k] + v for k, v in deltas.items()}))


def other_case_digest(row: dict[str, Any], recompute: bool) -> None:
    """A case file edited before the run: its digest is no commit's (and cases_digest follows it,
    as a careful tamperer would make it, when `recompute`)."""
    digests = json.loads(row["case_digests"])
    digests["jax.numpy.cos"] = hashlib.sha256(b"an edited case").hexdigest()
    row["case_digests"] = json.dumps(digests, sort_keys=True)
    if recompute:
        row["cases_digest"] = sha256_of_parts(*(f"{k}={v}".encode() for k, v in sorted(digests.items())))


def negative_latency(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    timed = next(row for row in rows if row["op_latencies_ms"])
    timed["op_latencies_ms"] = [-0.5, *timed["op_latencies_ms"][1:]]
    return rows


def repeat_beyond(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows[-1]["repeat"] = 5
    return rows


def without_sin(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if row["case_id"] != "jax.numpy.sin"]


def sin_rows(made: Made) -> int:
    return sum(
        1 for v in pq.read_table(made.file("results")).column("case_id").to_pylist() if v == "jax.numpy.sin"
    )


class Unpickled:
    """Unpickling this creates a file: the check must never do it."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


def test_the_run_packages_into_a_submission_that_passes_the_check(made: Made) -> None:
    names = sorted(p.relative_to(made.out).as_posix() for p in made.out.rglob("*") if p.is_file())
    assert names == [
        f"chain/local/{made.run_id}.chain.json",  # the journal's chain (tests/test_submission_chain.py)
        f"chain/local/{made.run_id}.worker.log",  # the worker log the chain seals
        f"results/local/{made.run_id}.parquet",
        f"runs/local/{made.run_id}.parquet",
        "system.json",
    ]
    for table in ("results", "runs"):  # byte for byte
        assert (
            made.file(table).read_bytes()
            == (made.root / "data" / table / SOURCE / made.file(table).name).read_bytes()
        )
    system = json.loads((made.out / "system.json").read_text())
    [runs_row] = pq.read_table(made.file("runs")).to_pylist()
    [described] = system["runs"]
    assert (
        described["run_id"] == made.run_id
        and described["git_commit"] == git(made.root, "rev-parse", "HEAD").strip()
    )
    # the package that ran is this checkout's, not the made repository's: its commit says nothing of it
    assert described["code_modified"] is None and runs_row["code_modified"] is None
    made_harness = harness_digest(made.root / "cases", "cpu")
    assert described["harness_digest"] == made_harness == runs_row["harness_digest"]
    assert set(described["case_digests"]) == {"jax.numpy.cos", "jax.numpy.sin"}
    assert system["hosts"][0]["cpu_model"] == runs_row["cpu_model"] and system["hosts"][0]["cpu_count"] >= 1
    device = {"device": "cpu", "device_model": runs_row["device_model"], "accelerator": None, "driver": None}
    assert system["devices"] == [device]
    assert system["frameworks"][0]["framework_version"] == runs_row["framework_version"]
    assert system["frameworks"][0]["packages"]["jax"] == runs_row["framework_version"]

    report = check_submission([made.out], made.root)
    assert report.lines() == []
    assert (
        report.summary()[0].startswith("OK: 1 run(s) in 2 file(s)")
        and "2 case digest(s)" in report.summary()[0]
    )
    assert [r["status"] for r in report.runs] == ["complete"] and report.runs[0]["n_results"] == 8


TAMPERED = [
    # (id, shard change, runs change, rules refused, words of the line)
    ("pickle", "pickle", None, {"parquet"}, "not plain Parquet"),
    ("text", None, b"run_id,source\nx,local\n", {"parquet"}, "not plain Parquet"),
    ("schema-drift", lambda t: t.drop_columns(["device_model"]), None, {"contract"}, "missing column"),
    ("n-results-off", None, runs_plus(n_results=1), {"pairing"}, "n_results is 9, the shard has 8"),
    ("run-id-mismatch", None, set_field(run_id="jax-cpu-eager-20990101T000000Z-abcdef"), {"pairing"},
     "runs row has run_id 'jax-cpu-eager-20990101T000000Z-abcdef'"),
    ("repeats-mismatch", None, runs_plus(repeats=1), {"repeats"},
     "repeats=3, the shard has repeat values 0, 1"),
    ("repeat-beyond", rows_changed(repeat_beyond), None, {"repeats", "subtests"},  # its own repeat lacks it
     "repeat index >= the runs row's repeats=2"),
    ("version-differs", set_field(framework_version="0.0.1"), None, {"pairing"}, "column framework_version"),
    ("unknown-harness", None, set_field(harness_digest=hashlib.sha256(b"edited harness").hexdigest()),
     {"digest"}, "is the harness of none of the newest 1 commit(s)"),
    ("unknown-case", None, each(lambda row: other_case_digest(row, recompute=True)), {"digest"},
     "case jax.numpy.cos digest"),
    ("cases-digest-inconsistent", None, each(lambda row: other_case_digest(row, recompute=False)), {"digest"},
     "cases_digest is not the digest of its case_digests"),
    ("unknown-device-model", set_field(device_model="unknown"), set_field(device_model="unknown"),
     {"identity"}, "device_model is 'unknown'"),
    ("empty-device-model", set_field(device_model=""), set_field(device_model=""), {"identity", "contract"},
     "device_model is ''"),
    ("negative-latency", rows_changed(negative_latency), None, {"implausible"}, "1 op latenc(ies) <= 0"),
    ("zero-timer-floor", None, set_field(timer_floor_ms=0.0), {"implausible"}, "timer_floor_ms is 0.0"),
    ("no-timer-floor", None, set_field(timer_floor_ms=None), {"implausible"}, "timer_floor_ms is None"),
    ("duplicated-row", rows_changed(lambda rows: [*rows, rows[0]]), runs_plus(n_results=1),
     {"rows", "contract"}, "1 (test_id, repeat) pair(s) appear more than once"),
    ("still-running", None, set_field(status="running"), {"status"},
     "status 'running': the run did not finish"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("shard", "runs", "refused", "words"), [t[1:] for t in TAMPERED], ids=[t[0] for t in TAMPERED]
)
def test_a_tampered_run_is_refused_with_its_line(
    made: Made, tmp_path: Path, shard: Any, runs: Any, refused: set[str], words: str
) -> None:
    marker = tmp_path / "unpickled"
    if shard == "pickle":
        shard = pickle.dumps(Unpickled(marker))
    report = check_submission(tampered(made, tmp_path / "pr", shard, runs), made.root)
    assert rules(report) == refused, report.lines()
    assert any(words in line for line in report.lines()), report.lines()
    assert all(line.startswith(str(tmp_path / "pr")) for line in report.lines())  # each names its file
    assert not marker.exists()  # nothing was unpickled


def test_a_complete_run_missing_a_case_is_refused_and_a_partial_one_accepted(
    made: Made, tmp_path: Path
) -> None:
    fewer = runs_plus(n_results=-sin_rows(made))
    report = check_submission(
        tampered(made, tmp_path / "complete", rows_changed(without_sin), fewer), made.root
    )
    assert rules(report) == {"coverage"}
    assert "covers 1 of the 2 case(s) it lists (missing: jax.numpy.sin)" in report.lines()[0]

    def partial(table: pa.Table) -> pa.Table:
        return set_field(status="partial")(fewer(table))

    accepted = check_submission(
        tampered(made, tmp_path / "partial", rows_changed(without_sin), partial), made.root
    )
    assert accepted.lines() == [] and accepted.runs[0]["status"] == "partial"


def committed(made: Made, tmp_path: Path) -> Path:
    """A copy of the repository where the run's files are committed (as after its pull request)."""
    root = tmp_path / "repo"
    shutil.copytree(made.root, root)
    git(root, "add", "data/results", "data/runs")
    git(root, "commit", "-q", "-m", "the run")
    return root


def test_a_run_id_already_in_the_repository_is_refused(made: Made, tmp_path: Path) -> None:
    root = committed(made, tmp_path)
    report = check_submission([made.out], root)
    assert rules(report) == {"exists"}
    assert f"run id {made.run_id} exists already in the repository at HEAD" in report.lines()[0]
    assert f"data/results/local/{made.run_id}.parquet" in report.lines()[0]


def test_changing_or_deleting_a_committed_shard_is_refused_against_the_base(
    made: Made, tmp_path: Path
) -> None:
    root = committed(made, tmp_path)
    shard = Path("data") / "results" / SOURCE / f"{made.run_id}.parquet"
    assert check_submission([root / shard], root, base="HEAD").lines() == []  # unchanged: nothing to say

    pq.write_table(pq.read_table(root / shard), root / shard, compression="gzip")  # same rows, other bytes
    changed = check_submission([root / shard], root, base="HEAD")
    assert rules(changed) == {"immutable"}
    assert changed.lines()[0].startswith(f"{shard.as_posix()}: [immutable] changes a shard committed at HEAD")

    (root / shard).unlink()
    deleted = check_submission([root / shard], root, base="HEAD")
    assert rules(deleted) == {"immutable"}
    assert deleted.lines()[0].startswith(f"{shard.as_posix()}: [immutable] deletes a shard committed at HEAD")


def test_a_pull_request_adding_the_run_in_place_passes_against_its_base(made: Made, tmp_path: Path) -> None:
    root = committed(made, tmp_path)
    base = git(root, "rev-parse", "HEAD~1").strip()
    added = [root / "data" / table / SOURCE / f"{made.run_id}.parquet" for table in ("results", "runs")]
    assert check_submission(added, root, base=base).lines() == []
    with pytest.raises(SubmissionError, match="no-such-branch"):
        check_submission(added, root, base="no-such-branch")


def test_a_submission_folder_holds_only_its_files_and_their_description(made: Made, tmp_path: Path) -> None:
    folder = tmp_path / "submission"
    shutil.copytree(made.out, folder)
    (folder / "results" / SOURCE / "notes.pkl").write_bytes(b"not data")
    system = json.loads((folder / "system.json").read_text())
    system["runs"][0]["files"][0]["sha256"] = "0" * 64
    (folder / "system.json").write_text(json.dumps(system))
    lines = check_submission([folder], made.root).lines()
    assert any("notes.pkl: [file] not part of a submission" in line for line in lines), lines
    assert any("[system] results/local/" in line and "sha256 differs" in line for line in lines), lines
    assert len(lines) == 2


def test_digests_are_those_of_each_commit_read_from_git_objects(made: Made, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(made.root, root)
    first = git(root, "rev-parse", "HEAD").strip()
    (root / "cases" / "conftest.py").write_text((root / "cases" / "conftest.py").read_text() + "\n# edited\n")
    edited = harness_digest(root / "cases", "cpu")  # the installed harness with this repository's conftest
    git(root, "commit", "-q", "-am", "conftest edited")
    digests = CommitDigests(root)
    original = json.loads(pq.read_table(made.file("runs")).column("case_digests")[0].as_py())
    assert digests.unknown({edited}, set()) == (set(), set())
    made_harness = harness_digest(made.root / "cases", "cpu")
    assert digests.unknown({made_harness}, set(original.items())) == (set(), set())
    assert digests.harness[edited] != first and digests.harness[made_harness] == first
    assert digests.unknown({"0" * 64}, {("jax.numpy.cos", "0" * 64)}) == (
        {"0" * 64},
        {("jax.numpy.cos", "0" * 64)},
    )
    # Against a pull request's base, the harness the pull request brings itself vouches for nothing.
    assert CommitDigests(root, base=first).unknown({edited}, set()) == ({edited}, set())


def test_package_refuses_what_it_cannot_package(made: Made, tmp_path: Path) -> None:
    with pytest.raises(SubmissionError, match=r"run nope: no shard data/results/<source>/nope.parquet"):
        package(made.root, ["nope"], tmp_path / "out")
    with pytest.raises(SubmissionError, match="is not a run id"):
        package(made.root, ["../x"], tmp_path / "out")
    with pytest.raises(SubmissionError, match="exists and is not an empty folder"):
        package(made.root, [made.run_id], made.out)
    (tmp_path / "fake.parquet").write_bytes(b"PAR1" + b"\0" * 8 + b"PAR1")
    assert parquet_magic_problem(tmp_path / "fake.parquet") is None  # magic only: the contract reads next
    (tmp_path / "short.parquet").write_bytes(b"PAR1")
    assert "not plain Parquet" in (parquet_magic_problem(tmp_path / "short.parquet") or "")


def test_the_commands_exit_0_when_clean_and_1_with_a_line_per_problem(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "again"
    assert main(["submission", "package", made.run_id, "--out", str(out), "--root", str(made.root)]) == 0
    assert f"next: portability submission check {out}" in capsys.readouterr().out
    assert main(["submission", "check", str(out), "--root", str(made.root)]) == 0
    assert capsys.readouterr().out.startswith("OK: 1 run(s) in 2 file(s)")

    paths = tampered(made, tmp_path / "pr", rows_changed(negative_latency), set_field(timer_floor_ms=0.0))
    with pytest.raises(SystemExit) as exited:
        main(["submission", "check", *map(str, paths), "--root", str(made.root)])
    assert exited.value.code == 1
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("WARNING ")]
    assert len(err) == 3 and err[-1] == "FAILED: 2 problem(s) above, one per line"
    assert any("[implausible] 1 op latenc(ies) <= 0" in line for line in err[:2]), err
    assert any("[implausible] timer_floor_ms is 0.0" in line for line in err[:2]), err


def ci_pull_request_block() -> str:
    """The part of .ci/run that runs on a pull request (CI_BASE set), as it is written there."""
    text = (REPO_ROOT / ".ci" / "run").read_text()
    start = text.index('if [ -n "${CI_BASE:-}" ]; then')
    return "set -euo pipefail\n" + text[start : text.index("\nfi\n", start) + 4]


def test_ci_checks_the_shards_a_pull_request_adds_and_refuses_a_changed_one(
    made: Made, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(made.root, root)
    # .ci/run calls .venv/bin/portability: the running interpreter's scripts, whether or not this
    # checkout has a .venv
    (root / ".venv").mkdir()
    (root / ".venv" / "bin").symlink_to(Path(sys.executable).parent, target_is_directory=True)
    assert (root / ".venv" / "bin" / "portability").is_file(), f"no portability beside {sys.executable}"
    base = git(root, "rev-parse", "HEAD").strip()
    git(root, "checkout", "-q", "-b", "adds-a-run")
    git(root, "add", "data/results", "data/runs")
    git(root, "commit", "-q", "-m", "a run from my machine")

    def ci(target: str) -> subprocess.CompletedProcess[str]:
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CI_BASE": target}
        if "PYTHONPATH" in os.environ:  # the code under test, where the venv's install is another checkout's
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        return subprocess.run(
            ["bash", "-c", ci_pull_request_block()], cwd=root, env=env, capture_output=True, text=True
        )

    added = ci(base)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("OK: 1 run(s) in 2 file(s)") and made.run_id in added.stdout
    # the re-run spot check on the runs row it adds (a cpu run of 4 subtests: all re-run here)
    assert f"{made.run_id}: 4 of 4 sampled subtest(s) re-run on cpu" in added.stdout, added.stdout
    assert "4 agree, 0 disagree" in added.stdout

    merged = git(root, "rev-parse", "HEAD").strip()
    shard = root / "data" / "results" / SOURCE / f"{made.run_id}.parquet"
    pq.write_table(pq.read_table(shard), shard, compression="gzip")
    git(root, "commit", "-q", "-am", "touch up a committed shard")
    changed = ci(merged)
    assert changed.returncode == 1
    assert (
        f"data/results/local/{made.run_id}.parquet: [immutable] changes a shard committed at {merged}"
        in changed.stderr
    )


def test_package_needs_no_pandas_and_check_says_what_it_needs(made: Made, tmp_path: Path) -> None:
    """A bare device machine has pyarrow but not the pipeline extra: packaging must work there."""
    script = (
        "import sys\n"
        "class NotInstalled:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pandas', 'pandera'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, NotInstalled())\n"
        "from pathlib import Path\n"
        "from portability_data.dataset.submission.check import check_submission\n"
        "from portability_data.dataset.submission.files import SubmissionError\n"
        "from portability_data.dataset.submission.package import package\n"
        f"package(Path({str(made.root)!r}), [{made.run_id!r}], Path({str(tmp_path / 'bare')!r}))\n"
        "try:\n"
        f"    check_submission([Path({str(tmp_path / 'bare')!r})], Path({str(made.root)!r}))\n"
        "except SubmissionError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "install the pipeline extra" in done.stdout
    assert (tmp_path / "bare" / "system.json").is_file()


def test_census_entries_and_the_older_harness_file_set_are_matched_in_history(
    made: Made, tmp_path: Path
) -> None:
    """A census run names one digest per entry (its manifest and module): a commit that has them
    vouches for them. A commit of the harness before its split (harness.py and worker.py only)
    still gives the digest its runs recorded."""
    import yaml

    from portability_data.runner.provenance import case_digests, harness_digest_of

    root = tmp_path / "repo"
    shutil.copytree(made.root, root)
    census = root / "cases" / "torch" / "census"
    census.mkdir(parents=True)
    manifest = yaml.safe_load((REPO_ROOT / "cases" / "torch" / "census" / "opinfo.yaml").read_text())
    manifest["entries"] = [e for e in manifest["entries"] if e["entry"] in ("abs", "add")]
    (census / "opinfo.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    shutil.copy(REPO_ROOT / "cases" / "torch" / "census" / "test_opinfo.py", census / "test_opinfo.py")
    runner = root / "src" / "portability_data" / "runner"
    old_harness, old_worker = b"# the harness before its split\n", b"# its worker\n"
    for name in ("harness.py", "backends.py", "timing.py", "worker.py"):
        (runner / name).unlink()
    shutil.rmtree(runner / DEVICES_FOLDER)
    (runner / "harness.py").write_bytes(old_harness)
    (runner / "worker.py").write_bytes(old_worker)
    for judge in ("oracle.py", "device_oracle.py"):  # the census's judges, in its cases' digests
        shutil.copy(REPO_ROOT / "src" / "portability_data" / "runner" / judge, runner / judge)
    git(root, "add", "-A", "cases", "src")
    git(root, "commit", "-q", "-m", "a census, and the harness as it was before its split")
    wanted = case_digests(Paths.under(root), ["torch.census.opinfo.abs", "torch.census.opinfo.add"], "torch")
    assert len(wanted) == 2
    old = harness_digest_of([old_harness, old_worker], (root / "cases" / "conftest.py").read_bytes())
    assert CommitDigests(root).unknown({old}, set(wanted.items())) == (set(), set())
    (census / "test_opinfo.py").write_text((census / "test_opinfo.py").read_text() + "\n# changed\n")
    changed = case_digests(Paths.under(root), ["torch.census.opinfo.abs"], "torch")
    assert CommitDigests(root).unknown(set(), set(changed.items())) == (set(), set(changed.items()))


def test_a_census_module_is_vouched_for_with_the_input_files_it_imports(made: Made, tmp_path: Path) -> None:
    """A NumPy namesake module's digest holds the shared generator and the dtype ledger it imports
    (runner.provenance.CENSUS_INPUT_FILES): a commit that has them vouches for its entries, a commit
    without the ledger cannot (the module could not have run there), and a module that imports
    neither is vouched for either way."""
    import yaml

    from portability_data.runner.provenance import CENSUS_INPUT_FILES, case_digests

    root = tmp_path / "repo"
    shutil.copytree(made.root, root)
    census = root / "cases" / "torch" / "census"
    census.mkdir(parents=True)
    for origin, keep in (("numpy", "sqrt"), ("opinfo", "abs")):
        manifest = yaml.safe_load((REPO_ROOT / "cases" / "torch" / "census" / f"{origin}.yaml").read_text())
        manifest["entries"] = [e for e in manifest["entries"] if e["entry"] == keep]
        (census / f"{origin}.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
        shutil.copy(
            REPO_ROOT / "cases" / "torch" / "census" / f"test_{origin}.py", census / f"test_{origin}.py"
        )
    runner = root / "src" / "portability_data" / "runner"
    for path in (*CENSUS_INPUT_FILES, REPO_ROOT / "src" / "portability_data" / "runner" / "oracle.py"):
        shutil.copy(path, runner / path.name)
    git(root, "add", "-A", "cases", "src")
    git(root, "commit", "-q", "-m", "two census modules, one that imports the generator and the ledger")
    wanted = case_digests(Paths.under(root), ["torch.census.numpy.sqrt", "torch.census.opinfo.abs"], "torch")
    assert len(wanted) == 2
    assert CommitDigests(root).unknown(set(), set(wanted.items())) == (set(), set())

    git(root, "rm", "-q", "src/portability_data/runner/promotion.py")
    git(root, "commit", "-q", "-m", "the ledger gone")
    newest_only = CommitDigests(root, max_commits=1)
    numpy_pair = ("torch.census.numpy.sqrt", wanted["torch.census.numpy.sqrt"])
    assert newest_only.unknown(set(), set(wanted.items())) == (set(), {numpy_pair})


def test_a_run_from_code_git_commit_does_not_name_says_so(tmp_path: Path) -> None:
    """git_commit names HEAD; a change to the package's code beside it (a runner rule mended before
    committing, a module not yet added) ran too, and no digest covers the runner: the runs row's
    code_modified says so. Data and case files are not code (case_digests name cases exactly)."""
    from portability_data.runner.provenance import code_modified

    package = tmp_path / "src" / "portability_data"
    module = package / "runner" / "rule.py"
    module.parent.mkdir(parents=True)
    module.write_text("LIMIT = 1\n")
    assert code_modified(tmp_path, package) is None  # outside git: unknown, not "clean"
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "src")
    git(tmp_path, "commit", "-q", "-m", "code")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "shard.parquet").write_bytes(b"rows")
    assert code_modified(tmp_path, package) is False
    module.write_text("LIMIT = 2\n")
    assert code_modified(tmp_path, package) is True
    git(tmp_path, "checkout", "-q", "--", "src")
    (module.parent / "new_rule.py").write_text("NEW = True\n")
    assert code_modified(tmp_path, package) is True
    # the package that runs is not this checkout's (an install, another worktree): nothing to say
    assert code_modified(tmp_path) is None


def test_a_data_commit_while_a_run_measures_is_not_a_code_change(tmp_path: Path) -> None:
    """Shards committed while a run measures (its git_commit moves) leave src/'s tree as it was: the
    code that ran is the start's commit's; a commit that changes src/ is code that ran too."""
    from portability_data.runner.provenance import code_as_run, code_state

    package = tmp_path / "src" / "portability_data"
    package.mkdir(parents=True)
    (package / "rule.py").write_text("LIMIT = 1\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "src")
    git(tmp_path, "commit", "-q", "-m", "code")
    at_start = code_state(tmp_path, package)
    (tmp_path / "shard.parquet").write_bytes(b"rows")
    git(tmp_path, "add", "shard.parquet")
    git(tmp_path, "commit", "-q", "-m", "data")
    after_data = code_state(tmp_path, package)
    assert after_data["git_commit"] != at_start["git_commit"]
    assert code_as_run(at_start, after_data) == (at_start["git_commit"], False)
    (package / "rule.py").write_text("LIMIT = 2\n")
    git(tmp_path, "commit", "-q", "-am", "code again")
    assert code_as_run(at_start, code_state(tmp_path, package)) == (at_start["git_commit"], True)


def state(commit: str, modified: bool | None, tree: str | None = None) -> dict:
    """A checkout's code state as provenance.code_state gives it."""
    return {"git_commit": commit, "code_modified": modified, "src_tree": tree}


@pytest.mark.parametrize(
    "at_start, at_finish, expected",
    [
        (state("a", False), state("a", False), ("a", False)),
        # committed while it ran: workers started after the commit ran code the start's commit lacks
        (state("a", False), state("b", False), ("a", True)),
        (state("a", False, "t1"), state("b", False, "t2"), ("a", True)),
        # a commit of data alone while it ran (src/ the same tree): the code that ran is the start's
        (state("a", False, "t1"), state("b", False, "t1"), ("a", False)),
        (state("a", False, "t1"), state("b", True, "t1"), ("a", True)),
        # src/ edited and the edit undone while it ran, or edited only at the start: modified
        (state("a", True), state("a", False), ("a", True)),
        (state("a", False), state("a", True), ("a", True)),
        # one reading unknown and none modified: unknown, never "clean"
        (state("a", None), state("a", False), ("a", None)),
        # a journal from before the start was recorded: the finish's state, as before
        (None, state("b", False), ("b", False)),
    ],
)
def test_a_run_names_the_commit_it_started_from_and_a_change_while_it_ran(
    at_start: dict | None, at_finish: dict, expected: tuple
) -> None:
    from portability_data.runner.provenance import code_as_run

    assert code_as_run(at_start, at_finish) == expected


def test_the_documented_check_against_the_base_finds_the_branchs_files_itself(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CONTRIBUTING's `portability submission check --base origin/main`, no paths: the shards and
    runs rows the branch adds against the base, untracked or committed, are the ones checked."""
    root = tmp_path / "repo"
    shutil.copytree(made.root, root)
    base = git(root, "rev-parse", "HEAD").strip()
    monkeypatch.chdir(root)
    assert main(["submission", "check", "--base", base]) == 0  # the run's files, not yet added to git
    captured = capsys.readouterr()
    assert "2 shard(s) and runs row(s) added or changed against" in captured.err
    assert captured.out.startswith("OK: 1 run(s) in 2 file(s)") and made.run_id in captured.out
    git(root, "checkout", "-q", "-b", "adds-a-run")
    git(root, "add", "data/results", "data/runs")
    git(root, "commit", "-q", "-m", "a run from my machine")
    assert main(["submission", "check", "--base", base]) == 0  # committed on the branch
    assert capsys.readouterr().out.startswith("OK: 1 run(s) in 2 file(s)")
    shard = root / "data" / "results" / SOURCE / f"{made.run_id}.parquet"
    pq.write_table(pq.read_table(shard), shard, compression="gzip")  # a committed shard touched up
    git(root, "commit", "-q", "-am", "touch up")
    with pytest.raises(SystemExit) as exited:
        main(["submission", "check", "--base", "HEAD~1"])
    assert exited.value.code == 1
    assert f"data/results/local/{made.run_id}.parquet: [immutable] changes a shard" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="nothing to check: give the files"):
        main(["submission", "check"])
    with pytest.raises(SystemExit, match="--base no-such-branch is not a commit"):
        main(["submission", "check", "--base", "no-such-branch"])
