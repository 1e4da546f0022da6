"""The study's published numbers: import, printed-precision equality, reasons, and a floor on how
many we reproduce from the committed data (a change to the import or the aggregation that lowers
it fails here)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from portability_data.pipeline.aggregate.build import aggregate
from portability_data.pipeline.published import PublishedImportError, build_published
from portability_data.pipeline.reproduce.build import reproduce
from portability_data.pipeline.reproduce.study import study_data
from portability_data.pipeline.reproduce.values import equal_at_precision, round_printed
from portability_data.readings.reproduction import equal_counts
from portability_data.tables.tableio import read_table
from tests.conftest import REFERENCE_DIR, REPO_ROOT, example_rows

DATA = REPO_ROOT / "data"
# Published values we reproduce from the study's raw data, per published table and quantity (raise
# a floor when a fix reproduces more; never lower one without a reason in the issue).
FLOORS: dict[tuple[str, str], int] = {
    ("per_function_latency", "latency_ms"): 310,
    ("per_function_latency", "ratio"): 67,
    ("outcome_counts", "success"): 1,
    ("outcome_counts", "partial_failure"): 2,
    ("outcome_counts", "complete_failure"): 2,
    ("outcome_counts", "n_functions"): 4,
    ("stated_in_text", "n_timed_on_both"): 2,
    ("stated_in_text", "pct_slower_on_device"): 2,
}
TABLE_FLOORS = {"per_function_latency": 377, "outcome_counts": 9, "stated_in_text": 4}


def _check_floors(reproduction: pd.DataFrame, what: str) -> None:
    by_table = {r.published_table: r.equal for r in equal_counts(reproduction).itertuples(index=False)}
    for table, floor in TABLE_FLOORS.items():
        assert by_table.get(table, 0) >= floor, f"{what}: {table} reproduces {by_table.get(table)} < {floor}"
    finer = equal_counts(reproduction, ("published_table", "quantity"))
    found = {(r.published_table, r.quantity): r.equal for r in finer.itertuples(index=False)}
    for key, floor in FLOORS.items():
        assert found.get(key, 0) >= floor, f"{what}: {key} reproduces {found.get(key)} < {floor}"


# --------------------------------------------------------------------------- the floor, committed data


def test_committed_reproduction_keeps_its_floor() -> None:
    reproduction = read_table("reproduction", DATA / "reproduction" / "reproduction.parquet")
    assert len(reproduction) == len(read_table("published", DATA / "published"))
    _check_floors(reproduction, "data/reproduction")


def test_current_aggregation_of_the_committed_study_data_keeps_the_floor() -> None:
    """Re-aggregates the committed study shards with today's code (no dvc repro needed)."""
    results = read_table("results", DATA / "results" / "mince2023")
    outcomes, latencies = aggregate(results, read_table("runs", DATA / "runs" / "mince2023"))
    data = study_data(
        read_table("published", DATA / "published"),
        outcomes,
        latencies,
        results,
        read_table("samples", DATA / "samples" / "mince2023.parquet"),
    )
    reproduction = reproduce(data)
    _check_floors(reproduction, "re-aggregated")
    differences = reproduction[~reproduction["equal"].astype(bool)]
    assert differences["reason"].notna().all() and differences["evidence"].notna().all()
    assert "unexplained" not in set(differences["reason"])


def test_the_published_json_is_not_in_the_repository() -> None:
    listed = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "ls-files", "--", "*published_tables.json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    assert listed.stdout.strip() == ""


@pytest.mark.skipif(not REFERENCE_DIR.is_dir(), reason="shared/reference/mince2023 is absent")
def test_committed_published_table_is_what_the_import_makes() -> None:
    made = build_published(REFERENCE_DIR)
    committed = read_table("published", DATA / "published").astype(object)
    assert len(made) == 500 and (made["quantity"] == "latency_ms").sum() == 310
    pd.testing.assert_frame_equal(
        made.astype(object).where(made.notna(), None),
        committed.where(committed.notna(), None),
        check_dtype=False,
    )


