"""The report's first screen: a summary that opens the report, fits one screen, links to the sections
that detail it, and whose numbers are the detailed tables' numbers; a user's own machine (source
`local`) stands beside the study."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from portability_data.report.build import build, run_report
from portability_data.report.inputs import load_inputs
from portability_data.report.render import heading_anchor
from portability_data.report.summary import SUMMARY_MAX_LINES
from portability_data.tables.tableio import write_table
from tests.conftest import SETTING_KEYS as KEYS
from tests.conftest import STUDY_CPU, T4, V3, example_rows, outcome_row, write_pooled
from tests.conftest import latency_row as _latency

OURS = ("portability", "torch", "2.13.0", "cpu", "EPYC", "eager")
OURS_COMPILED = ("portability", "torch", "2.13.0", "cpu", "EPYC", "compiled")
LOCAL_GPU = ("local", "torch", "2.5.0", "gpu", "RTX 4090", "eager")
LOCAL_CPU = ("local", "torch", "2.5.0", "cpu", "Ryzen 9", "eager")
SCREEN_LINES = 40


def _outcome(setting: tuple, function: str, outcome: str) -> dict:
    failing = outcome in ("partial_failure", "complete_failure")
    return outcome_row(setting, function, outcome, "type_failure" if failing else None)


def _paired(a: tuple, b: tuple, function: str, a_ms: float, b_ms: float) -> list[dict]:
    """Both orientations of a pair plus the unpaired rows, as the aggregation writes them."""
    return [
        _latency(a, function, a_ms),
        _latency(b, function, b_ms),
        _latency(a, function, a_ms, b, b_ms),
        _latency(b, function, b_ms, a, a_ms),
    ]


def _result(run_id: str, function: str, subtest: str, execution: str) -> dict:
    named = dict(zip(KEYS, OURS_COMPILED))
    return {
        **example_rows()["results"][0],
        **named,
        "run_id": run_id,
        "case_id": function,
        "function": function,
        "test_id": f"cases/torch/test_{function}.py::{subtest}",
        "subtest": subtest,
        "execution": execution,
    }


def _run(run_id: str, harness: str, day: int) -> dict:
    return {
        **example_rows()["runs"][0],
        **dict(zip(KEYS, OURS_COMPILED)),
        "run_id": run_id,
        "started_at": dt.datetime(2026, 11, day, tzinfo=dt.UTC),
        "finished_at": dt.datetime(2026, 11, day, 1, tzinfo=dt.UTC),
        "harness_digest": harness,
        "case_digests": json.dumps({"torch.f2": "d2", "torch.f3": "d3"}),
    }


def make_data(root: Path, *, local: bool = True) -> Path:
    """The study on T4, TPU v3-8 and a CPU; our CPU in two modes; a user's machine (GPU + CPU)."""
    outcomes = [
        *[_outcome(T4, f"torch.f{i}", o) for i, o in enumerate(["success", "partial_failure"], 1)],
        _outcome(T4, "torch.f3", "complete_failure"),
        _outcome(T4, "torch.f4", "success"),
        _outcome(V3, "torch.f1", "complete_failure"),
        _outcome(V3, "torch.f2", "partial_failure"),
        _outcome(V3, "torch.f3", "complete_failure"),
        _outcome(V3, "torch.f4", "success"),
        _outcome(STUDY_CPU, "torch.f1", "success"),
        _outcome(STUDY_CPU, "torch.f2", "partial_failure"),
        _outcome(STUDY_CPU, "torch.f3", "success"),
        _outcome(STUDY_CPU, "torch.f4", "success"),
        _outcome(OURS, "torch.f1", "complete_failure"),
        *[_outcome(OURS, f"torch.f{i}", "success") for i in (2, 3, 4)],
        *[_outcome(OURS_COMPILED, f"torch.f{i}", "success") for i in (2, 3)],
    ]
    latencies = [
        *_paired(V3, T4, "torch.f1", 10.0, 1.0),
        *_paired(V3, T4, "torch.f2", 50.0, 2.0),
        _latency(STUDY_CPU, "torch.f3", 3.0),
        _latency(OURS, "torch.f3", 1.5),
        _latency(OURS_COMPILED, "torch.f3", 0.5),
    ]
    if local:
        outcomes += [
            _outcome(LOCAL_CPU, "torch.f1", "success"),
            _outcome(LOCAL_CPU, "torch.f2", "partial_failure"),
            *[_outcome(LOCAL_GPU, f"torch.f{i}", "success") for i in (1, 2, 3)],
        ]
        for function, cpu_ms in (("torch.f1", 2.0), ("torch.f2", 8.0), ("torch.f3", 3.0)):
            latencies += _paired(LOCAL_CPU, LOCAL_GPU, function, cpu_ms, 1.0)
    write_table("outcomes", pd.DataFrame(outcomes), root / "outcomes" / "outcomes.parquet")
    write_table("latencies", pd.DataFrame(latencies), root / "latencies" / "latencies.parquet")
    write_table("samples", pd.DataFrame(example_rows()["samples"]), root / "samples" / "mince2023.parquet")
    # compiled mode: the newer run pools 5 subtests (3 compiled); the older harness's run is superseded
    new = [
        _result("new", "torch.f2", "test_a", "compiled"),
        _result("new", "torch.f2", "test_b", "graph_breaks"),
        _result("new", "torch.f2", "test_c", "not_routed"),
        _result("new", "torch.f3", "test_a", "compiled"),
        _result("new", "torch.f3", "test_b", "compiled"),
    ]
    old = [
        _result("old", "torch.f3", "test_a", "eager_fallback"),
        _result("old", "torch.f3", "test_c", "eager"),
    ]
    write_table("results", pd.DataFrame(new), root / "results" / "portability" / "new.parquet")
    write_table("results", pd.DataFrame(old), root / "results" / "portability" / "old.parquet")
    write_table(
        "runs", pd.DataFrame([_run("new", "h-new", 20)]), root / "runs" / "portability" / "new.parquet"
    )
    write_table(
        "runs", pd.DataFrame([_run("old", "h-old", 1)]), root / "runs" / "portability" / "old.parquet"
    )
    write_pooled(root)
    return root


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """The data for a test that adds tables to it: its own copy."""
    return make_data(tmp_path / "data")


