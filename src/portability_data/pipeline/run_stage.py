"""The DVC `run` stage: run, for every framework x device x mode of params.yaml, the cases that no
finished run has measured as they are now, and write a manifest of the runs that cover the cases.

Shards are source data, not stage outputs (docs/ARCHITECTURE.md, "Data flow"): a shard from another
machine is added by git and picked up by `aggregate`. A setting is up to date when a finished run of
the same framework, device, mode and parameters over the same case files and the same harness is in
data/runs (the params hash covers both digests: a changed harness re-measures everything). Otherwise the stage
measures only what is missing: a case counts as measured when a complete run whose parameters are
proven equal to today's (its params hash recomputed from what it recorded: its case digests, or the
case files at its git commit) ran it with the same harness and the same case files. So a new or
edited case costs its own run, not its framework's whole suite again (aggregate pools, per case,
the runs of the newest code: pipeline/subtests.py's supersede). Only the manifest is an output.

A harness change re-measures every setting (~5 h on this 2-core machine, more than a working
session), so a harness change can name, in params.yaml (`earlier_harness`, per setting), the
earlier harness digest whose runs still stand for a setting until it is re-measured: a visible,
reviewed decision, never a default. The stage credits those runs as it credits today's, says so
for each setting, records them in the manifest, and refuses a stale entry: one that names
today's harness or a digest no run of the setting has, or a setting that today's harness covers.

Today's harness is per device path (the shared core and the path's module: runner/devices/), and
a digest of the layout before the paths, carried over the move that changed no behaviour
(provenance.CARRIED_HARNESS), is today's too while its path and the core are unchanged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from portability_data.runner.case_rows import load_rows
from portability_data.runner.census_rows import CENSUS_FOLDER, census_rows
from portability_data.runner.provenance import (
    ORACLE_FILE,
    carried_digests,
    harness_digest,
    listed_cases_digest,
    selected_case_digests,
)
from portability_data.runner.spec import SOURCE, Paths, RunSpec
from portability_data.runner.supervisor import run
from portability_data.tables.atomic import atomic_write_bytes

Harness = str | tuple[str, ...]  # today's harness digest, or it and the digests carried to it


def todays_harness(cases_dir: Path, device: str) -> tuple[str, ...]:
    """Today's harness digest of the device path, then the legacy digests carried to it."""
    harness = harness_digest(cases_dir, device)
    return (harness, *carried_digests(device, harness))


def _today(harness: Harness) -> tuple[str, ...]:
    return (harness,) if isinstance(harness, str) else tuple(harness)


SUITE_FILES = (".py", ".yaml")


def cases_digest(repo_root: Path, framework: str, suite: str = "curated") -> str:
    """sha256 over the suite's row and test files (names and contents): the framework's case
    files, or its census manifests and modules (cases/<framework>/census/)."""
    folder = repo_root / "cases" / framework
    paths = sorted((folder / CENSUS_FOLDER if suite == "census" else folder).glob("*"))
    if suite == "census":
        paths.append(ORACLE_FILE)
    return _suite_digest(
        (path.name, path.read_bytes()) for path in paths if path.suffix in SUITE_FILES and path.is_file()
    )


def _suite_digest(named_contents: Any) -> str:
    digest = hashlib.sha256()
    for name, content in named_contents:
        digest.update(name.encode() + b"\0" + content + b"\0")
    return digest.hexdigest()[:16]


def cases_digest_at(repo_root: Path, commit: str, framework: str, suite: str = "curated") -> str | None:
    """`cases_digest` of the suite as committed at `commit` (None where git cannot tell: no
    repository, an unknown commit): how a whole-suite run's params hash is proven."""
    folder = f"cases/{framework}/{CENSUS_FOLDER}/" if suite == "census" else f"cases/{framework}/"
    if suite == "census":
        try:
            oracle = ORACLE_FILE.resolve().relative_to(Path(repo_root).resolve())
        except ValueError:  # the package is installed outside this checkout: git cannot tell
            return None
    listing = _git(repo_root, b"", "ls-tree", "-z", commit, folder)
    if listing is None:
        return None
    files = []
    for entry in listing.split(b"\0"):
        if entry:
            meta, path = entry.split(b"\t", 1)
            name = path.decode().rsplit("/", 1)[-1]
            if meta.split()[1] == b"blob" and Path(name).suffix in SUITE_FILES:
                files.append((name, f"{commit}:{path.decode()}"))
    files.sort()
    if suite == "census":
        files.append((ORACLE_FILE.name, f"{commit}:{oracle.as_posix()}"))
    contents = _git_blobs(repo_root, [path for _, path in files])
    if contents is None:
        return None
    return _suite_digest(zip([name for name, _ in files], contents))


