"""torch_xla's own test lists as declarations for device xla (issue 48): the importer on lists made
here with known answers, its refusals, the committed table against the facts its source states, and
the report section that sets them beside the census."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from portability_data.pipeline.frameworks.torch.xla import TorchXlaImportError, import_torch_xla, out_path
from portability_data.readings.frames import plain_frame
from portability_data.readings.torch_xla import split_source
from portability_data.report.declared_xla import (
    agreement,
    allowed_pairs,
    disagreements,
    reading,
    torch_xla_section,
)
from portability_data.tables.tableio import read_table, write_table

SOURCE = {"repository": "pytorch/xla", "path": "test/test_ops.py", "tag": "v9.9.9", "commit": "0" * 40}
LISTS = {
    "source": SOURCE,
    "allowed_opinfo": ["abs", "addmm.decomposed", "gone.variant", "logical_not"],
    "allowed_fallback_opinfo": ["nonzero"],
    "commented_out": [
        {"entry": "cos", "section": "failing", "line": "# AllowedOpInfoEntry('cos'),"},
        {"entry": "abs", "section": "duplicate", "line": "# AllowedOpInfoEntry('abs'),"},
        {"entry": "abs", "section": "duplicate", "line": "# AllowedOpInfoEntry('abs'),"},
    ],
}


def wheel_row(entry: str, variant: str | None, dtype: str, function: str) -> dict:
    return {
        "framework": "torch",
        "framework_version": "2.13.0",
        "function": function,
        "unmapped_reason": None,
        "origin": "opinfo",
        "entry": entry,
        "variant": variant,
        "device_type": "cpu",
        "dtype": dtype,
        "declared": "supported_dtype",
        "aspect": "forward",
        "test_class": None,
        "test_name": None,
        "active": True,
        "reason": None,
        "source": f"common_methods_invocations.py:op_db[{entry}].dtypes",
    }


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(lists folder, wheel table, out folder) with the wheel's CPU dtypes of each entry."""
    folder = tmp_path / "torch_xla"
    folder.mkdir()
    (folder / "test_ops_lists.json").write_text(json.dumps(LISTS))
    wheel = [wheel_row("abs", None, dtype, "torch.abs") for dtype in ("bool", "float32", "int64")] + [
        wheel_row("addmm", "decomposed", "float32", "torch.addmm"),
        wheel_row("logical_not", None, "bool", "torch.logical_not"),
        wheel_row("nonzero", None, "int64", "torch.nonzero"),
        wheel_row("cos", None, "float32", "torch.cos"),
    ]
    wheel_path = write_table("declared", pd.DataFrame(wheel), tmp_path / "declared" / "declared.parquet")
    return folder, wheel_path, tmp_path / "declared"


def test_the_lists_become_declarations_of_the_dtypes_torch_xla_runs(imported) -> None:
    folder, wheel, out_dir = imported
    out, written = import_torch_xla(folder, wheel, out_dir)
    assert written and out == out_dir / "torch_xla-v9.9.9.parquet"
    rows = read_table("declared", out)
    supported = rows[rows["declared"] == "supported_dtype"]
    pairs = {
        (e, v if isinstance(v, str) else None, d)
        for e, v, d in supported[["entry", "variant", "dtype"]].itertuples(index=False)
    }
    # float32 and int64 of each entry's CPU dtypes, never a dtype the entry does not have
    assert pairs == {
        ("abs", None, "float32"),
        ("abs", None, "int64"),
        ("addmm", "decomposed", "float32"),
        ("nonzero", None, "int64"),
    }
    assert set(supported["device_type"]) == {"xla"} and set(supported["framework_version"]) == {"9.9.9"}
    nonzero = supported[supported["entry"] == "nonzero"]
    assert nonzero["source"].iloc[0].endswith("allowed_fallback_opinfo")
    by_entry = rows.set_index("entry")
    assert by_entry.loc["gone", "unmapped_reason"] == "not_in_op_db" and pd.isna(
        by_entry.loc["gone", "function"]
    )
    assert by_entry.loc["logical_not", "declared"] == "other"  # bool only: torch_xla's test runs none of it
    assert by_entry.loc["cos", "declared"] == "expected_failure"
    duplicates = rows[(rows["entry"] == "abs") & (rows["declared"] == "other")]
    assert len(duplicates) == 1 and "duplicate" in duplicates["reason"].iloc[0]