@pytest.fixture(scope="module")
def shared_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data built once for the module's readers (issue 57: a build per test cost ~10 s each);
    no test writes it (those that add tables take `data`), and each copies a table it changes."""
    return make_data(tmp_path_factory.mktemp("summary") / "data")


@pytest.fixture(scope="module")
def tables(shared_data: Path) -> dict[str, pd.DataFrame]:
    return build(load_inputs(shared_data))[1]


@pytest.fixture(scope="module")
def rendered(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    out = tmp_path_factory.mktemp("summary-reports")
    run_report(shared_data, out, out / "metrics.json")
    return (out / "report.md").read_text(), (out / "report.html").read_text()


def _summary_lines(markdown: str) -> tuple[int, list[str]]:
    """(index of the summary's heading, its lines up to the next section's heading)."""
    lines = markdown.splitlines()
    start = lines.index("## Summary")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return start, lines[start:end]


def _grid(markdown: str, title: str) -> pd.DataFrame:
    """The summary table under the headline `title`, as a frame of its text cells by framework."""
    return _rows(markdown, title).set_index("framework")


def _rows(markdown: str, title: str) -> pd.DataFrame:
    """The summary table under the headline `title` as a frame of its text cells, a row per line."""
    _, lines = _summary_lines(markdown)
    at = next(i for i, line in enumerate(lines) if line.startswith(f"**{title}**"))
    rows = []
    for line in lines[at + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return pd.DataFrame(rows[2:], columns=rows[0])


def _github_anchors(markdown: str) -> set[str]:
    """Anchors GitHub makes for a document's headings (lower case, punctuation out, repeats -1, -2)."""
    seen: dict[str, int] = {}
    anchors = set()
    for line in markdown.splitlines():
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            base = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            anchors.add(base if base not in seen else f"{base}-{seen[base]}")
            seen[base] = seen.get(base, 0) + 1
    return anchors