# --------------------------------------------------------------------------- printed precision


@pytest.mark.parametrize(
    ("ours", "printed", "decimals", "equal"),
    [
        (1.25, "1.3", 1, True),  # half-up
        (1.25, "1.2", 1, True),  # half-even (Python's round and format at an exact tie)
        (1.24, "1.3", 1, False),
        (1.2500001, "1.2", 1, False),
        (1.34999, "1.3", 1, True),
        (2.675, "2.68", 2, True),  # 2.675 is 2.67499... in binary; it prints as 2.675
        (0.0004, "0.000", 3, True),
        (0.0006, "0.000", 3, False),
        (948.2102, "948.21", 3, True),  # printed 948.21 at 3 decimals is 948.210
        (948.2106, "948.21", 3, False),
        (14 / 65 * 100, "21.54", 2, True),
        (14 / 63 * 100, "21.54", 2, False),
        (96.08, "96", 0, True),
        (None, "1", 0, False),
        (float("nan"), "1", 0, False),
    ],
)
def test_equal_at_printed_precision(ours: float | None, printed: str, decimals: int, equal: bool) -> None:
    assert equal_at_precision(ours, printed, decimals) is equal


def test_bounds_and_rounding_for_display() -> None:
    assert equal_at_precision(1.4, "1", 0, "at_most") and not equal_at_precision(1.6, "1", 0, "at_most")
    assert equal_at_precision(0.2, "1", 0, "at_most")
    assert round_printed(1.25, 1) == "1.3" and round_printed(1.25, 1, "1.2") == "1.2"
    assert round_printed(1.24, 1, "1.3") == "1.2" and round_printed(51.0, 0) == "51"


# --------------------------------------------------------------------------- the import


def _transcription(**overrides: object) -> dict:
    data: dict = {
        "source": "a test transcription",
        "per_function_latency": {
            "what": "mean latency in ms, rounded to 3 decimals",
            "rows": [
                {"function": "torch.f1", "gpu_ms": 0.157, "tpu_ms": 1.234, "ratio": 7.86},
                {"function": "torch.nope", "gpu_ms": 1.0, "tpu_ms": 2.0, "ratio": 2.0},
            ],
        },
        "outcome_counts": {
            "what": "Table 8",
            "rows": [
                {
                    "framework": "jax",
                    "device": d,
                    "partial_failure": 0,
                    "complete_failure": 0,
                    "success": 1,
                    "n": 1,
                }
                for d in ("gpu", "tpu")
            ],
        },
        "stated_in_text": ["Figure 1: 1 PyTorch and 0 JAX functions timed on both GPU and TPU"],
    }
    data.update(overrides)
    return data


def _write(tmp_path: Path, data: object, text: str | None = None) -> Path:
    path = tmp_path / "published_tables.json"
    path.write_text(text if text is not None else json.dumps(data))
    return path


