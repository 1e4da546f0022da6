"""params.yaml: checked once, up front, so a typo fails with the key and the fix before any work."""

from __future__ import annotations

from typing import Any

from portability_data.readings.params import ParamsError
from portability_data.tables.contracts import DEVICES, FRAMEWORKS, MODES

SECTIONS = ("enumerate", "frequencies", "sample", "run", "dataset")


def check_params(params: Any, source: str = "params.yaml") -> dict[str, Any]:
    """Check the sections the pipeline reads; returns the params unchanged when all is well."""
    if not isinstance(params, dict):
        raise ParamsError(
            source, ["the file is not a YAML mapping of sections; see the repository's params.yaml"]
        )
    problems: list[str] = []
    for section in SECTIONS:
        if not isinstance(params.get(section), dict):
            problems.append(
                f"section {section!r} is missing or not a mapping; copy it from the repository's params.yaml"
            )
    if problems:
        raise ParamsError(source, problems)

    def names(key: str, value: Any, allowed: tuple[str, ...]) -> None:
        if not isinstance(value, list) or not value:
            problems.append(f"{key}: must be a non-empty list, got {value!r}; e.g. [{allowed[0]}]")
            return
        for item in value:
            if item not in allowed:
                problems.append(f"{key}: unknown value {item!r}; use one of {', '.join(allowed)}")

    def number(key: str, value: Any, minimum: float, integer: bool = False) -> None:
        kinds = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or value < minimum:
            kind = "an integer" if integer else "a number"
            problems.append(f"{key}: must be {kind} >= {minimum}, got {value!r}")

    names("enumerate.frameworks", params["enumerate"].get("frameworks"), FRAMEWORKS)
    run = params["run"]
    names("run.frameworks", run.get("frameworks"), FRAMEWORKS)
    names("run.devices", run.get("devices"), DEVICES)
    names("run.modes", run.get("modes"), MODES)
    number("run.repeats", run.get("repeats"), 1, integer=True)
    number("run.timeout_s", run.get("timeout_s"), 1)
    number("run.memory_mb", run.get("memory_mb"), 64, integer=True)
    sample = params["sample"]
    number("sample.seed", sample.get("seed"), 0, integer=True)
    number("sample.top_n", sample.get("top_n"), 0, integer=True)
    number("sample.per_bucket", sample.get("per_bucket"), 1, integer=True)
    number("sample.buckets", sample.get("buckets"), 1, integer=True)
    if (
        not isinstance(sample.get("sample_id"), str)
        or not str(sample.get("sample_id")).replace("-", "").isalnum()
    ):
        problems.append(
            "sample.sample_id: must be a short id of letters, digits and '-', "
            f"got {sample.get('sample_id')!r}"
        )
    bench = params.get("bench")
    if bench is not None:
        profiles = bench.get("profiles") if isinstance(bench, dict) else None
        if not isinstance(profiles, dict) or not profiles:
            problems.append("bench.profiles: must map profile names to {modes, repeats}; see params.yaml")
        else:
            for name, profile in profiles.items():
                if not isinstance(profile, dict):
                    problems.append(f"bench.profiles.{name}: must be a mapping with modes and repeats")
                    continue
                names(f"bench.profiles.{name}.modes", profile.get("modes"), MODES)
                number(f"bench.profiles.{name}.repeats", profile.get("repeats"), 1, integer=True)
    version = params["dataset"].get("version")
    parts = str(version).split(".") if isinstance(version, str) else []
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        problems.append(f"dataset.version: must be a semantic version like '0.1.0' (quoted), got {version!r}")
    if problems:
        raise ParamsError(source, problems)
    return params
