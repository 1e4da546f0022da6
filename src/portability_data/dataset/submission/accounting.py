"""Every subtest accounted for: which subtests a run must hold per repeat, and whether it does.

The subtests of a curated case are its pytest parametrization, known only by collecting the case
file with the framework installed; the check does not collect. It uses the cheapest sound
evidence instead: (1) the run itself: every repeat runs the same selection, so a subtest seen in
one repeat is expected in every repeat; (2) the committed runs of the same case at the same case
digest, framework version, device kind and mode (same file, same parametrization; a compiled
census runs only its manifest's compiled dtypes); (3) for a census entry, the census manifest at
the run's git commit, which names its subtests itself (entry x dtype, no collection needed). A
case whose run recorded a `<collection>` row never ran its subtests and is not held to them. A
complete run missing any expected (subtest, repeat) is refused whatever `n_results` says; a
partial run is told which are missing (a warning). Duplicates are refused by `run_rules`.

What this cannot see: a curated subtest dropped from every repeat of a case that no committed run
at the same digest has run (only the runner's own record of what it collected, or a re-run,
shows that).
"""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from portability_data.dataset.submission.problems import CheckReport, listed_values
from portability_data.runner.census_rows import CENSUS_FOLDER, TEST_NAME, pair_id

COLLECTION_MARK = "::<collection>"  # runner.supervisor.collection_id: the case never ran its subtests
CENSUS_MARK = f".{CENSUS_FOLDER}."  # in a census entry's case id (runner.census_rows.census_case_id)


def committed_files(repo_root: Path, table: str) -> list[Path]:
    """The files git tracks under data/<table>/ (committed runs; untracked ones are not evidence)."""
    done = subprocess.run(
        ["git", "-C", str(repo_root), "ls-files", "-z", "--", f"data/{table}"],
        capture_output=True,
        check=False,
        timeout=120,
    )
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0") if done.returncode == 0 else []
    return [repo_root / name for name in names if name.endswith(".parquet")]


def _case_digests(row: dict[str, Any]) -> dict[str, str]:
    try:
        listed = json.loads(row.get("case_digests") or "{}")
    except ValueError:
        return {}
    return listed if isinstance(listed, dict) else {}


def committed_subtests(repo_root: Path, row: dict[str, Any]) -> dict[str, set[str]]:
    """case_id -> the subtests committed runs recorded for it at this run's case digest, framework
    version, device kind and mode (a run's own id excluded: a committed copy is not other evidence)."""
    mine = _case_digests(row)
    wanted: dict[Path, set[str]] = {}
    for path in committed_files(repo_root, "runs"):
        if path.stem == row["run_id"] or not path.is_file():
            continue
        try:
            [other] = pq.read_table(path).to_pylist()
        except (pa.ArrowException, OSError, ValueError):
            continue
        setting = ("framework", "framework_version", "device", "mode")  # census: compiled runs fewer dtypes
        if any(other.get(name) != row[name] for name in setting):
            continue
        same = {case for case, digest in _case_digests(other).items() if mine.get(case) == digest}
        shard = repo_root / "data" / "results" / path.parent.name / path.name
        if same and shard.is_file():
            wanted[shard] = same
    found: dict[str, set[str]] = defaultdict(set)
    for shard, cases in wanted.items():
        try:
            table = pq.read_table(shard, columns=["case_id", "test_id"])
        except (pa.ArrowException, OSError, ValueError):
            continue
        for case_id, test_id in zip(table.column("case_id").to_pylist(), table.column("test_id").to_pylist()):
            if case_id in cases and COLLECTION_MARK not in test_id:
                found[case_id].add(test_id)
    return found