def test_the_summary_opens_the_report_and_fits_one_screen(rendered: tuple[str, str]) -> None:
    markdown, page = rendered
    start, lines = _summary_lines(markdown)
    headings = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Summary"
    assert len(lines) <= SUMMARY_MAX_LINES
    assert start + len(lines) <= SCREEN_LINES, "the summary must end within the first screen"
    assert [line.split("**")[1] for line in lines if line.startswith("**")] == [
        "Functions failing",
        "Slowdown across devices",
        "Then vs now",
        "Compiled really compiled",
    ]
    h2 = re.findall(r"<h2 id='([^']+)'>", page)
    assert h2[0] == "summary"
    assert page.index("<strong>Functions failing</strong>") < page.index("<h2 id='settings-measured'>")
    assert "docs/METHOD.md" in markdown and "docs/METHOD.md" in page
    assert "](../docs/METHOD.md)" in markdown
    assert not re.search(r"(?<!docs/)METHOD\.md", markdown)


def test_every_headline_links_to_its_section_in_markdown_and_html(rendered: tuple[str, str]) -> None:
    markdown, page = rendered
    _, lines = _summary_lines(markdown)
    links = re.findall(r"\]\(#([^)]+)\)", "\n".join(lines))
    assert len(links) == 4
    assert "function-outcomes-per-framework-and-device-the-studys-table-1" in links
    anchors = _github_anchors(markdown)
    ids = set(re.findall(r"id='([^']+)'", page))
    for link in links:
        assert link in anchors, link
        assert link in ids, link
        assert f"<a href='#{link}'>" in page


def test_heading_anchor_is_githubs() -> None:
    assert heading_anchor("Then and now: the study (2023) vs newer runs") == (
        "then-and-now-the-study-2023-vs-newer-runs"
    )
    assert heading_anchor("% failing (functions with a known outcome) per bucket") == (
        "-failing-functions-with-a-known-outcome-per-bucket"
    )


def test_failing_shares_are_the_outcome_tables(
    tables: dict[str, pd.DataFrame], rendered: tuple[str, str]
) -> None:
    shares = tables["outcome_shares"].set_index(list(KEYS))
    summary = tables["summary_failing"]
    assert len(summary) == 7  # the study's 3 primary models, ours in 2 modes, the local GPU and CPU
    for row in summary.itertuples(index=False):
        detail = shares.loc[tuple(getattr(row, k) for k in KEYS)]
        assert row.n_known == detail["n_known"]
        assert row.pct_failing == pytest.approx(
            detail["pct_partial_failure"] + detail["pct_complete_failure"], abs=0.1
        )
    grid = _grid(rendered[0], "Functions failing")
    assert grid.loc["torch", "mince2023 · T4 (gpu) · eager"] == "50.0% of 4 (1.12.0)"
    assert grid.loc["torch", "mince2023 · TPU v3-8 · eager"] == "75.0% of 4 (1.12.0)"
    assert grid.loc["torch", "portability · EPYC (cpu) · eager"] == "25.0% of 4 (2.13.0)"
    assert grid.loc["torch", "local · Ryzen 9 (cpu) · eager"] == "50.0% of 2 (2.5.0)"
    assert list(grid.columns)[:3] == [
        "mince2023 · T4 (gpu) · eager",
        "mince2023 · TPU v3-8 · eager",
        "mince2023 · t4_vm CPU · eager",
    ]


