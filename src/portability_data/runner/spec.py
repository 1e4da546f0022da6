"""What a run is: its parameters (RunSpec), where it reads and writes (Paths), and its cases.

The lowest module of the run: the journal, the worker handling, the provenance digests and the
supervisor all need the spec and the paths, and none of them may import the supervisor (it imports
them), so these live apart. Light: PyYAML (through case_rows) and the table contracts only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from portability_data.runner import devices
from portability_data.runner.case_rows import load_rows
from portability_data.runner.census_rows import census_rows
from portability_data.tables import contracts

# Who a run's shard belongs to (data/results/<source>/): the project's own measurements of the
# committed settings (the run stage, or a maintainer's `portability run --source portability`), or
# this machine's (`portability bench`, and `portability run` by default), never pooled with them.
SOURCE = "portability"
LOCAL_SOURCE = "local"
RUN_SOURCES = (LOCAL_SOURCE, SOURCE)
SUITES = contracts.SUITES


class RunError(RuntimeError):
    """The run cannot start or go on (absent device, bad arguments, unknown run to resume)."""


@dataclass(frozen=True)
class RunSpec:
    """What to run: the run's parameters, hashed into the runs table."""

    framework: str
    device: str
    mode: str = "eager"
    repeats: int = 3
    timeout_s: float = 900.0
    memory_mb: int = 8192
    cases: tuple[str, ...] = ()
    source: str = SOURCE
    suite: str = "curated"  # curated: the case files written here; census: the harvested manifests
    compiler: str | None = None  # compiled mode's compiler, where not the device path's own (None)

    def validate(self) -> None:
        if self.framework not in contracts.FRAMEWORKS:
            raise RunError(
                f"unknown framework {self.framework!r}; use one of {', '.join(contracts.FRAMEWORKS)}"
            )
        if self.mode not in contracts.MODES:
            raise RunError(f"unknown mode {self.mode!r}; use one of {', '.join(contracts.MODES)}")
        try:
            devices.check_compiler(self.framework, self.device, self.mode, self.compiler)
        except devices.UnknownDevicePathError as exc:
            raise RunError(str(exc)) from None
        if self.repeats < 1:
            raise RunError(f"repeats must be >= 1, got {self.repeats}")
        if self.timeout_s <= 0:
            raise RunError(f"timeout must be > 0 seconds, got {self.timeout_s}")
        if self.memory_mb <= 0:
            raise RunError(f"memory cap must be > 0 MB, got {self.memory_mb}")
        if self.suite not in SUITES:
            raise RunError(f"unknown suite {self.suite!r}; use one of {', '.join(SUITES)}")

    @property
    def path(self) -> devices.DevicePath:
        """The device path the spec runs on (runner/devices/)."""
        return devices.path_named(self.device)

    def resolved_compiler(self) -> str | None:
        """The compiler this spec's compiled mode uses (runs.compiler); None in eager mode."""
        return self.compiler or self.path.compiler(self.framework, self.mode)

    def params_hash(self, cases_digest: str = "") -> str:
        """sha256 of the parameters and of the case files run (so a changed case is a new run)."""
        fields = asdict(self)
        if fields["suite"] == "curated":  # runs made before suites existed keep their hash
            del fields["suite"]
        # the path's own compiler, named or not: runs made before the axis keep theirs
        if fields["compiler"] in (None, self.path.compiler(self.framework, self.mode)):
            del fields["compiler"]
        payload = json.dumps({**fields, "cases_digest": cases_digest}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass
class Paths:
    """Where a run reads cases and writes its journal, shard and runs row."""

    repo_root: Path
    cases_dir: Path
    results_dir: Path
    runs_dir: Path
    journal_dir: Path

    @classmethod
    def under(cls, repo_root: Path) -> Paths:
        repo_root = Path(repo_root).resolve()
        return cls(
            repo_root,
            repo_root / "cases",
            repo_root / "data" / "results",
            repo_root / "data" / "runs",
            repo_root / "data" / ".journal",
        )


def select_cases(spec: RunSpec, paths: Paths) -> list[dict[str, Any]]:
    """The active cases of the framework's suite (all, or those named), each with a test file."""
    if spec.suite == "census":
        rows = census_rows(paths.cases_dir, paths.repo_root, spec.framework, spec.mode)
    else:
        curated = load_rows(paths.cases_dir, paths.repo_root, (spec.framework,))
        rows = [r for r in curated if r["status"] == "active"]
    if spec.cases:
        wanted = set(spec.cases)
        unknown = wanted - {r["case_id"] for r in rows}
        if unknown:
            raise RunError(f"unknown or inactive case(s) for {spec.framework}: {', '.join(sorted(unknown))}")
        rows = [r for r in rows if r["case_id"] in wanted]
    return sorted(rows, key=lambda r: r["case_id"])