def census_subtests(repo_root: Path, row: dict[str, Any]) -> dict[str, set[str]]:
    """case_id -> the subtests the census manifests at the run's git commit give its census entries
    (runner.census_rows: every dtype in eager mode, the manifest's compiled dtypes in compiled
    mode); nothing where the run has no census entry, ran modified code or names no commit here."""
    listed = {case for case in _case_digests(row) if CENSUS_MARK in case}
    commit = row.get("git_commit")
    if not listed or not commit or row.get("code_modified"):
        return {}
    folder = f"cases/{row['framework']}/{CENSUS_FOLDER}"
    done = subprocess.run(
        ["git", "-C", str(repo_root), "ls-tree", "--name-only", f"{commit}:{folder}"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    found: dict[str, set[str]] = {}
    for name in done.stdout.split() if done.returncode == 0 else []:
        if not name.endswith(".yaml"):
            continue
        text = subprocess.run(
            ["git", "-C", str(repo_root), "show", f"{commit}:{folder}/{name}"],
            capture_output=True, text=True, check=False, timeout=120,
        ).stdout  # fmt: skip
        try:
            manifest = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            continue
        if not isinstance(manifest, dict) or not isinstance(manifest.get("entries"), list):
            continue
        only = set(manifest.get("compiled", {}).get("dtypes", [])) if row["mode"] == "compiled" else None
        node = f"{folder}/test_{name.removesuffix('.yaml')}.py::{TEST_NAME}["
        for entry in manifest["entries"]:
            if isinstance(entry, dict) and entry.get("case_id") in listed:
                dtypes = [d for d in entry.get("dtypes", []) if only is None or d in only]
                found[entry["case_id"]] = {f"{node}{pair_id(entry['entry'], d)}]" for d in dtypes}
    return found


def check_accounting(
    row: dict[str, Any], shard: pa.Table, where: str, shard_where: str, repo_root: Path, report: CheckReport
) -> None:
    """Each expected subtest exactly once per repeat: a complete run missing one is refused, a
    partial run is told which it misses."""
    cases = shard.column("case_id").to_pylist()
    tests = shard.column("test_id").to_pylist()
    repeats = shard.column("repeat").to_pylist()
    held: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    expected: dict[str, set[str]] = defaultdict(set)
    collected_not = set()
    for case_id, test_id, repeat in zip(cases, tests, repeats):
        if COLLECTION_MARK in test_id:
            collected_not.add(case_id)
            continue
        held[case_id][repeat].add(test_id)
        expected[case_id].add(test_id)
    committed = committed_subtests(repo_root, row)
    census = census_subtests(repo_root, row)
    for case_id, subtests in [*committed.items(), *census.items()]:
        if case_id not in collected_not:
            expected[case_id] |= subtests
    ran = sorted({r for r in repeats if isinstance(r, int) and 0 <= r < row["repeats"]})
    missing = [
        f"{test_id} repeat {repeat}"
        for case_id in sorted(expected)
        if case_id not in collected_not
        for repeat in ran  # a repeat absent as a whole: run_rules' repeats rule says so
        for test_id in sorted(expected[case_id] - held[case_id][repeat])
    ]
    report.subtests_expected += sum(len(v) for k, v in expected.items() if k not in collected_not) * len(ran)
    if not missing:
        return
    evidence = "this run's other repeats" + (
        f", {sum(len(v) for v in committed.values())} subtest(s) of committed runs at the same case digests"
        if committed
        else " (no committed run at the same case digests)"
    )
    if census:
        evidence += f" and the census manifests at {row['git_commit'][:10]}"
    issue = f"{len(missing)} expected (subtest, repeat) row(s) missing, expected from {evidence}: "
    issue += listed_values(missing)
    if row["status"] == "complete":
        report.add(
            shard_where,
            "subtests",
            f"complete run (n_results {row['n_results']}): {issue}",
            "submit the shard as the runner wrote it (a dropped subtest is refused whatever n_results "
            "says), or re-run",
        )
    else:
        report.warn(
            where,
            "subtests",
            f"partial run: {issue}",
            "the reviewer decides whether the partial run is useful as it is",
        )


def check_described(
    system_path: str, system: dict[str, Any], rows: list[dict[str, Any]], report: CheckReport
) -> None:
    """system.json must say what the runs rows say (run fields and host): a runs row edited after
    packaging (another host, another status) no longer matches its description."""
    from portability_data.dataset.submission.package import HOST_FIELDS, RUN_FIELDS, system_description

    described = {run.get("run_id"): run for run in system.get("runs", []) if isinstance(run, dict)}
    hosts = system.get("hosts") if isinstance(system.get("hosts"), list) else []
    for row in rows:
        run = described.get(row["run_id"])
        if run is None:
            continue  # not listed: _check_system_file says so
        expected = system_description([row], {row["run_id"]: []})["runs"][0]
        differing = sorted(name for name in RUN_FIELDS if run.get(name) != expected.get(name))
        host = {key: row.get(key) for key in HOST_FIELDS}
        if host not in hosts:
            differing.append(f"host ({listed_values(f'{k}={v}' for k, v in host.items() if k == 'host')})")
        if differing:
            report.add(
                system_path,
                "system",
                f"run {row['run_id']}: the runs row and system.json differ in {listed_values(differing)}",
                "re-package the runs with `portability submission package` (the runs row as the runner "
                "wrote it)",
            )
