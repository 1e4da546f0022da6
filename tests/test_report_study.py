"""The report on the study's data: the committed outcomes and latencies, made beside the suite
(tests/beside.py: ~15 s) and read here (moved from tests/test_report.py, issue 57)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from portability_data.report.build import run_report
from tests import beside
from tests.conftest import REPO_ROOT


def study_report_job(folder: Path) -> beside.Job:
    """The report over the committed tables, in a process of its own."""
    data = folder / "data"
    data.mkdir()
    for name in ("outcomes", "latencies", "samples", "pooled"):
        (data / name).symlink_to(REPO_ROOT / "data" / name)
    out = folder / "reports"
    code = (
        f"from pathlib import Path\nfrom {run_report.__module__} import run_report\n"
        f"run_report(Path({str(data)!r}), Path({str(out)!r}), Path({str(out / 'metrics.json')!r}))\n"
    )
    return beside.Job([[sys.executable, "-c", code]], cwd=folder)


BESIDE = {"study-report": (study_report_job, ["test_report_on_the_study_data"])}
STUDY_RESULTS = REPO_ROOT / "data" / "results" / "mince2023"


@pytest.mark.skipif(
    not STUDY_RESULTS.is_dir(), reason="the study's imported results (data/results) are absent"
)
def test_report_on_the_study_data(tmp_path: Path) -> None:
    """The report over the committed outcomes and latencies (test_pipeline checks that they are
    what aggregation makes of the committed shards, so they are not aggregated again here)."""
    done = beside.finished("study-report", study_report_job, tmp_path)
    assert done.returncode == 0, f"the report failed:\n{done.stderr[-3000:]}"
    out = done.folder / "reports"
    metrics = json.loads((out / "metrics.json").read_text())
    # the study's Table 1: PyTorch on the T4 vs the TPU v3-8
    assert metrics["outcomes"]["mince2023/torch/t4/eager"]["pct_success"] == pytest.approx(92.1, abs=0.1)
    assert metrics["outcomes"]["mince2023/torch/tpu-v3-8/eager"]["pct_success"] == pytest.approx(
        50.8, abs=0.1
    )
    assert metrics["latency"]["mince2023/torch/tpu-v3-8_vs_t4/eager"]["pct_faster_on_device"] == 0.0
    assert {"mince2023/torch/a100_vs_t4/eager", "mince2023/jax/tpu-v2-8_vs_tpu-v3-8/eager"} <= set(
        metrics["generations"]
    )
    markdown = (out / "report.md").read_text()
    for name in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", markdown):
        assert (out / name).is_file()
    for figure in (
        "outcome_shares.png",
        "latency_tpu_vs_gpu.png",
        "generations_latency.png",
        "failure_by_decile.png",
        "latency_density.png",
    ):
        assert (out / "figures" / figure).is_file()
