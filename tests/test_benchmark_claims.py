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