def test_slowdowns_are_the_latency_tables(tables: dict[str, pd.DataFrame], rendered: tuple[str, str]) -> None:
    shares, functions = tables["cross_device_shares"], tables["cross_device_functions"]
    for model, reference, median, worst in (
        ("TPU v3-8", "T4", 17.5, 25.0),
        ("Ryzen 9", "RTX 4090", 3.0, 8.0),
    ):
        pair = (shares["device_model"] == model) & (shares["reference_device_model"] == reference)
        assert shares.loc[pair, "median_ratio"].item() == pytest.approx(median)
        of_pair = (functions["device_model"] == model) & (functions["reference_device_model"] == reference)
        assert functions.loc[of_pair, "ratio"].max() == pytest.approx(worst)
        summary = tables["summary_slowdown"]
        row = summary[(summary["device_model"] == model) & (summary["reference_device_model"] == reference)]
        assert (row["median_ratio"].item(), row["worst_ratio"].item()) == (
            pytest.approx(median),
            pytest.approx(worst),
        )
    grid = _grid(rendered[0], "Slowdown across devices")
    assert grid.loc["torch", "mince2023 · TPU v3-8 / T4 (gpu) · eager"] == "17.5× · 25.0× (n=2)"
    assert grid.loc["torch", "local · Ryzen 9 (cpu) / RTX 4090 (gpu) · eager"] == "3.00× · 8.00× (n=3)"
    assert (
        tables["summary_slowdown"].set_index("device_model").loc["TPU v3-8", "worst_function"] == "torch.f2"
    )
    assert "portability has no device pair yet (measured: cpu)" in rendered[0]


def test_then_now_and_compiled_counts(tables: dict[str, pd.DataFrame], rendered: tuple[str, str]) -> None:
    detail = tables["then_now_summary"].set_index("now_setting")
    eager = "portability · torch 2.13.0 · EPYC (cpu) · eager"
    summary = tables["summary_then_now"].set_index("now_setting")
    for change in ("fixed", "broke", "still_failing", "still_works", "removed"):
        assert summary.loc[eager, change] == detail.loc[eager, change]
    assert (summary.loc[eager, "fixed"], summary.loc[eager, "broke"], summary.loc[eager, "still_works"]) == (
        1,
        1,
        2,
    )
    moves = tables["then_now_latency_summary"].set_index("now_setting")
    assert (
        summary.loc[eager, "median_ratio_now_vs_then"] == moves.loc[eager, "median_ratio_now_vs_then"] == 0.5
    )
    rows = _rows(rendered[0], "Then vs now").set_index("now")
    assert rows.loc["portability · 2.13.0 · EPYC (cpu) · eager"].tolist() == [
        "torch", "1.12.0 · t4_vm CPU · eager", "1", "1", "0", "2", "0.500× (n=1)"
    ]  # fmt: skip
    local = rows.loc["local · 2.5.0 · RTX 4090 (gpu) · eager"]
    assert (local["then (study)"], local["fixed"]) == ("1.12.0 · T4 (gpu) · eager", "2")
    compiled = tables["summary_compiled"].set_index("mode")
    executions = tables["executions"].set_index("mode")
    for column in ("n_subtests", "compiled", "graph_breaks", "eager_fallback", "not_routed"):
        assert compiled.loc["compiled", column] == executions.loc["compiled", column]
    assert set(tables["superseded"]["run_id"]) == {"old"}  # its eager_fallback rows are not pooled
    grid = _grid(rendered[0], "Compiled really compiled")
    assert grid.loc["torch", "portability · EPYC (cpu) · compiled"] == (
        "2.13.0: 3 of 5 (60.0%); 1 graph breaks, 1 not routed"
    )


def test_a_local_machine_stands_beside_the_study(rendered: tuple[str, str], tmp_path: Path) -> None:
    """With the user's machine (the module's report: make_data's default) and without it."""
    without = tmp_path / "without"
    run_report(make_data(without / "data", local=False), without / "out", without / "out" / "metrics.json")
    markdown = rendered[0]
    intro = markdown.split("## Summary")[0]
    assert "local: this machine's runs (`portability bench`, `portability run`)" in intro
    failing = _grid(markdown, "Functions failing")
    assert [c for c in failing.columns if "RTX 4090" in c] == ["local · RTX 4090 (gpu) · eager"]
    assert {"mince2023 · T4 (gpu) · eager", "local · RTX 4090 (gpu) · eager"} <= set(failing.columns)
    assert list(failing.columns).index("mince2023 · T4 (gpu) · eager") < list(failing.columns).index(
        "local · RTX 4090 (gpu) · eager"
    )
    assert "local" in " ".join(_rows(markdown, "Then vs now")["now"])
    plain = (without / "out" / "report.md").read_text()
    assert "local" not in "\n".join(_summary_lines(plain)[1])
    assert "local" not in plain.split("## Summary")[0]


