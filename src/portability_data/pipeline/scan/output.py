"""The scan's three outputs (findings.py finds, this writes): a table for a person, JSON for a script and
SARIF 2.1.0 for GitHub code scanning and editors (a rule per status, a result per call site).

Every output starts from the same summary, one line per target path: "N of your M framework
functions are known to fail or fall back on <path>; K are not in the dataset".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path, PurePath

from portability_data.pipeline.scan.findings import (
    FileProblem,
    FunctionFinding,
    PathSummary,
    ScanInputError,
    ScanResult,
    summaries,
)
from portability_data.readings.knowledge import PROBLEM_STATUSES, RANK, SCAN_STATUSES, Setting

SITES_SHOWN = 3  # call sites listed per function in the table (JSON and SARIF list them all)
INFORMATION_URI = "https://github.com/portability-data/portability"
# What each status means, for a reader of the table and the SARIF rules.
STATUS_TEXT = {
    "fails": "every dtype measured on this device path raised (or crashed, timed out, ran out of memory)",
    "partial": "some samples or some dtypes raised on this device path",
    "deviates": "it ran, with values off the oracle beyond the tolerance",
    "host_fallback": "it ran, with some op on the host instead of the device",
    "not_compiled": "compiled mode: it did not really compile (graph breaks, eager fallback)",
    "not_in_dataset": "the dataset has no measurement of this function on this device path",
    "unknown": "the dataset has rows for it but no verdict (not measured, unconfirmed, unknown outcome)",
    "ran": "every sample ran, nothing judged the values (no oracle): not known to work",
    "works": "every sample ran and matched its oracle",
}
SARIF_LEVEL = {
    "fails": "error",
    "partial": "error",
    "deviates": "warning",
    "host_fallback": "warning",
    "not_compiled": "warning",
    "not_in_dataset": "note",
    "unknown": "note",
    "ran": "note",
    "works": "none",
}


def _ratio(value: float | None) -> str:
    if value is None:
        return ""
    return f", {value:.2f}x the CPU's latency" if value < 10 else f", {value:,.0f}x the CPU's latency"


def setting_line(setting: Setting, evidence: bool) -> list[str]:
    """One setting of a function: its status, the dtypes that fail or fall back, the ratio; the
    evidence (run, entry, error line) below it when asked."""
    status = setting.status
    parts = [f"{status:<14} {setting.label}"]
    for word, statuses in (
        ("fail", ("fails", "partial")),
        ("deviate", ("deviates",)),
        ("fall back to the host", ("host_fallback",)),
    ):
        dtypes = setting.dtypes(*statuses)
        if dtypes:
            parts.append(f"{word}: {', '.join(dtypes)}")
    lines = ["; ".join(parts) + _ratio(setting.ratio)]
    cell = setting.evidence()
    if evidence and cell is not None and cell.status in PROBLEM_STATUSES:
        where = " ".join(x for x in (cell.entry, cell.dtype) if x)
        run = f"run {cell.run_id}" if cell.run_id else f"source {cell.source}"
        error = (cell.error or cell.raw_status).splitlines()[0]
        lines.append(f"    evidence: {run}{': ' + where if where else ''}: {error}")
    return lines


def render_table(
    result: ScanResult,
    found: Sequence[FunctionFinding],
    summary: Sequence[PathSummary],
    targets: Sequence[str],
    *,
    evidence: bool = False,
) -> str:
    """The table: the summary, the files that did not parse, then each function worst first."""
    frameworks = sorted({f.framework for f in found})
    per_framework = ", ".join(f"{fw} {sum(f.framework == fw for f in found)}" for fw in frameworks)
    out = [
        f"Scanned {result.files} Python files: {len(result.sites)} calls of {len(found)} framework "
        f"functions{f' ({per_framework})' if per_framework else ''}.",
        *[s.line() for s in summary],
    ]
    missing = [f for f in found if all(s == "not_in_dataset" for s in f.statuses.values())]
    out.append(f"{len(missing)} of {len(found)} are not in the dataset on any of: {', '.join(targets)}.")
    out.extend(_problem_lines(result.problems))
    for finding in found:
        if finding in missing:
            continue
        out.append("")
        calls = len(finding.sites)
        written = [n for n in finding.names if n != finding.function]
        also = f", written {', '.join(written)}" if written else ""
        out.append(f"{finding.function} ({finding.framework}, {calls} call{'s' if calls != 1 else ''}{also})")
        for target in targets:
            settings = finding.settings.get(target)
            if not settings:
                out.append(f"  {target}: not_in_dataset")
                continue
            out.append(f"  {target}: {finding.statuses[target]}")
            for setting in settings:
                out.extend("    " + line for line in setting_line(setting, evidence))
        shown = ", ".join(f"{s.path}:{s.line}:{s.column}" for s in finding.sites[:SITES_SHOWN])
        more = len(finding.sites) - SITES_SHOWN
        out.append(f"  at {shown}" + (f" (+{more} more; --format json lists all)" if more > 0 else ""))
    if missing:
        out.append("")
        out.append("Not in the dataset (no row on any target path; never read as working):")
        out.extend(f"  {f.function} ({len(f.sites)} calls, first at {_site(f)})" for f in missing)
    return "\n".join(out)


def _site(finding: FunctionFinding) -> str:
    site = finding.sites[0]
    return f"{site.path}:{site.line}:{site.column}"


def _problem_lines(problems: Sequence[FileProblem]) -> list[str]:
    if not problems:
        return []
    return [
        f"{len(problems)} file(s) with problems:",
        *(f"  {p.path}:{p.line}: {p.message}" for p in problems),
    ]


def _setting_json(setting: Setting) -> dict:
    cell = setting.evidence()
    return {
        "source": setting.source,
        "path": setting.path,
        "device_model": setting.device_model,
        "mode": setting.mode,
        "framework_version": setting.framework_version,
        "status": setting.status,
        "failing_dtypes": setting.dtypes("fails", "partial"),
        "deviating_dtypes": setting.dtypes("deviates"),
        "host_fallback_dtypes": setting.dtypes("host_fallback"),
        "latency_ratio": setting.ratio,
        "evidence": None if cell is None else asdict(cell),
    }


def render_json(
    result: ScanResult,
    found: Sequence[FunctionFinding],
    summary: Sequence[PathSummary],
    targets: Sequence[str],
) -> str:
    document = {
        "files": result.files,
        "calls": len(result.sites),
        "targets": list(targets),
        "summary": [{**asdict(s), "line": s.line()} for s in summary],
        "problems": [asdict(p) for p in result.problems],
        "functions": [
            {
                "function": f.function,
                "names": list(f.names or (f.function,)),
                "framework": f.framework,
                "status": f.statuses,
                "settings": {
                    path: [_setting_json(s) for s in settings] for path, settings in f.settings.items()
                },
                "sites": [{"path": s.path, "line": s.line, "column": s.column} for s in f.sites],
            }
            for f in found
        ],
    }
    return json.dumps(document, indent=2)


def _uri(path: str) -> str:
    """A call site's path as a SARIF artifact URI: relative paths as they are (forward slashes)."""
    pure = PurePath(path)
    return pure.as_uri() if pure.is_absolute() else pure.as_posix()