def test_import_reads_values_with_their_printed_text_and_precision(tmp_path: Path) -> None:
    frame = build_published(_write(tmp_path, _transcription()).parent)  # a folder works too
    latency = frame[frame["value_id"] == "/per_function_latency/rows/1/gpu_ms"].iloc[0]
    assert (latency["value_text"], latency["decimals"], latency["device_model"]) == ("1.0", 3, "T4")
    assert latency["reference_device_model"] == "TPU v3-8"
    stated = frame[frame["published_table"] == "stated_in_text"]
    assert list(zip(stated["framework"], stated["value_text"])) == [("torch", "1"), ("jax", "0")]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (
            {"per_function_latency": {"what": "x", "rows": [{"function": "torch.a", "gpu_ms": "fast"}]}},
            "per_function_latency.rows[0].gpu_ms",
        ),
        (
            {
                "per_function_latency": {
                    "what": "x, rounded to 3 decimals",
                    "rows": [{"function": "torch.a", "gpu_ms": 0.1234, "tpu_ms": 1.0, "ratio": 1.0}],
                }
            },
            "per_function_latency.rows[0].gpu_ms",
        ),
        (
            {"per_function_latency": {"what": "x", "rows": [{"function": "numpy.a", "gpu_ms": 1}]}},
            "per_function_latency.rows[0].function",
        ),
        (
            {"outcome_counts": {"what": "x", "rows": [{"framework": "mxnet", "device": "gpu"}]}},
            "outcome_counts.rows[0].framework",
        ),
        (
            {
                "outcome_counts": {
                    "what": "x",
                    "rows": [
                        {
                            "framework": "jax",
                            "device": "gpu",
                            "success": 1.5,
                            "partial_failure": 0,
                            "complete_failure": 0,
                            "n": 2,
                        }
                    ],
                }
            },
            "outcome_counts.rows[0].success",
        ),
        ({"outcome_counts": {"what": "x"}}, "outcome_counts.rows"),
        ({"stated_in_text": ["Something else entirely: 12%"]}, "stated_in_text[0]"),
    ],
)
def test_import_refuses_a_malformed_field_naming_file_and_field(
    tmp_path: Path, change: dict, field: str
) -> None:
    path = _write(tmp_path, _transcription(**change))
    with pytest.raises(PublishedImportError) as error:
        build_published(path)
    assert error.value.field == field
    assert str(path) in str(error.value) and f"field {field}:" in str(error.value)


def test_import_refuses_broken_or_missing_json_and_the_cli_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from portability_data.cli import main

    broken = _write(tmp_path, None, text='{"per_function_latency": ')
    with pytest.raises(PublishedImportError, match=r"published_tables\.json: field \(file\): not valid JSON"):
        build_published(broken)
    missing = {k: v for k, v in _transcription().items() if k != "outcome_counts"}
    with pytest.raises(PublishedImportError, match="field outcome_counts: missing"):
        build_published(_write(tmp_path, missing))
    with pytest.raises(SystemExit, match=r"error: .*published_tables\.json: field outcome_counts: missing"):
        main(["published", "import", str(tmp_path), "--out", str(tmp_path / "out.parquet")])
    assert not (tmp_path / "out.parquet").exists()