def test_summary_of_an_empty_dataset_still_renders(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    run_report(tmp_path / "empty", out, out / "metrics.json")
    markdown = (out / "report.md").read_text()
    _, lines = _summary_lines(markdown)
    assert len(lines) <= SUMMARY_MAX_LINES
    assert sum(line == "(no rows)" for line in lines) == 4


def test_a_device_type_the_study_never_ran_is_named_so(data: Path, tmp_path: Path) -> None:
    mps = ("local", "torch", "2.5.0", "mps", "Apple M2", "eager")
    rows = [_outcome(mps, "torch.f1", "success"), _outcome(mps, "torch.f2", "complete_failure")]
    write_table("outcomes", pd.DataFrame(rows), data / "outcomes" / "mps.parquet")
    out = tmp_path / "reports"
    run_report(data, out, out / "metrics.json")
    markdown = (out / "report.md").read_text()
    assert _grid(markdown, "Functions failing").loc["torch", "local · Apple M2 (mps) · eager"] == (
        "50.0% of 2 (2.5.0)"
    )
    mps = _rows(markdown, "Then vs now").set_index("now").loc["local · 2.5.0 · Apple M2 (mps) · eager"]
    assert mps.tolist() == ["torch", "no study run on this device type", "—", "—", "—", "—", "—"]
    _, lines = _summary_lines(markdown)
    assert len(lines) <= SUMMARY_MAX_LINES


V2 = ("mince2023", "torch", "1.12.0", "tpu", "TPU v2-8", "eager")
OURS_XLA = ("portability", "torch", "2.9.0", "xla", "XLA CPU (PJRT)", "eager")


def test_a_then_now_comparison_reads_one_study_machine_for_every_number(data: Path, tmp_path: Path) -> None:
    """The study timed TPU v2-8 on more functions than TPU v3-8 but published outcomes for v3-8 only;
    against v3-8 our xla device is 10x faster, against v2-8 10x slower. The outcome counts, the
    latency rows and the summary's ratio must all be against v3-8 (a mix reads 10x)."""
    functions = [f"torch.f{i}" for i in range(1, 5)]
    outcomes = [_outcome(OURS_XLA, fn, "success") for fn in functions]
    latencies = [_latency(V3, fn, 10.0) for fn in functions[:2]]  # fewer timed rows than v2-8
    latencies += [_latency(V2, fn, 0.1) for fn in functions]
    latencies += [_latency(OURS_XLA, fn, 1.0) for fn in functions]
    write_table("outcomes", pd.DataFrame(outcomes), data / "outcomes" / "xla.parquet")
    write_table("latencies", pd.DataFrame(latencies), data / "latencies" / "xla.parquet")
    tables = build(load_inputs(data))[1]
    now = "portability · torch 2.9.0 · XLA CPU (PJRT) · eager"
    changes = tables["then_now_changes"]
    then_labels = set(changes.loc[changes["now_setting"] == now, "then_setting"])
    assert len(then_labels) == 1 and "TPU v3-8" in then_labels.pop()
    moves = tables["then_now_latency"]
    moves = moves[moves["now_setting"] == now]
    assert set(moves["then_setting"]) == set(changes.loc[changes["now_setting"] == now, "then_setting"])
    assert sorted(moves["function"]) == functions[:2]
    summary = tables["summary_then_now"].set_index("now_setting")
    assert summary.loc[now, "median_ratio_now_vs_then"] == pytest.approx(0.1)
    assert summary.loc[now, "latency_n_functions"] == 2
    out = tmp_path / "reports"
    run_report(data, out, out / "metrics.json")
    rows = _rows((out / "report.md").read_text(), "Then vs now").set_index("now")
    xla = rows.loc["portability · 2.9.0 · XLA CPU (PJRT) · eager"]
    assert (xla["then (study)"], xla["latency now/then"]) == ("1.12.0 · TPU v3-8 · eager", "0.100× (n=2)")


def test_a_compiled_setting_is_not_timed_against_the_studys_eager_run(data: Path, tmp_path: Path) -> None:
    """The study timed eager mode only: our compiled setting's outcomes are read against it, its
    latencies never (a jit-compiled call against an op-by-op one is a mode ratio, not then vs now)."""
    compiled = ("portability", "torch", "2.13.0", "cpu", "EPYC", "compiled")
    functions = ["torch.f1", "torch.f2"]
    outcomes = [_outcome(compiled, fn, "success") for fn in functions]
    latencies = [_latency(STUDY_CPU, fn, 10.0) for fn in functions]
    latencies += [_latency(compiled, fn, 0.1) for fn in functions]
    write_table("outcomes", pd.DataFrame(outcomes), data / "outcomes" / "compiled.parquet")
    write_table("latencies", pd.DataFrame(latencies), data / "latencies" / "compiled.parquet")
    tables = build(load_inputs(data))[1]
    now = "portability · torch 2.13.0 · EPYC (cpu) · compiled"
    moves = tables["then_now_latency"]
    assert moves[moves["now_setting"] == now].empty
    changes = tables["then_now_changes"]
    assert len(changes[changes["now_setting"] == now])  # outcomes are still compared
    out = tmp_path / "reports"
    run_report(data, out, out / "metrics.json")
    rows = _rows((out / "report.md").read_text(), "Then vs now").set_index("now")
    row = rows.loc["portability · 2.13.0 · EPYC (cpu) · compiled"]
    assert row["then (study)"].endswith(" · eager")
    assert row["latency now/then"] == "none (the study timed eager mode only)"


def test_a_latency_summary_of_another_study_machine_is_not_merged(tables: dict[str, pd.DataFrame]) -> None:
    """The headline joins latency to outcomes on the study machine too: a latency summary row whose
    then_setting differs from the outcomes' is left out, not shown under the outcomes' label."""
    from portability_data.report.summary import then_now_headline

    moves = tables["then_now_latency_summary"].copy()
    assert len(moves)
    moves["then_setting"] = "mince2023 · torch 1.12.0 · another machine · eager"
    headline = then_now_headline(tables["then_now_summary"], moves)
    assert headline["median_ratio_now_vs_then"].isna().all()


def test_the_report_opens_with_findings_each_a_number_with_its_setting_and_a_linked_table(
    rendered: tuple[str, str], tables: dict[str, pd.DataFrame]
) -> None:
    """The first lines under the title are the headline findings (the study's question first), each
    linking to a table that exists in both renderings, each number one of that table's cells."""
    markdown, page = rendered
    lines = markdown.splitlines()
    opening = lines[2 : lines.index("## Summary")]
    bullets = [line for line in opening if line.startswith("- ")]
    assert [b.split("**")[1] for b in bullets] == [
        "Then (2023, the study):",
        "Now (newer runs):",
        "Then vs now:",
    ]
    assert lines[2] == bullets[0]  # nothing before the findings
    ids = set(re.findall(r"id='([^']+)'", page))
    anchors = _github_anchors(markdown)
    for bullet in bullets:
        links = re.findall(r"\]\(#([^)]+)\)", bullet)
        assert links, bullet
        assert all(link in anchors and link in ids for link in links), (bullet, links)
    failing = tables["summary_failing"].set_index(["source", "device", "device_model", "mode"])
    t4 = failing.loc[("mince2023", "gpu", "T4", "eager"), "pct_failing"]
    v3 = failing.loc[("mince2023", "tpu", "TPU v3-8", "eager"), "pct_failing"]
    assert f"{t4:.1f}% of functions failing on the T4 (gpu) → {v3:.1f}% on the TPU v3-8" in bullets[0]
    assert "0.0% of 3 functions failing on RTX 4090 (gpu), 2.5.0, against 50.0% of 2 on the CPU" in bullets[1]
    assert "<li><strong>Then (2023, the study):</strong>" in page
    assert page.index("<li><strong>Then (2023") < page.index("<h2 id='summary'>")


def test_findings_name_a_setting_without_quiet_latency(tables: dict[str, pd.DataFrame]) -> None:
    """A newer device setting whose runs were all contended has no latency, and the opening says so."""
    from portability_data.readings.quiet import QUIET
    from portability_data.report.findings import findings

    headline = tables["summary_then_now"].copy()
    row = headline.iloc[[0]].assign(
        now_device="xla",
        now_setting="portability · torch 2.9.0 · XLA CPU (PJRT) · compiled",
        then_setting="mince2023 · torch 1.12.0 · TPU v3-8 · eager",
        latencies_from="none: no quiet run",
    )
    sentences = findings({**tables, "summary_then_now": row}, None)
    then_vs_now = next(s for s in sentences if s.startswith("**Then vs now:**"))
    assert "PyTorch compiled against the study's TPU v3-8" in then_vs_now
    assert "no latency: the study timed eager mode only" in then_vs_now and "now/then" not in then_vs_now
    eager = row.assign(now_setting="portability · torch 2.9.0 · XLA CPU (PJRT) · eager")
    sentences = findings({**tables, "summary_then_now": eager}, None)
    then_vs_now = next(s for s in sentences if s.startswith("**Then vs now:**"))
    assert "no latency: no quiet run of ours" in then_vs_now and "now/then" not in then_vs_now
    for repeats, said in ((1, "n=44, 1 quiet repeat)"), (2, "n=44, 2 quiet repeats)")):
        timed = eager.assign(latencies_from=QUIET, n_quiet_repeats=repeats, latency_n_functions=44)
        timed = timed.assign(median_ratio_now_vs_then=0.0137)
        sentences = findings({**tables, "summary_then_now": timed}, None)
        then_vs_now = next(s for s in sentences if s.startswith("**Then vs now:**"))
        assert f"latency now/then 0.0137× ({said}" in then_vs_now
    census = {
        "functions": 1644,
        "pairs": 26340,
        "moves": [
            {
                "framework": "torch",
                "mode": "eager",
                "device": "xla",
                "functions_both": 736,
                "functions_lost": 456,
                "functions_unconfirmed": 0,
            }
        ],
    }
    last = findings(tables, census)[-1]
    assert last.startswith("**The census** ran 1,644 functions in 26,340 function × dtype pairs")
    assert "PyTorch eager on xla: 456 of 736 functions lose at least one dtype that runs on the CPU" in last
    assert "confirmed alone" not in last
    census["moves"][0]["functions_unconfirmed"] = 12
    last = findings(tables, census)[-1]
    assert "456 of 736 functions lose at least one dtype that runs on the CPU, and 12 have a dtype" in last
    assert "not yet confirmed alone (counted neither way)" in last


def test_a_device_run_on_another_release_than_the_cpus_is_said_so() -> None:
    """A lent GPU's image has its own framework release (torch 2.11 there, our CPU runs 2.13): the
    opening sets it beside the CPU of its own release where there is one, else says the gap is the
    versions' too (issue 58)."""
    from portability_data.report.findings import _now

    def row(device: str, model: str, version: str, pct: float) -> dict[str, object]:
        return {
            "source": "portability", "framework": "torch", "device": device, "device_model": model,
            "mode": "eager", "n_known": 10, "pct_failing": pct, "framework_version": version,
        }  # fmt: skip

    gpu = row("gpu", "NVIDIA H200", "2.11.0+cu130", 20.0)
    ours = row("cpu", "Xeon", "2.13.0+cpu", 10.0)
    text = _now({"summary_failing": pd.DataFrame([gpu, ours])})
    assert text is not None
    assert "2.11.0+cu130, against 10.0% of 10 on the CPU, 2.13.0+cpu (another version" in text
    theirs = row("cpu", "H200 host", "2.11.0+cpu", 5.0)
    text = _now({"summary_failing": pd.DataFrame([gpu, ours, theirs])})
    assert text is not None and "against 5.0% of 10 on the CPU, 2.11.0+cpu" in text
    assert "another version" not in text


def test_a_census_only_compiled_setting_is_not_called_older_than_the_execution_column() -> None:
    """A compiled setting with no execution record: runs from before the column (its curated
    subtests ran) or no curated run at all (a census-only path, whose outcomes are only the
    functions its version lacks); the summary tells the two apart."""
    from portability_data.report.summary import compiled_summary

    def setting(device: str) -> dict[str, str]:
        return {"source": "portability", "framework": "jax", "framework_version": "0.10.2",
                "device": device, "device_model": f"EPYC ({device})", "mode": "compiled"}  # fmt: skip

    outcomes = pd.DataFrame(
        [
            {
                **setting("onnxruntime"),
                "function": "jax.lax.infeed",
                "n_subtests": 0,
                "outcome": "unavailable",
            },
            {**setting("cpu"), "function": "jax.numpy.cos", "n_subtests": 2, "outcome": "success"},
        ]
    )
    summary = compiled_summary(pd.DataFrame(), outcomes).set_index("device")
    assert not summary.loc["onnxruntime", "curated_ran"]
    assert summary.loc["cpu", "curated_ran"]
    assert (summary["n_subtests"] == 0).all()


def _path_row(device: str, model: str, pct: float) -> dict[str, object]:
    """A summary_failing row of PyTorch compiled (portability) on one device and machine model."""
    return {
        "source": "portability", "framework": "torch", "device": device, "device_model": model,
        "mode": "compiled", "n_known": 10, "pct_failing": pct, "framework_version": "2.13.0+cpu",
    }  # fmt: skip


def test_a_path_measured_on_another_host_than_the_cpus_run_is_said_so() -> None:
    """An export path run on a session's host (Intel) set beside the CPU run of another (AMD): the
    opening names the CPU's machine and says the gap is not the path's alone; a path of the same
    host, a GPU and xla are not flagged."""
    from portability_data.report.findings import _now

    cpu = _path_row("cpu", "AMD EPYC", 10.0)
    iree = _path_row("iree", "Intel(R) Xeon(R) Processor @ 2.80GHz (iree llvm-cpu, local-task)", 90.0)
    same = _path_row("onnxruntime", "AMD EPYC (onnxruntime CPUExecutionProvider)", 80.0)
    xla = _path_row("xla", "XLA CPU (PJRT)", 50.0)
    text = _now({"summary_failing": pd.DataFrame([cpu, iree, same, xla])})
    assert text is not None
    flagged = "(the CPU's run is of another machine, AMD EPYC: not the path's difference alone)"
    parts = text.split("; ")
    assert [flagged in part for part in parts] == [True, False, False], parts


def test_a_path_is_set_beside_the_cpu_run_of_its_own_host_where_there_is_one() -> None:
    """With a CPU run of each host, each path is compared with its own machine's CPU, whichever
    CPU row comes first: an Intel path with the Intel CPU, an AMD path with the AMD CPU, unflagged."""
    from portability_data.report.findings import _now

    intel = "Intel(R) Xeon(R) Processor @ 2.80GHz"
    cpus = [_path_row("cpu", "AMD EPYC", 10.0), _path_row("cpu", intel, 20.0)]
    paths = [
        _path_row("iree", f"{intel} (iree llvm-cpu, local-task)", 90.0),
        _path_row("onnxruntime", "AMD EPYC (x)", 80.0),
    ]
    for order in (cpus, cpus[::-1]):
        text = _now({"summary_failing": pd.DataFrame([*order, *paths])})
        assert text is not None
        iree, onnx = text.split("; ")
        assert "against 20.0% of 10 on the CPU" in iree and "another machine" not in iree, iree
        assert "against 10.0% of 10 on the CPU" in onnx and "another machine" not in onnx, onnx