def _message(finding: FunctionFinding) -> str:
    parts = []
    for target, status in sorted(finding.statuses.items(), key=lambda kv: (RANK[kv[1]], kv[0])):
        dtypes = sorted({d for s in finding.settings.get(target, ()) for d in s.dtypes("fails", "partial")})
        detail = f" ({', '.join(dtypes)} fail)" if dtypes else ""
        parts.append(f"{status} on {target}{detail}")
    return f"{finding.function}: " + "; ".join(parts) + "."


def render_sarif(
    result: ScanResult, found: Sequence[FunctionFinding], summary: Sequence[PathSummary], version: str
) -> str:
    """SARIF 2.1.0: one rule per status, one result per call site (ruleId: the function's worst
    status over the target paths; its status per path in the message and the properties)."""
    rules = [
        {
            "id": f"portability/{status}",
            "name": status,
            "shortDescription": {"text": STATUS_TEXT[status]},
            "defaultConfiguration": {"level": SARIF_LEVEL[status]},
            "helpUri": INFORMATION_URI,
        }
        for status in SCAN_STATUSES
    ]
    results = []
    for finding in found:
        worst = finding.worst
        for site in finding.sites:
            results.append(
                {
                    "ruleId": f"portability/{worst}",
                    "ruleIndex": SCAN_STATUSES.index(worst),
                    "level": SARIF_LEVEL[worst],
                    "message": {"text": _message(finding)},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": _uri(site.path)},
                                "region": {"startLine": site.line, "startColumn": site.column},
                            }
                        }
                    ],
                    "properties": {"function": finding.function, "statusByPath": finding.statuses},
                }
            )
    notifications = [
        {
            "level": "warning",
            "message": {"text": problem.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(problem.path)},
                        "region": {"startLine": problem.line},
                    }
                }
            ],
        }
        for problem in result.problems
    ]
    document = {
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "portability scan",
                        **({"version": version} if version else {}),
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
                "results": results,
                "properties": {"summary": [s.line() for s in summary]},
            }
        ],
    }
    return json.dumps(document, indent=2)


FORMATS = ("table", "json", "sarif")


def run_scan(
    paths: Sequence[Path],
    data_dir: Path,
    *,
    targets: Sequence[str] | None = None,
    frameworks: Sequence[str] | None = None,
    output: str = "table",
    fail_on: Sequence[str] | None = None,
    evidence: bool = False,
    tool_version: str = "",
) -> tuple[str, int]:
    """The scan's output in `output`'s format, and its exit code: 1 where a --fail-on status is found
    on a target path, else 0. Bad input raises ScanInputError naming what is known."""
    from portability_data.pipeline.frequencies.index import ApiIndex
    from portability_data.pipeline.scan.findings import (
        check_fail_on,
        check_targets,
        failing,
        findings,
        scan_paths,
    )
    from portability_data.readings.knowledge import load_knowledge
    from portability_data.runner import devices
    from portability_data.tables.contracts import FRAMEWORKS
    from portability_data.tables.tableio import read_file

    if output not in FORMATS:
        raise ScanInputError(f"unknown format {output}; known: {', '.join(FORMATS)}")
    unknown = [fw for fw in frameworks or () if fw not in FRAMEWORKS]
    if unknown:
        raise ScanInputError(f"unknown framework {', '.join(unknown)}; known: {', '.join(FRAMEWORKS)}")
    fail_on = check_fail_on(fail_on)
    knowledge = load_knowledge(data_dir)
    chosen = check_targets(targets, devices.registry(), knowledge.paths)
    api_path = Path(data_dir) / "api" / "api.parquet"
    if not api_path.is_file():
        raise FileNotFoundError(f"{api_path}: no api table; pass --data <the dataset folder>")
    api = ApiIndex.from_frame(read_file("api", api_path).to_pandas(), kinds=())
    result = scan_paths(paths, api, frameworks)
    found = findings(result, knowledge, chosen)
    summary = summaries(found, chosen)
    if output == "json":
        text = render_json(result, found, summary, chosen)
    elif output == "sarif":
        text = render_sarif(result, found, summary, tool_version)
    else:
        text = render_table(result, found, summary, chosen, evidence=evidence)
    return text, 1 if failing(found, fail_on) else 0
