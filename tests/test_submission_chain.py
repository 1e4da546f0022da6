"""Rows tied to what the runner saw (issue 55): a real run's journal chain is packaged with its
shard, the check recomputes it from the rows, and every row edited, invented, dropped or reordered
after the run (with system.json's sha256 made to match, as a careful hand would) is refused with a
line naming the row and the check. A run without a chain is warned about, not refused; a resumed
run's chain verifies; an edited journal is refused on resume."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from portability_data.cli import main
from portability_data.dataset.submission.chain import check_chains
from portability_data.dataset.submission.check import check_submission
from portability_data.dataset.submission.package import package
from portability_data.dataset.submission.problems import CheckReport, Submitted
from portability_data.runner.journal import Journal, resume_state
from portability_data.runner.row_chain import chain_head, chain_path, row_digest
from portability_data.runner.spec import Paths, RunError, RunSpec
from portability_data.runner.supervisor import close_partial, run
from tests.conftest import REPO_ROOT, CaseRepo, journaled_rows
from tests.test_submission import packaged_run

PASSING = """
import jax.numpy as jnp
import numpy as np
import pytest

@pytest.mark.parametrize("n", [1, 3])
def test_cos(device, timed, n):
    out = timed(jnp.cos, jnp.zeros((n,)))
    np.testing.assert_allclose(np.asarray(out), np.full(n, 1.0))
"""
FAILING = """
import jax.numpy as jnp
import numpy as np

def test_sin_is_one(device, timed):
    out = timed(jnp.sin, jnp.zeros((2,)))
    np.testing.assert_allclose(np.asarray(out), np.full(2, 1.0))
"""
SOURCE = "local"
COS_FILE = "cases/jax/test_numpy_cos.py"
COS = f"{COS_FILE}::test_cos[1] (repeat 0)"
SIN = "cases/jax/test_numpy_sin.py::test_sin_is_one"
FAILED = f"{SIN} (repeat 1)"


@dataclass(frozen=True)
class Made:
    root: Path
    run_id: str
    out: Path

    def file(self, folder: Path, kind: str) -> Path:
        suffix = ".chain.json" if kind == "chain" else ".parquet"
        return folder / kind / SOURCE / f"{self.run_id}{suffix}"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    """A passing and a failing jax case committed with the harness, one run (2 repeats, the
    failure confirmed alone) and its submission folder."""
    root = tmp_path_factory.mktemp("chain") / "repo"
    cases = {"numpy_cos": (PASSING, "jax.numpy.cos"), "numpy_sin": (FAILING, "jax.numpy.sin")}
    return Made(root, *packaged_run(root, cases))


def copy(made: Made, folder: Path) -> Path:
    shutil.copytree(made.out, folder)
    return folder


def resha(made: Made, folder: Path, chain_too: bool = False) -> None:
    """system.json's sha256 made to match the edited files (and its chain head, with `chain_too`)."""
    system_path = folder / "system.json"
    system = json.loads(system_path.read_text())
    for described in system["runs"]:
        for listed in described["files"]:
            listed["sha256"] = hashlib.sha256((folder / listed["path"]).read_bytes()).hexdigest()
        if chain_too:
            sidecar = json.loads(made.file(folder, "chain").read_text())
            described["chain"] = {"head": sidecar["head"], "records": sidecar["records"]}
    system_path.write_text(json.dumps(system))


def edit_rows(
    made: Made, folder: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
) -> None:
    """The shard's rows changed, the runs row's n_results and system.json's sha256 kept in step."""
    shard = made.file(folder, "results")
    table = pq.read_table(shard)
    rows = change(table.to_pylist())
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    runs = made.file(folder, "runs")
    runs_table = pq.read_table(runs)
    [runs_row] = runs_table.to_pylist()
    runs_row["n_results"] = len(rows)
    pq.write_table(pa.Table.from_pylist([runs_row], schema=runs_table.schema), runs)
    resha(made, folder)