def _git(repo_root: Path, stdin: bytes, *args: str) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo_root), *args], input=stdin, capture_output=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_blobs(repo_root: Path, objects: list[str]) -> list[bytes] | None:
    """The contents of `commit:path` objects, read by one `git cat-file --batch`."""
    out = _git(repo_root, "".join(f"{o}\n" for o in objects).encode(), "cat-file", "--batch")
    if out is None:
        return None
    contents, at = [], 0
    for _ in objects:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split()
        if len(header) != 3 or header[1] != b"blob":
            return None  # "<object> missing", or not a file
        size = int(header[2])
        contents.append(out[header_end + 1 : header_end + 1 + size])
        at = header_end + 1 + size + 1
    return contents


RUN_COLUMNS = [
    "run_id",
    "source",
    "framework",
    "device",
    "mode",
    "status",
    "params_hash",
    "git_commit",
    "harness_digest",
    "case_digests",
    "started_at",
    "finished_at",
]


def finished_runs(runs_dir: Path) -> list[dict[str, Any]]:
    """Every complete or partial runs row in data/runs (the columns the stage reads)."""
    rows = []
    for path in sorted(runs_dir.rglob("*.parquet")):
        table = pq.read_table(path)
        columns = [c for c in RUN_COLUMNS if c in table.column_names]
        for row in table.select(columns).to_pylist():
            if row["status"] in ("complete", "partial") and row.get("params_hash"):
                rows.append(row)
    return rows