def test_the_import_writes_once_and_refuses_to_rewrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run again, the import says "already imported" and leaves the file as it is; a transcription
    that makes other rows is refused naming the file and the column, and nothing is written."""
    from portability_data.cli import main

    source, out = _write(tmp_path, _transcription()), tmp_path / "data" / "published.parquet"
    main(["published", "import", str(source), "--out", str(out)])
    assert capsys.readouterr().out.startswith("1 table(s) written")
    before = (out.read_bytes(), out.stat().st_mtime_ns)
    main(["published", "import", str(source), "--out", str(out)])
    assert capsys.readouterr().out.startswith("already imported, nothing written")
    changed = _transcription()
    changed["per_function_latency"]["rows"][0]["gpu_ms"] = 0.158
    _write(tmp_path, changed)
    with pytest.raises(SystemExit) as refused:
        main(["published", "import", str(source), "--out", str(out)])
    assert f"{out}: value_text in 1 row(s), value in 1 row(s)" in str(refused.value)
    said = str(refused.value)
    assert "nothing written" in said and "`git rm` it in a reviewed change" in said
    assert (out.read_bytes(), out.stat().st_mtime_ns) == before


def test_a_missing_transcription_is_named_with_what_to_give(tmp_path: Path) -> None:
    from portability_data.cli import main

    missing = tmp_path / "nowhere"
    named = rf"error: {missing}: field \(file\): cannot be read .*give published"
    with pytest.raises(SystemExit, match=named):
        main(["published", "import", str(missing), "--out", str(tmp_path / "out.parquet")])
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.skipif(not REFERENCE_DIR.is_dir(), reason="shared/reference/mince2023 is absent")
def test_importing_the_study_again_leaves_the_committed_table(tmp_path: Path) -> None:
    """The committed table is what the import makes (rows and citation): already imported."""
    from portability_data.pipeline.published import import_published

    copy = tmp_path / "published.parquet"
    copy.write_bytes((DATA / "published" / "published.parquet").read_bytes())
    imported = import_published(REFERENCE_DIR, copy)
    assert imported.written == [] and imported.unchanged == [copy]
    assert copy.read_bytes() == (DATA / "published" / "published.parquet").read_bytes()


# --------------------------------------------------------------------------- reasons, synthetic


def _result(
    run: str,
    framework: str,
    function: str,
    subtest: str,
    model: str,
    outcome: str,
    ops: list[float],
    category: str | None = None,
) -> dict:
    device = "gpu" if model in ("T4", "A100") else "tpu"
    row = {
        **example_rows()["results"][0],
        "run_id": run,
        "source": "mince2023",
        "case_id": function,
        "framework": framework,
        "function": function,
        "test_id": f"{run}::{subtest}",
        "subtest": subtest,
        "outcome": outcome,
        "op_latencies_ms": ops,
        "device": device,
        "device_model": model,
        "framework_version": "1.0",
        "failure_category": category,
        "error_type": None,
        "error_message": None,
    }
    if category == "harness":
        row["error_type"], row["error_message"] = "TypeError", "partial_timed() takes 1 positional argument"
    return row


def test_reasons_come_from_the_rows(tmp_path: Path) -> None:
    results = pd.DataFrame(
        [
            _result("t-gpu", "torch", "torch.f1", "test_a", "T4", "passed", [0.1567]),
            _result("t-tpu", "torch", "torch.f1", "test_a", "TPU v3-8", "passed", [1.2341]),
            _result("j-gpu", "jax", "jax.g", "test_b", "T4", "failed", [], "harness"),
            _result("j-tpu", "jax", "jax.g", "test_b", "TPU v3-8", "unknown", [0.2]),
        ]
    )
    outcomes, latencies = aggregate(results)
    samples = pd.DataFrame(
        [
            {**example_rows()["samples"][0], "function": "torch.f1"},
            {**example_rows()["samples"][0], "framework": "jax", "function": "jax.g"},
        ]
    )
    published = build_published(_write(tmp_path, _transcription()))
    got = reproduce(study_data(published, outcomes, latencies, results, samples)).set_index("value_id")

    def at(value_id: str) -> pd.Series:
        return got.loc[value_id]

    assert (
        at("/per_function_latency/rows/0/gpu_ms")["equal"]
        and at("/per_function_latency/rows/0/tpu_ms")["equal"]
    )
    ratio = at("/per_function_latency/rows/0/ratio")
    assert (ratio["equal"], ratio["reason"]) == (False, "rounded_before_dividing")
    assert "1.234 / 0.157" in ratio["evidence"]
    assert at("/per_function_latency/rows/1/gpu_ms")["reason"] == "name_not_matched"
    gpu = at("/outcome_counts/rows/0/success")
    assert (gpu["ours"], gpu["reason"]) == (0.0, "harness_failure_only") and "partial_timed" in gpu[
        "evidence"
    ]
    tpu = at("/outcome_counts/rows/1/success")
    assert pd.isna(tpu["ours"]) and tpu["reason"] == "no_failure_report" and "j-tpu" in tpu["evidence"]
    assert at("/outcome_counts/rows/1/n")["equal"]
    assert at("/stated_in_text/0#0")["equal"] and at("/stated_in_text/0#1")["equal"]


def test_report_section_shows_the_counts_and_the_table8_functions() -> None:
    from portability_data.report.data_sections import reproduction_section

    built = reproduction_section(DATA)
    assert built is not None
    section, metrics = built
    titles = [title for title, _ in section.tables]
    assert titles[0] == "Equal at the printed precision, per published table"
    counts = equal_counts(read_table("reproduction", DATA / "reproduction" / "reproduction.parquet"))
    assert section.tables[0][1].to_dict("records") == counts.to_dict("records")
    assert metrics["per_function_latency"]["total"] == 465
    functions = dict(section.tables)["Table 8: the functions behind the differences"]
    torch_tpu = functions[(functions["framework"] == "torch") & (functions["device_model"] == "TPU v3-8")]
    assert len(torch_tpu) and torch_tpu["evidence"].str.contains("subtests fail").all()