def edit_chain(
    made: Made, folder: Path, change: Callable[[list[list[Any]]], list[list[Any]]], rehead: bool
) -> None:
    """The chain's records changed; with `rehead`, its head and count recomputed and system.json
    made to agree (everything a hand can fix without the rows' digests)."""
    path = made.file(folder, "chain")
    sidecar = json.loads(path.read_text())
    sidecar["chain"] = change(sidecar["chain"])
    if rehead:
        sidecar["records"], sidecar["head"] = len(sidecar["chain"]), chain_head(made.run_id, sidecar["chain"])
    path.write_text(json.dumps(sidecar))
    resha(made, folder, chain_too=rehead)


def row_of(rows: list[dict[str, Any]], subtest: str, repeat: int) -> dict[str, Any]:
    return next(r for r in rows if r["subtest"] == subtest and r["repeat"] == repeat)


def flip_to_failed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    row = row_of(rows, "test_cos[1]", 0)
    row.update(
        outcome="failed",
        failure_category="other",
        failure_rule="assertion",
        error_type="AssertionError",
        error_message="Not equal to tolerance",
        confirmation="confirmed",
    )
    return rows


def latencies_x10(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        row["op_latencies_ms"] = [v * 10 for v in row["op_latencies_ms"]]
    return rows


def new_message(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    row_of(rows, "test_sin_is_one", 1)["error_message"] = "RuntimeError: device lost (edited)"
    return rows


def invented(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    extra = {**row_of(rows, "test_cos[3]", 1), "test_id": "cases/jax/test_numpy_cos.py::test_cos[9]"}
    return [*rows, {**extra, "subtest": "test_cos[9]"}]


def dropped(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if not (r["subtest"] == "test_cos[1]" and r["repeat"] == 0)]


def other_verdict(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        if row["subtest"] == "test_sin_is_one":
            row["confirmation"] = "order_dependent"
    return rows


EDITED = (
    "row(s) differ from what the runner journaled (their digest is not the chain's): edited after the run:"
)
CONFIRMATION = "row(s) carry a confirmation the runner did not journal: edited after the run:"
ROW_TAMPERING = [
    # (id, change, words of the line)
    ("passed-to-failed", flip_to_failed, f"1 {EDITED} {COS}"),
    ("passed-to-failed-confirmation", flip_to_failed, f"1 {CONFIRMATION} {COS}"),
    ("latencies-x10", latencies_x10, f"6 {EDITED} {COS}, {COS_FILE}::test_cos[1] (repeat 1)"),
    ("error-message", new_message, f"1 {EDITED} {FAILED}"),
    ("invented", invented,
     "1 row(s) are not in the runner's chain: added after the run, or the chain cut: "
     f"{COS_FILE}::test_cos[9] (repeat 1)"),
    ("dropped", dropped,
     f"1 row(s) are in the runner's chain and not in the shard: dropped after the run: {COS}"),
    ("reordered", lambda rows: rows[::-1],
     f"row 1 {COS_FILE}::test_cos[3] (repeat 1) is out of the runner's order (repeat, case, test id)"),
    ("verdict", other_verdict, f"2 {CONFIRMATION} {SIN} (repeat 0), {SIN} (repeat 1)"),
]  # fmt: skip


def test_the_run_packages_its_chain_and_passes_the_check(made: Made) -> None:
    sidecar = json.loads(made.file(made.out, "chain").read_text())
    rows = pq.read_table(made.file(made.out, "results")).to_pylist()
    assert len(rows) == 6 and {r["outcome"] for r in rows} == {"passed", "failed"}
    kinds = [record[0] for record in sidecar["chain"]]
    assert kinds.count("row") == 6 and kinds.count("confirm") == 1  # the failure confirmed alone
    assert sidecar["head"] == chain_head(made.run_id, sidecar["chain"]) and sidecar["records"] == 7
    # the chain is the journal's: its last link is the head, byte for byte what the runner wrote
    journal = (made.root / "data" / ".journal" / f"{made.run_id}.jsonl").read_text().splitlines()
    links = [json.loads(line)["link"] for line in journal if '"link"' in line]
    assert links[-1] == sidecar["head"] and len(links) == 7
    system = json.loads((made.out / "system.json").read_text())
    [described] = system["runs"]
    assert described["chain"] == {"head": sidecar["head"], "records": 7}
    assert f"chain/local/{made.run_id}.chain.json" in [f["path"] for f in described["files"]]
    report = check_submission([made.out], made.root)
    assert report.lines() == [] and report.warnings == []
    assert {r["test_id"]: r["confirmation"] for r in rows if r["outcome"] == "failed"} == {
        "cases/jax/test_numpy_sin.py::test_sin_is_one": "confirmed"
    }


@pytest.mark.parametrize(
    ("change", "words"), [t[1:] for t in ROW_TAMPERING], ids=[t[0] for t in ROW_TAMPERING]
)
def test_a_row_changed_after_the_run_is_refused_naming_it(
    made: Made, tmp_path: Path, change: Callable[..., Any], words: str
) -> None:
    folder = copy(made, tmp_path / "pr")
    edit_rows(made, folder, change)
    report = check_submission([folder], made.root)
    lines = [line for line in report.lines() if "[chain]" in line]
    assert any(words in line for line in lines), report.lines()
    assert all(line.startswith(str(folder)) for line in report.lines())
    # the chain names it; a dropped or invented row may also leave the accounting short ("subtests",
    # "system"), which is the other check's line, not this one's
    assert "chain" in {p.rule for p in report.problems}, report.lines()


def test_the_worker_log_travels_sealed_and_an_edited_or_missing_one_is_refused(
    made: Made, tmp_path: Path
) -> None:
    """The finish seals the worker log's sha256 and size into the chain; the package carries the log;
    the check holds the packaged log to the seal (issue 55: the worker logs' digests)."""
    sidecar = json.loads(made.file(made.out, "chain").read_text())
    log = made.out / "chain" / SOURCE / f"{made.run_id}.worker.log"
    original = (made.root / "data" / ".journal" / f"{made.run_id}.log").read_bytes()
    assert log.read_bytes() == original and len(original) > 0
    assert sidecar["worker_log"] == {"sha256": hashlib.sha256(original).hexdigest(), "bytes": len(original)}
    edited = copy(made, tmp_path / "edited")
    edited_log = edited / "chain" / SOURCE / f"{made.run_id}.worker.log"
    edited_log.write_bytes(original.replace(b"passed", b"PASSED") + b"a line added after the run\n")
    resha(made, edited)  # system.json made to match: only the seal can tell
    report = check_submission([edited], made.root)
    assert [p.rule for p in report.problems] == ["chain"], report.lines()
    [line] = report.lines()
    assert "not the worker log the runner sealed" in line and str(edited_log) in line
    missing = copy(made, tmp_path / "missing")
    (missing / "chain" / SOURCE / f"{made.run_id}.worker.log").unlink()
    system = json.loads((missing / "system.json").read_text())
    for described in system["runs"]:
        described["files"] = [f for f in described["files"] if not f["path"].endswith(".worker.log")]
    (missing / "system.json").write_text(json.dumps(system))
    report = check_submission([missing], made.root)
    assert any("sealed a worker log for this run and it is missing" in line for line in report.lines())


@pytest.mark.parametrize("rehead", [False, True], ids=["as-cut", "head-recomputed"])
def test_a_truncated_chain_is_refused(made: Made, tmp_path: Path, rehead: bool) -> None:
    folder = copy(made, tmp_path / "pr")
    edit_chain(made, folder, lambda records: records[:-3], rehead)
    lines = check_submission([folder], made.root).lines()
    if rehead:  # system.json made to agree: the rows the chain lost are named
        assert any(
            "row(s) are not in the runner's chain: added after the run, or the chain cut" in line
            for line in lines
        ), lines
    else:
        assert any(
            "[chain] its 4 record(s) hash to head" in line and "truncated" in line for line in lines
        ), lines


def test_a_chain_records_edit_is_refused_unless_every_digest_is_forged(made: Made, tmp_path: Path) -> None:
    """Swapping two records breaks the head; recomputing the head is refused by system.json's
    record; a digest made up for an edited row still has to be the row's own digest."""
    folder = copy(made, tmp_path / "swapped")
    edit_chain(made, folder, lambda records: [records[1], records[0], *records[2:]], rehead=False)
    assert any(
        "edited, reordered or truncated" in line for line in check_submission([folder], made.root).lines()
    )

    folder = copy(made, tmp_path / "forged")
    edit_rows(made, folder, latencies_x10)
    rows = pq.read_table(made.file(folder, "results")).to_pylist()
    digests = {(r["test_id"], r["repeat"]): row_digest(r) for r in rows}

    def forge(records: list[list[Any]]) -> list[list[Any]]:
        return [[k, t, r, digests.get((t, r), d)] for k, t, r, d in records]

    edit_chain(made, folder, forge, rehead=True)
    # What the card says the check cannot prove: a chain rewritten over the edited rows (what a
    # patched runner would write) passes. The test keeps that limit visible.
    assert check_submission([folder], made.root).lines() == []


def test_a_run_without_a_chain_is_warned_about_not_refused(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy(made, tmp_path / "old")
    shutil.rmtree(folder / "chain")  # the chain and the worker log it seals
    system = json.loads((folder / "system.json").read_text())
    for described in system["runs"]:
        described["files"] = [f for f in described["files"] if not f["path"].startswith("chain/")]
        described["chain"] = None
    (folder / "system.json").write_text(json.dumps(system))
    assert main(["submission", "check", str(folder), "--root", str(made.root)]) == 0
    said = capsys.readouterr()
    out = said.out + said.err  # the summary on stdout, warnings for the reviewer on stderr
    assert "WARNING " in out and "its rows cannot be tied to a runner" in out, out

    missing = copy(made, tmp_path / "missing")  # system.json still describes the chain: refused
    made.file(missing, "chain").unlink()
    lines = check_submission([missing], made.root).lines()
    assert any("system.json describes a chain" in line for line in lines), lines


def test_the_command_exits_1_naming_the_row(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy(made, tmp_path / "pr")
    edit_rows(made, folder, latencies_x10)
    with pytest.raises(SystemExit) as exited:
        main(["submission", "check", str(folder), "--root", str(made.root)])
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert f"[chain] 6 {EDITED}" in err and COS in err, err


SLOW = """
import time
import pytest

@pytest.mark.parametrize("n", range(6))
def test_step(n):
    time.sleep(0.3)
    assert n >= 0
"""


@pytest.mark.parametrize("then", ["resume", "close"])
def test_a_killed_then_resumed_or_closed_run_keeps_a_valid_chain(
    case_repo: CaseRepo, tmp_path: Path, then: str
) -> None:
    """Killed after 3 rows with a line torn; resumed (the chain goes on from the journal's last
    link) or closed as partial (sealed as it stands): the packaged chain verifies either way."""
    case_repo.add("torch", "slow", SLOW)
    paths = Paths.under(case_repo.root)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    command = [sys.executable, "-m", "portability_data.cli", "run", "--framework", "torch", "--repeats", "2"]
    runner = subprocess.Popen(
        command, cwd=case_repo.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while journaled_rows(paths.journal_dir) < 3:
        assert time.monotonic() < deadline and runner.poll() is None
        time.sleep(0.05)
    os.killpg(runner.pid, signal.SIGKILL)
    runner.wait()
    run_id = next(paths.journal_dir.glob("*.jsonl")).stem
    with open(paths.journal_dir / f"{run_id}.jsonl", "a") as journal:
        journal.write('{"row": {"test_id": "torn')  # a line torn by the kill: the resume must end it
    if then == "resume":
        assert (
            run(RunSpec(framework="torch", device="cpu"), paths, resume=run_id, log=lambda m: None) == run_id
        )
    else:
        assert close_partial(run_id, paths) == run_id
    out = tmp_path / "submission"
    package(case_repo.root, [run_id], out)
    sidecar = json.loads(chain_path(paths.journal_dir / f"{run_id}.jsonl").read_text())
    journaled = (paths.journal_dir / f"{run_id}.jsonl").read_text().count('"link"')
    expected = 12 if then == "resume" else journaled
    assert 3 <= journaled == sidecar["records"] == expected
    assert sidecar["head"] == chain_head(run_id, sidecar["chain"])
    shard = out / "results" / SOURCE / f"{run_id}.parquet"
    item = Submitted(shard, str(shard), "results", SOURCE, run_id, pq.read_table(shard))
    report = CheckReport()
    check_chains([out], [item], report)
    assert report.lines() == [] and report.warnings == []


INFO = {"device_model": "cpu", "framework_version": "0", "timer_floor_ms": None, "driver": None}


def test_a_journal_edited_before_resume_is_refused_naming_the_line(tmp_path: Path) -> None:
    paths = Paths.under(tmp_path)
    spec = RunSpec(framework="jax", device="cpu", repeats=1)
    journal = Journal(paths.journal_dir / "jax-run.jsonl")
    journal.start({"run_id": "jax-run", "spec": {**spec.__dict__}, "started_at": "t", "params_hash": "h"})
    for n in range(3):
        journal.append({"test_id": f"t::s{n}", "repeat": 0, "outcome": "passed", "op_latencies_ms": [1.0]})
    journal.append_info(INFO)
    journal.close()
    assert resume_state("jax-run", paths).journal.seal("jax-run") is not None
    path = paths.journal_dir / "jax-run.jsonl"
    path.write_text(
        path.read_text().replace('"op_latencies_ms": [1.0]}, "link"', '"op_latencies_ms": [9.0]}, "link"', 1)
    )
    with pytest.raises(RunError, match=r"line 2 \(t::s0, repeat 0\) does not hash to its link"):
        resume_state("jax-run", paths)


def test_a_journal_from_before_the_chain_resumes_unchained(tmp_path: Path) -> None:
    paths = Paths.under(tmp_path)
    path = paths.journal_dir / "jax-old.jsonl"
    path.parent.mkdir(parents=True)
    spec = RunSpec(framework="jax", device="cpu", repeats=1)
    header = {"run_id": "jax-old", "spec": {**spec.__dict__}, "started_at": "t", "params_hash": "h"}
    row = {"test_id": "t::s", "repeat": 0, "outcome": "passed"}
    lines = [{"header": header}, {"info": INFO}, {"row": row}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    state = resume_state("jax-old", paths)
    state.journal.append({**row, "test_id": "t::u"})
    state.journal.close()
    assert state.journal.seal("jax-old") is None and '"link"' not in path.read_text()


def test_a_census_runs_rows_hash_alike_from_the_journal_and_from_the_shard(tmp_path: Path) -> None:
    """Census rows carry measures, dtypes, NaN-able errors and a confirmed failure: each column's
    value written to Parquet must hash as it did when journaled, or every census run is refused."""
    from tests.test_census_jax import census_repo

    root = census_repo(
        tmp_path / "repo", {"abs": ["float32"], "lu": ["float16"]}, {"add": ["float32", "int8"]}
    )
    paths = Paths.under(root)
    spec = RunSpec(framework="jax", device="cpu", repeats=1, timeout_s=300, suite="census")
    run_id = run(spec, paths, log=lambda message: None)
    out = tmp_path / "submission"
    package(root, [run_id], out)
    shard = out / "results" / "portability" / f"{run_id}.parquet"
    item = Submitted(shard, str(shard), "results", "portability", run_id, pq.read_table(shard))
    rows = pq.read_table(shard).to_pylist()
    assert any(r["confirmation"] == "confirmed" for r in rows) and any(r["samples"] for r in rows)
    report = CheckReport()
    check_chains([out], [item], report)
    assert report.lines() == [] and report.warnings == []