def test_an_import_is_never_rewritten(imported) -> None:
    folder, wheel, out_dir = imported
    out, _ = import_torch_xla(folder, wheel, out_dir)
    before = out.read_bytes()
    assert import_torch_xla(folder, wheel, out_dir) == (out, False)
    changed = {**LISTS, "allowed_opinfo": ["abs"]}
    (folder / "test_ops_lists.json").write_text(json.dumps(changed))
    with pytest.raises(TorchXlaImportError, match=r"torch_xla-v9\.9\.9\.parquet: already holds"):
        import_torch_xla(folder, wheel, out_dir)
    assert out.read_bytes() == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("missing", "not found; pass the folder holding test_ops_lists.json"),
        ("not_json", "not JSON"),
        ("no_tag", "field source.tag missing"),
        ("bad_item", r"field commented_out\[0\]: needs entry, section and line"),
    ],
)
def test_bad_lists_are_refused_naming_the_file_and_field(
    imported, tmp_path: Path, change: str, message: str
) -> None:
    folder, wheel, out_dir = imported
    lists = folder / "test_ops_lists.json"
    if change == "missing":
        folder = tmp_path / "nowhere"
    elif change == "not_json":
        lists.write_text("{")
    elif change == "no_tag":
        lists.write_text(json.dumps({**LISTS, "source": {**SOURCE, "tag": ""}}))
    else:
        lists.write_text(json.dumps({**LISTS, "commented_out": [{"entry": "cos"}]}))
    with pytest.raises(TorchXlaImportError, match=message):
        import_torch_xla(folder, wheel, out_dir)
    assert not out_path(out_dir, LISTS).exists()


def test_the_committed_table_holds_what_its_source_states(repo_root: Path) -> None:
    """shared/reference/torch_xla/README.md: 200 allowed entries, 6 allowed with fallback, 115
    commented out (one line twice), and 7 allowed names op_db no longer has plus `min.binary `."""
    rows = plain_frame(read_table("declared", repo_root / "data" / "declared" / "torch_xla-v2.9.0.parquet"))
    names = rows["entry"].astype(str) + rows["variant"].map(lambda v: f".{v}" if isinstance(v, str) else "")
    listed = rows["source"].map(lambda source: split_source(source)[1])
    assert names[listed == "allowed_opinfo"].nunique() == 200
    assert names[listed == "allowed_fallback_opinfo"].nunique() == 6
    assert len(rows[listed == "commented_out"]) == 114
    gone = set(names[(listed == "allowed_opinfo") & (rows["unmapped_reason"] == "not_in_op_db")])
    expected = {"fmod.autodiffed", "remainder.autodiffed", "inverse", "rsub.rsub_tensor", "solve", "fill_"}
    assert gone == expected | {"special.zeta.grad", "min.binary "}


def matrix_row(entry: str, dtype: str, status: str, **extra) -> dict:
    return {
        "framework": "torch",
        "device": "xla",
        "origin": "opinfo",
        "mode": "eager",
        "entry": entry,
        "dtype": dtype,
        "status": status,
        "error_message": extra.get("message"),
        "error_type": extra.get("error_type"),
        "max_rel_error": extra.get("rel"),
        "max_abs_error": extra.get("abs_"),
    }


def test_each_disagreement_is_listed_with_a_reading_of_its_evidence(imported) -> None:
    folder, wheel, out_dir = imported
    out, _ = import_torch_xla(folder, wheel, out_dir)
    declared = plain_frame(read_table("declared", out))
    matrix = pd.DataFrame(
        [
            matrix_row("abs", "float32", "works"),
            matrix_row("abs", "int64", "deviates", message="input edge (14,) int64: 1 of 14 values off"),
            matrix_row("addmm.decomposed", "float32", "deviates", message="input large", rel=4e-4, abs_=2.0),
            matrix_row(
                "nonzero",
                "int64",
                "host_fallback",
                message="ran on the host instead of xla: aten::nonzero x2",
            ),
            matrix_row("cos", "float32", "works"),
            matrix_row("logical_not", "bool", "ran"),  # not a dtype torch_xla runs: not its pair
            matrix_row("abs", "float32", "fails", error_type="RuntimeError") | {"device": "cpu"},
        ]
    )
    pairs = allowed_pairs(matrix, declared)
    assert len(pairs) == 4  # the CPU's row and the entry torch_xla does not allow are not its pairs
    counts = agreement(pairs, declared).iloc[0]
    assert (counts["measured_pairs"], counts["agree"], counts["deviates"]) == (4, 2, 2)  # fallback allowed
    listed = disagreements(pairs).set_index("entry")
    assert list(listed.index) == ["abs", "addmm.decomposed"]
    assert listed.loc["abs", "reading"] == "edge input (not among torch_xla's samples)"
    assert listed.loc["addmm.decomposed", "reading"].startswith("within 0.001")
    assert reading({"status": "ran", "error_message": None}).startswith("ran, not every sample compared")
    assert reading({"status": "no_sample", "error_message": None}).startswith("no sample could be built")
    assert reading({"status": "deviates", "error_message": "x", "max_rel_error": 0.5}) == "deviates"


def test_the_report_section_on_the_committed_data_accounts_for_every_pair(repo_root: Path) -> None:
    built = torch_xla_section(repo_root / "data")
    assert built is not None
    section, metrics = built
    agreed = dict(section.tables)["Agreement per mode (pairs: entry x dtype)"].set_index("mode")
    listed = dict(section.tables)["Every pair torch_xla says passes that we do not measure as passing"]
    for mode, row in agreed.iterrows():
        off = listed[listed["mode"] == mode]["dtypes"].str.split(", ").str.len().sum()
        assert row["agree"] + off == row["measured_pairs"]
        assert metrics[mode] == {"measured": row["measured_pairs"], "agree": row["agree"]}
