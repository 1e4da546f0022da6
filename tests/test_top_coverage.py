"""The rest of each top 40 (issue 60): results and reasons through the canonical name, the coverage
of calls by name written and by function, and the reviewed reasons file's checks."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from portability_data.report import census
from portability_data.report import top_coverage as tc
from portability_data.tables.tableio import read_file
from tests.conftest import REPO_ROOT

CORPUS = "pinned:packages.yaml@x"
API = pd.DataFrame(
    {
        "framework": ["tensorflow"] * 5,
        "framework_version": ["2.21.0"] * 5,
        "qualified_name": [
            "tensorflow.exp",
            "tensorflow.math.exp",
            "tensorflow.ones",
            "tensorflow.compat.v1.app.run",
            "tensorflow.cast",
        ],
        "module": ["tensorflow", "tensorflow.math", "tensorflow", "tensorflow.compat.v1.app", "tensorflow"],
        "name": ["exp", "exp", "ones", "run", "cast"],
        "kind": ["function"] * 5,
        "canonical_name": [
            "tensorflow.math.exp",
            "tensorflow.math.exp",
            "tensorflow.ones",
            "tensorflow.compat.v1.app.run",
            "tensorflow.cast",
        ],
        "alias": ["same_object", None, None, None, None],
    }
)
FREQUENCIES = pd.DataFrame(
    {
        "framework": ["tensorflow"] * 4,
        "corpus": [CORPUS] * 4,
        "qualified_name": [
            "tensorflow.exp",
            "tensorflow.ones",
            "tensorflow.compat.v1.app.run",
            "tensorflow.cast",
        ],
        "calls": [30, 20, 10, 40],
        "bare_calls": [0] * 4,
        "files": [9, 8, 7, 6],
        "resolution": ["resolved"] * 4,
    }
)
MATRIX = pd.DataFrame(
    {
        "framework": ["tensorflow", "tensorflow"],
        "function": ["tensorflow.math.exp", "tensorflow.cast"],
        "status": ["works", "not_in_wheel"],
    }
)
OUTCOMES = pd.DataFrame(
    {"framework": ["tensorflow"], "function": ["tensorflow.cast"], "source": ["portability"]}
)


def _reasons(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "reasons.yaml"
    path.write_text(text)
    return path


REASONS = """
- framework: tensorflow
  function: tensorflow.compat.v1.app.run
  kind: entry_point
  why: a program entry point
  source: https://www.tensorflow.org/api_docs/python/tf/compat/v1/app/run
- framework: tensorflow
  function: tensorflow.ones
  kind: pending
  why: no census source lists it yet
  source: https://www.tensorflow.org/api_docs/python/tf/ones
"""


def test_top_functions_join_on_the_canonical_name(tmp_path: Path) -> None:
    reasons = tc.load_reasons(_reasons(tmp_path, REASONS), API)
    table = tc.top_functions(FREQUENCIES, API, MATRIX, OUTCOMES, reasons)["tensorflow"]
    rows = table.set_index("name")
    # measured as tf.math.exp: tf.exp has its result, its canonical name beside it
    assert rows.loc["tensorflow.exp", "status"] == "census"
    assert rows.loc["tensorflow.exp", "canonical_name"] == "tensorflow.math.exp"
    assert rows.loc["tensorflow.ones", "status"] == "pending"
    assert rows.loc["tensorflow.compat.v1.app.run", ["status", "reason"]].tolist() == [
        "cannot",
        "entry_point",
    ]
    # a pair not measured (not_in_wheel) is no census result; the curated case is
    assert rows.loc["tensorflow.cast", "status"] == "curated"
    assert list(table["rank"]) == [1, 2, 3, 4] and table["name"].iloc[0] == "tensorflow.exp"  # by files
    counts = tc.status_counts({"tensorflow": table}).iloc[0]
    assert (counts["census"], counts["curated"], counts["cannot"], counts["pending"], counts["none"]) == (
        1,
        1,
        1,
        1,
        0,
    )
    assert tc.stale_reasons({"tensorflow": table}, reasons) == []
    without = tc.top_functions(FREQUENCIES, API, MATRIX, OUTCOMES, {})["tensorflow"].set_index("name")
    assert without.loc["tensorflow.ones", "status"] == "none"


def test_coverage_of_calls_by_name_and_by_function() -> None:
    covered = tc.calls_coverage(FREQUENCIES, API, MATRIX).iloc[0]
    # by name: no call is to a measured name (tf.math.exp is measured, the corpus writes tf.exp)
    assert covered["pct_of_calls_by_name"] == 0.0
    assert covered["pct_of_calls"] == 30.0  # tf.exp's 30 of 100 calls
    frame = census.coverage(MATRIX, API, FREQUENCIES).iloc[0]
    assert (frame["pct_of_calls"], frame["pct_of_calls_by_name"], frame["aliases"]) == (30.0, 0.0, 1)
    old_api = API.drop(columns=["canonical_name", "alias"])  # a table from before the column
    assert census.coverage(MATRIX, old_api, FREQUENCIES).iloc[0]["pct_of_calls"] == 0.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- framework: tensorflow\n  function: tensorflow.ones\n  kind: pending\n  why: x\n", "field source"),
        (REASONS.replace("kind: pending", "kind: later"), "entry 2 (tensorflow.ones): field kind: 'later'"),
        (REASONS.replace("https://www.tensorflow.org/api_docs/python/tf/ones", "tf docs"), "is not a URL"),
        (
            REASONS.replace("tensorflow.ones", "tensorflow.exp"),
            "tensorflow.exp is an alias of tensorflow.math.exp",
        ),
        (REASONS.replace("tensorflow.ones", "tensorflow.nothing"), "not a tensorflow name in the api table"),
        (
            REASONS
            + "- framework: tensorflow\n  function: tensorflow.ones\n  kind: pending\n  why: again\n"
            + "  source: https://x.org\n",
            "has an entry already",
        ),
        (
            REASONS.replace(
                "  why: a program entry point\n", "  why: a program entry point\n  note: extra\n"
            ),
            "unknown field note",
        ),
        ("framework: tensorflow\n", "expected a list"),
    ],
)
def test_bad_reasons_name_the_entry_and_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(tc.ReasonError, match=message.replace("(", r"\(").replace(")", r"\)")) as raised:
        tc.load_reasons(_reasons(tmp_path, text), API)
    assert "reasons.yaml" in str(raised.value)


def test_the_shipped_reasons_are_valid_against_the_api_table() -> None:
    api = read_file("api", REPO_ROOT / "data" / "api" / "api.parquet").to_pandas()
    reasons = tc.load_reasons(tc.REASONS_PATH, api)
    assert reasons and all(r.source.startswith("https://") for r in reasons.values())
    assert ("tensorflow", "tensorflow.compat.v1.app.run") in reasons
