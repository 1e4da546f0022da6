"""How long each part of the budgeted device bench (runner/budget_bench.py) should take, for its dry
run: from the committed CPU runs of the same framework, mode and suite (data/runs/portability and
their shards), scaled by a device factor measured in the study's own data.

- CPU time of one part: the newest complete CPU run's test time of its first repeat (compiles and
  caches are paid there), plus its later repeats' mean per extra repeat, plus what the run spent
  outside the tests (worker starts, collection, confirmations), taken as run by one worker.
- Device factor: the study measured the same subtests on the CPU and the GPU of one VM (2023: T4
  and A100, data/results/mince2023); the ratio of their summed test times, the larger of the VMs,
  per framework. Only eager mode was measured there: compiled parts are given the eager factor,
  and the dry run says so.
- The device judge runs each sample on the host CPU too (runner/device_oracle.py): the estimate
  adds the part's CPU time once more off the CPU (an upper bound: the oracle runs the call, not the
  test's other work).

pyarrow only (no pandas): the dry run must work on the lent machine from the light core.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from portability_data.runner.budget_bench import Limits, Part, part_spec
from portability_data.runner.spec import Paths, select_cases

STUDY = "mince2023"
PROJECT = "portability"


@dataclass(frozen=True)
class Estimate:
    """One part's estimate: seconds on the CPU (None: no committed run to read), the factor to the
    device and where each came from."""

    label: str
    cpu_s: float | None
    factor: float
    oracle_s: float
    basis: str

    @property
    def seconds(self) -> float | None:
        return None if self.cpu_s is None else self.cpu_s * self.factor + self.oracle_s


def _runs(data: Path, source: str) -> list[dict]:
    folder = data / "runs" / source
    rows = []
    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
        rows.extend(pq.read_table(path).to_pylist())
    return rows


def cpu_seconds(
    data: Path, framework: str, mode: str, suite: str, repeats: int, cases: list[str]
) -> tuple[float, str, int] | None:
    """(seconds, basis, cases without a committed timing) of the part's current `cases` on this
    project's CPU as one worker takes them: per case its newest complete CPU run's first repeat,
    its later repeats' mean per extra repeat, and its share of that run's time outside the tests
    (worker starts, collection, confirmations; a run of `jobs` workers counted as one)."""
    census = suite == "census"
    found = [
        r
        for r in _runs(data, PROJECT)
        if r["framework"] == framework
        and r["device"] == "cpu"
        and r["mode"] == mode
        and r["status"] == "complete"
        and ("-census-" in r["run_id"]) == census
    ]
    wanted, seconds, used = set(cases), {}, []
    for row in sorted(found, key=lambda r: r["finished_at"], reverse=True):
        shard = data / "results" / PROJECT / f"{row['run_id']}.parquet"
        if not wanted - seconds.keys() or not shard.is_file():
            continue
        times: dict[str, dict[int, float]] = {}
        for r in pq.read_table(shard, columns=["case_id", "repeat", "test_time_ms"]).to_pylist():
            per_repeat = times.setdefault(r["case_id"], {})
            per_repeat[r["repeat"]] = per_repeat.get(r["repeat"], 0.0) + (r["test_time_ms"] or 0.0) / 1000
        if not times:
            continue
        total = sum(sum(v.values()) for v in times.values())
        wall = (row["finished_at"] - row["started_at"]).total_seconds()
        outside = max(0.0, wall - total / int(row.get("jobs") or 1)) / len(times) / row["repeats"]
        taken = 0
        for case, per_repeat in times.items():
            if case in wanted and case not in seconds:
                first = per_repeat[min(per_repeat)]
                later = [v for k, v in per_repeat.items() if k != min(per_repeat)]
                extra = sum(later) / len(later) if later else first
                seconds[case] = first + extra * (repeats - 1) + outside * repeats
                taken += 1
        if taken:
            used.append(f"{row['run_id']} ({taken})")
    if not seconds:
        return None
    return (
        sum(seconds.values()),
        f"CPU time of {len(seconds)} case(s) from {', '.join(used)}",
        len(wanted) - len(seconds),
    )


def study_factor(data: Path, framework: str) -> tuple[float, str] | None:
    """(GPU / CPU test time, the VMs it came from): the study's subtests measured on both devices of
    one VM, the larger ratio over its VMs (the slower case for a budget)."""
    folder = data / "results" / STUDY
    ratios = []
    for gpu_shard in sorted(folder.glob(f"{STUDY}-{framework}-*-gpu.parquet")) if folder.is_dir() else []:
        cpu_shard = gpu_shard.with_name(gpu_shard.name.replace("-gpu.parquet", "-cpu.parquet"))
        if not cpu_shard.is_file():
            continue
        times = []
        for shard in (cpu_shard, gpu_shard):
            rows = pq.read_table(shard, columns=["case_id", "subtest", "repeat", "test_time_ms"]).to_pylist()
            times.append(
                {
                    (r["case_id"], r["subtest"], r["repeat"]): r["test_time_ms"]
                    for r in rows
                    if r["test_time_ms"]
                }
            )
        common = times[0].keys() & times[1].keys()
        cpu = sum(times[0][k] for k in common)
        if cpu > 0:
            vm = gpu_shard.stem.removeprefix(f"{STUDY}-{framework}-").removesuffix("-gpu")
            ratios.append((sum(times[1][k] for k in common) / cpu, f"{vm}: {len(common)} subtests"))
    if not ratios:
        return None
    ratio, where = max(ratios)
    return ratio, where


def estimate(data: Path, part: Part, limits: Limits, cases: list[str]) -> Estimate:
    """The part's estimate on the bench's device (cpu: its CPU time as is; gpu: scaled, with the
    oracle; another device: x1 with the oracle, said so) for its current `cases`."""
    found = cpu_seconds(data, part.framework, part.mode, part.suite, limits.repeats, cases)
    if found is None:
        return Estimate(part.label, None, 1.0, 0.0, f"no complete committed CPU run of {part.label}")
    cpu, basis, unknown = found
    if unknown:
        basis += f"; {unknown} case(s) with no committed timing not counted"
    if limits.device == "cpu":
        return Estimate(part.label, cpu, 1.0, 0.0, basis)
    factor = study_factor(data, part.framework) if limits.device == "gpu" else None
    if factor is None:
        return Estimate(part.label, cpu, 1.0, cpu, f"{basis} x 1 (no device factor known) + CPU oracle")
    ratio, where = factor
    eager_only = (
        " (the study's eager factor: it measured no compiled mode)" if part.mode == "compiled" else ""
    )
    return Estimate(
        part.label, cpu, ratio, cpu, f"{basis} x {ratio:.2f} (study {where}){eager_only} + CPU oracle"
    )


def plan_lines(
    parts: tuple[Part, ...], limits: Limits, repo_root: Path, done: dict[str, dict] | None = None
) -> tuple[list[str], float | None]:
    """The dry run's plan: per part in order its current cases, its estimate, the running total
    and where the budget cuts; then the curated torch + JAX total against the budget. `done`: the
    bench journal's parts (a complete part is skipped). Returns (lines, curated total)."""
    usable = limits.budget_s - limits.reserve_s
    lines = [
        f"plan on device {limits.device}: budget {limits.budget_s:.0f} s "
        f"({limits.reserve_s:.0f} s kept to close and package), {limits.repeats} repeat(s), "
        f"{limits.timeout_s:.0f} s per subtest, in this order:"
    ]
    total, curated, unknown = 0.0, 0.0, False
    paths = Paths.under(repo_root)
    for part in parts:
        if (done or {}).get(part.label, {}).get("status") == "complete":
            lines.append(f"  {part.label}: complete in the output folder already: skipped")
            continue
        cases = [row["case_id"] for row in select_cases(part_spec(part, limits), paths)]
        found = estimate(repo_root / "data", part, limits, cases)
        if found.seconds is None:
            unknown = True
            lines.append(f"  {part.label}: {len(cases)} case(s), ? s ({found.basis})")
            continue
        where = (
            "within the budget"
            if total + found.seconds <= usable
            else "the budget cuts it: closed partial"
            if total <= usable
            else "not reached"
        )
        total += found.seconds
        curated += found.seconds if part.suite == "curated" else 0.0
        lines.append(
            f"  {part.label}: {len(cases)} case(s), ~{found.seconds:.0f} s (total ~{total:.0f} s, {where}) "
            f"[{found.basis}]"
        )
    fits = "fits" if curated <= usable and not unknown else "does NOT fit"
    lines.append(
        f"curated torch + JAX: ~{curated:.0f} s estimated against {usable:.0f} s usable: {fits}"
        + ("; parts without a committed run are not counted" if unknown else "")
    )
    return lines, curated
