"""The README's benchmark figures say what they were measured on, and a re-run that replaces the
committed result cannot leave them quoting the old one (issue 49: the loader's "< 5 s" was from
241,154 rows and the runner's figure from 63 torch cases, long after both had grown)."""

from __future__ import annotations

import json

from tests.conftest import REPO_ROOT

RESULTS = REPO_ROOT / "benchmarks" / "results"


def test_the_readme_quotes_the_committed_loader_benchmark_with_its_row_count() -> None:
    result = json.loads((RESULTS / "bench_loader.json").read_text())["configs"]["results"]
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert f"**{result['rows']:,} rows** loaded cold in {result['median_loader_s']:.2f} s" in readme
    assert f"{result['ratio']:.2f}x pyarrow's {result['median_baseline_s']:.2f} s" in readme


def test_the_readme_quotes_the_committed_runner_benchmark_with_its_case_count() -> None:
    result = json.loads((RESULTS / "bench_runner_torch.json").read_text())
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    median = result["median_s"]
    assert f"**{result['case_files']} torch case files** ({result['subtests']:,} subtests)" in readme
    assert f"runner {median['runner']:.1f} s against plain pytest {median['plain_pytest']:.1f} s" in readme
    assert f"{median['process_per_case']:.0f} s for one process per case file" in readme
    assert f"({result['process_per_case_vs_runner']:.1f}x)" in readme


def test_the_compile_cache_default_follows_its_committed_benchmark() -> None:
    """The cache is off by default because a first run pays more to fill it than a re-run saves
    (runner/compile_cache.py): if a re-run of the benchmark finds otherwise, this fails and the
    default and the README's figures are looked at again."""
    result = json.loads((RESULTS / "bench_compile_cache.json").read_text())
    median = result["median_s"]
    assert result["labels_equal"] is True
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert f"on {result['pairs']} pairs of the JAX eager census" in readme
    assert f"took {result['cold_vs_no_cache']:.2f}x a run without one" in readme
    assert f"warm re-run {median['warm'] / median['no_cache']:.2f}x" in readme
    assert result["cold_vs_no_cache"] > 1.0 and result["warm_vs_cold"] > 0.25  # why it is off


def test_the_readme_quotes_the_committed_report_benchmark() -> None:
    result = json.loads((RESULTS / "bench_report.json").read_text())
    then, today = result["on_baseline_data"]["median_s"], result["on_today_data"]["median_s"]
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert result["same_report_md_and_metrics"] is True
    assert f"today's tables in **{today['today']:.1f} s** ({today['today_serial']:.1f} s serially)" in readme
    assert (
        f"committed at {result['data_rev']}, the report before issue 57 took {then['before']:.1f} s" in readme
    )
    assert (
        f"after it {then['after']:.1f} s ({result['before_vs_after']:.2f}x; {then['after_serial']:.1f} s"
        in readme
    )
    assert f"less work gives {then['before'] / then['after_serial']:.2f}x" in readme
    assert f"median of {result['rounds']} rounds" in readme


def test_the_readme_quotes_the_committed_census_floor_benchmark() -> None:
    result = json.loads((RESULTS / "bench_census_floor_jax.json").read_text())
    median = result["median_s"]
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert f"**{result['pairs']} pairs** ({result['samples']} samples) of JAX's NumPy-origin census" in readme
    assert f"one process {median['floor']:.1f} s" in readme
    assert f"one worker {median['runner_jobs1']:.1f} s ({result['runner_jobs1_vs_floor']:.2f}x)" in readme
    assert f"with two {median['runner_jobs2']:.1f} s ({result['runner_jobs2_vs_floor']:.2f}x)" in readme


def test_the_readme_quotes_the_committed_compile_cache_benchmark() -> None:
    result = json.loads((RESULTS / "bench_compile_cache.json").read_text())
    median = result["median_s"]
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert f"**{result['pairs']} pairs** of JAX's eager census, no cache {median['no_cache']:.1f} s" in readme
    assert f"an empty cache {median['cold']:.1f} s, a warm one {median['warm']:.1f} s" in readme
    assert f"(warm / cold {result['warm_vs_cold']:.2f})" in readme


def test_the_readme_quotes_the_committed_torch_census_floor_benchmark() -> None:
    result = json.loads((RESULTS / "bench_census_floor_torch.json").read_text())
    median = result["median_s"]
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert (
        f"**{result['pairs']} pairs** ({result['samples']} samples), floor {median['floor']:.1f} s" in readme
    )
    assert (
        f"the runner {median['runner_jobs1']:.1f} s with one worker ({result['runner_jobs1_vs_floor']:.2f}x)"
        in readme
    )
    assert f"and {median['runner_jobs2']:.1f} s with two" in readme
    assert f"confirming its {result['runner_failed_pairs']} failing pairs" in readme