def existing_runs(runs_dir: Path, rows: list[dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Finished runs in data/runs (or `rows`, as `finished_runs` read them) by params hash:
    complete ones, and partial ones a person closed with `portability run --close` (the stage
    does not redo a run someone chose to stop; resume it by hand). A complete run wins over a
    partial one; else the latest."""
    found: dict[str, dict[str, Any]] = {}
    for row in finished_runs(runs_dir) if rows is None else rows:
        key = row["params_hash"]
        if key not in found or found[key]["status"] != "complete" or row["status"] == "complete":
            found[key] = row
    return found


def setting_spec(
    framework: str,
    device: str,
    mode: str,
    repeats: int,
    run_params: dict[str, Any],
    source: str = SOURCE,
    suite: str = "curated",
) -> RunSpec:
    """The run of one framework x device x mode under params.yaml's run limits (all active cases);
    a framework named in `timeout_s_by_framework` gets its own limit per subtest."""
    timeout = run_params.get("timeout_s_by_framework", {}).get(framework, run_params["timeout_s"])
    return RunSpec(
        framework=framework,
        device=device,
        mode=mode,
        repeats=int(repeats),
        timeout_s=float(timeout),
        memory_mb=int(run_params["memory_mb"]),
        cases=(),
        source=source,
        suite=suite,
    )


def subset_key(spec: RunSpec, digests: dict[str, str], harness: str, host: str = "") -> tuple[RunSpec, str]:
    """The spec and params hash of a run of only these cases (their digests as the runs row
    records them), so that the hash can be recomputed from the row alone. `host`: what else the
    key holds (`portability bench` keys its runs on this machine: bench.host_key)."""
    subset = dataclasses.replace(spec, cases=tuple(sorted(digests)))
    return subset, subset.params_hash(listed_cases_digest(digests) + harness + host)


def proven_digests(
    row: dict[str, Any],
    spec: RunSpec,
    harness: Harness,
    repo_root: Path,
    host: str = "",
    earlier: tuple[str, ...] = (),
) -> dict[str, str]:
    """The case digests a complete run of this setting measured, when its params hash is proven
    to be today's parameters over those cases with today's harness, or with an `earlier` harness
    params.yaml keeps for the setting (and, for a bench run, this host); {} when it cannot be
    proven (other limits, another harness or machine, a tree that git does not hold)."""
    measured_by = row.get("harness_digest")
    if row["status"] != "complete" or measured_by is None or measured_by not in (*_today(harness), *earlier):
        return {}
    harness = measured_by
    if (row.get("source"), row.get("framework"), row.get("device"), row.get("mode")) != (
        spec.source,
        spec.framework,
        spec.device,
        spec.mode,
    ):
        return {}
    try:
        digests = json.loads(row.get("case_digests") or "{}")
    except json.JSONDecodeError:
        return {}
    if not isinstance(digests, dict) or not digests:
        return {}
    if subset_key(spec, digests, harness, host)[1] == row["params_hash"]:
        return digests
    commit = row.get("git_commit")
    whole = cases_digest_at(repo_root, commit, spec.framework, spec.suite) if commit else None
    if whole is not None and spec.params_hash(whole + harness + host) == row["params_hash"]:
        return digests
    return {}


@dataclasses.dataclass(frozen=True)
class Coverage:
    """What the proven runs of a setting cover of its current cases (one pass over the runs)."""

    missing: dict[str, str]  # current cases no proven run measured as they are now -> digest
    supplying: list[str]  # the proven runs that measured some current case as it is now, oldest first
    missing_today: dict[str, str]  # the same as `missing`, counting today's harness only


def coverage(
    spec: RunSpec,
    paths: Paths,
    harness: Harness,
    rows: list[dict[str, Any]],
    host: str = "",
    earlier: tuple[str, ...] = (),
) -> Coverage:
    """The setting's coverage; runs of the `earlier` harnesses params.yaml keeps for it count too."""
    current = selected_case_digests(paths, spec)
    measured: set[str] = set()
    measured_today: set[str] = set()
    supplying = []
    for row in sorted(rows, key=lambda r: str(r.get("started_at") or "")):
        digests = proven_digests(row, spec, harness, paths.repo_root, host, earlier)
        same = {c for c, d in digests.items() if current.get(c) == d}
        if same:
            measured |= same
            supplying.append(row["run_id"])
            if row.get("harness_digest") in _today(harness):
                measured_today |= same
    return Coverage(
        {c: d for c, d in current.items() if c not in measured},
        supplying,
        {c: d for c, d in current.items() if c not in measured_today},
    )


def missing_cases(
    spec: RunSpec,
    paths: Paths,
    harness: Harness,
    rows: list[dict[str, Any]],
    host: str = "",
    earlier: tuple[str, ...] = (),
) -> tuple[dict[str, str], list[str]]:
    """(the current cases that no proven run measured as they are now, with their digests; the
    proven runs that measured some current case as it is now, oldest first). `earlier`: the
    harness digests params.yaml keeps for this setting (runs made with them are credited too)."""
    covered = coverage(spec, paths, harness, rows, host, earlier)
    return covered.missing, covered.supplying


class EarlierHarnessError(ValueError):
    """An `earlier_harness` entry of params.yaml that is stale or names no setting of the stage."""


def earlier_harness(
    run_params: dict[str, Any],
    harness: Harness | dict[str, tuple[str, ...]],
    rows: list[dict[str, Any]],
    section: str,
) -> dict[str, tuple[str, ...]]:
    """params.yaml's `earlier_harness` (setting "framework/device/mode" -> a harness digest, or a
    list of them where the setting's cases stand on several), checked: every entry names a setting
    of this stage, and each digest is not today's harness and was measured by some complete run of
    that setting (else the digest is stale: remove it). `harness`: today's, or device -> today's."""
    kept = run_params.get("earlier_harness") or {}
    if not isinstance(kept, dict):
        raise EarlierHarnessError(
            f"params.yaml {section}.earlier_harness: a mapping of setting -> digest expected"
        )
    settings = {
        f"{f}/{d}/{m}"
        for f in run_params["frameworks"]
        for d in run_params["devices"]
        for m in run_params.get("modes_by_framework", {}).get(f, run_params["modes"])
    }
    measured = {
        (f"{r['framework']}/{r['device']}/{r['mode']}", r.get("harness_digest"))
        for r in rows
        if r["status"] == "complete"
    }
    found: dict[str, tuple[str, ...]] = {}
    for setting, value in kept.items():
        where = f"params.yaml {section}.earlier_harness[{setting!r}]"
        if setting not in settings:
            raise EarlierHarnessError(f"{where}: not a setting of this stage ({', '.join(sorted(settings))})")
        digests = value if isinstance(value, list) else [value]
        if (
            not digests
            or not all(isinstance(d, str) and d for d in digests)
            or len(set(digests)) < len(digests)
        ):
            raise EarlierHarnessError(f"{where}: a harness digest or a list of distinct digests expected")
        for digest in digests:
            today = harness.get(setting.split("/")[1], ()) if isinstance(harness, dict) else _today(harness)
            if digest in today:
                raise EarlierHarnessError(f"{where}: {digest[:12]} is today's harness; remove it")
            if (setting, digest) not in measured:
                raise EarlierHarnessError(
                    f"{where}: no complete run of {setting} was measured with harness {digest[:12]}; "
                    "the digest is stale (re-measured since?): remove it"
                )
        found[str(setting)] = tuple(digests)
    return found


def _inputs_changed(row: dict[str, Any], spec: RunSpec, paths: Paths, suite: str) -> bool:
    """Whether a complete census run whose whole-suite key is today's measured some case other
    than it is now: a census case's digest also holds runner files (the shared generator, the
    dtype ledger: provenance.CENSUS_INPUT_FILES) that the whole-suite key does not, so the key alone
    would call it up to date after they changed. Curated keys hold every byte their cases have."""
    if suite != "census" or row["status"] != "complete":
        return False
    try:
        recorded = json.loads(row.get("case_digests") or "{}")
    except json.JSONDecodeError:
        return True
    current = selected_case_digests(paths, spec)
    return any(recorded.get(case_id) != digest for case_id, digest in current.items())


def check_cases(paths: Paths, frameworks: tuple[str, ...]) -> None:
    """Read and check every case row and census manifest of the frameworks before anything runs
    (both suites read both: a case's digest is looked up among them), so that a malformed one stops
    the stage with its file and fix (CaseRowError, CensusManifestError), not after some settings
    have been measured."""
    load_rows(paths.cases_dir, paths.repo_root, frameworks)
    for framework in frameworks:
        census_rows(paths.cases_dir, paths.repo_root, framework)


def run_stage(
    run_params: dict[str, Any],
    repo_root: Path,
    manifest: Path,
    only: tuple[str, ...] = (),
    suite: str = "curated",
) -> list[str]:
    """Run what is missing; write the manifest (run ids covering the current cases); return it.
    `only` limits the frameworks (to run two streams side by side; the stage itself runs all). The
    census stage is the same over suite census with params.yaml's census section."""
    paths = Paths.under(repo_root)
    check_cases(paths, tuple(f for f in run_params["frameworks"] if not only or f in only))
    rows = finished_runs(paths.runs_dir)
    done = existing_runs(paths.runs_dir, rows)
    covering: list[str] = []
    today = {device: todays_harness(paths.cases_dir, device) for device in run_params["devices"]}
    section = "census" if suite == "census" else "run"
    kept = earlier_harness(run_params, today, rows, section)
    credited_earlier: dict[str, str | list[str]] = {}
    confirm_jobs = int(run_params.get("confirm_jobs", 1))
    jobs = int(run_params.get("jobs", 1)) if suite == "census" else 1
    for framework in run_params["frameworks"]:
        if only and framework not in only:
            continue
        suite_digest = cases_digest(paths.repo_root, framework, suite)
        for device in run_params["devices"]:
            harness = today[device]
            for mode in run_params.get("modes_by_framework", {}).get(framework, run_params["modes"]):
                spec = setting_spec(framework, device, mode, run_params["repeats"], run_params, suite=suite)
                name = f"{framework}/{device}/{mode}"
                # a whole-suite run of today's harness (or of a digest carried to it) is up to date
                keys = [spec.params_hash(suite_digest + h) for h in harness]
                key = next((k for k in keys if k in done), keys[0])
                if key in done and not _inputs_changed(done[key], spec, paths, suite):
                    state = "up to date" if done[key]["status"] == "complete" else "partial, closed by hand"
                    print(f"{name}: {state} ({done[key]['run_id']})", flush=True)
                    covering.append(done[key]["run_id"])
                    continue
                covered = coverage(spec, paths, harness, rows, earlier=kept.get(name, ()))
                missing, supplying = covered.missing, covered.supplying
                covering.extend(r for r in supplying if r not in covering)
                if name in kept:
                    if not covered.missing_today:
                        raise EarlierHarnessError(
                            f"params.yaml {section}.earlier_harness[{name!r}]: today's harness covers "
                            "every case of this setting (re-measured): remove the entry"
                        )
                    credited_earlier[name] = kept[name][0] if len(kept[name]) == 1 else list(kept[name])
                    print(
                        f"{name}: measured by the earlier harness {', '.join(d[:12] for d in kept[name])} "
                        "that params.yaml keeps for this setting until it is re-measured",
                        flush=True,
                    )
                if not missing:
                    print(f"{name}: up to date ({', '.join(supplying)})", flush=True)
                    continue
                key = keys[0]  # what runs now runs on today's harness
                if not supplying:  # nothing reusable: the whole suite, as one run of the setting
                    print(f"{name}: running", flush=True)
                    covering.append(run(spec, paths, params_hash=key, confirm_jobs=confirm_jobs, jobs=jobs))
                    continue
                subset, subset_hash = subset_key(spec, missing, harness[0])
                if subset_hash in done and done[subset_hash]["status"] == "partial":
                    print(f"{name}: partial, closed by hand ({done[subset_hash]['run_id']})", flush=True)
                    covering.append(done[subset_hash]["run_id"])
                    continue
                print(
                    f"{name}: running {len(missing)} new or changed case(s); the other cases are "
                    f"measured by {', '.join(supplying)}",
                    flush=True,
                )
                covering.append(
                    run(subset, paths, params_hash=subset_hash, confirm_jobs=confirm_jobs, jobs=jobs)
                )
    found: dict[str, Any] = {"runs": covering}
    if credited_earlier:
        found["earlier_harness"] = credited_earlier
    text = json.dumps(found, indent=2) + "\n"
    atomic_write_bytes(manifest, text.encode())
    return covering
