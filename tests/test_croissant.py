"""croissant.json as real clients read it, offline: mlcroissant records for every record set and
`datasets` streaming give the rows pyarrow reads, and the validator has nothing to warn about."""

from __future__ import annotations

import datetime
import itertools
import json
import math
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import datasets
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from portability_data.dataset.croissant import (
    CITATION,
    CONTEXT,
    CROISSANT_VERSION,
    croissant_metadata,
    hub_variant,
    is_local,
)
from portability_data.dataset.folder import files_of
from portability_data.tables.contracts import TABLES
from portability_data.tables.tableio import write_table
from tests.conftest import REPO_ROOT, example_rows, write_example_dataset

mlc = pytest.importorskip("mlcroissant")

FIRST_ROWS = 5
PARAMS = {"version": "0.1.0", "namespace": "portability-bench"}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One example dataset folder for the read-only tests of this module."""
    folder = tmp_path_factory.mktemp("croissant") / "data"
    write_example_dataset(folder)
    return folder


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a network connection fails the test (the reads must be offline)."""

    def refuse(self: socket.socket, address: Any) -> None:
        raise AssertionError(f"network access attempted: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)


def _plain(value: Any) -> Any:
    """A client's value as pyarrow's to_pylist gives it: mlcroissant returns sc:Text as bytes,
    nulls as NaN/NaT, timestamps as pandas and lists as NumPy arrays."""
    if isinstance(value, bytes):
        return value.decode()
    if value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _pyarrow_rows(folder: Path, table: str, columns: list[str], limit: int = FIRST_ROWS) -> list[dict]:
    """The first rows of a table as pyarrow reads its files, in the files' sorted order."""
    rows: list[dict] = []
    for path in files_of(folder, table):
        rows += pq.read_table(path, columns=columns).to_pylist()
        if len(rows) >= limit:
            break
    return rows[:limit]


def _croissant_rows(jsonld: Path | dict, table: str, limit: int = FIRST_ROWS) -> list[dict]:
    """The first records of a record set as mlcroissant gives them, keyed by column name."""
    records = mlc.Dataset(jsonld=jsonld).records(record_set=table)
    return [
        {key.split("/", 1)[1]: _plain(value) for key, value in record.items()}
        for record in itertools.islice(records, limit)
    ]


def test_context_is_the_standard_one_mlcroissant_defines() -> None:
    from mlcroissant._src.core.context import Context, CroissantVersion
    from mlcroissant._src.core.rdf import make_context

    version = CroissantVersion(CROISSANT_VERSION)
    assert make_context(Context(conforms_to=version)) == CONTEXT


@pytest.mark.parametrize("table", list(TABLES))
def test_mlcroissant_reads_every_record_set_offline_like_pyarrow(
    data_dir: Path, table: str, no_network: None
) -> None:
    rows = _croissant_rows(data_dir / "croissant.json", table)
    assert rows, f"no records for {table}"
    assert rows == _pyarrow_rows(data_dir, table, list(rows[0]))
    assert list(rows[0]) == TABLES[table].names  # every contract column, in order


def test_lists_and_timestamps_keep_their_types(data_dir: Path) -> None:
    result = _croissant_rows(data_dir / "croissant.json", "results")[0]
    assert result["op_latencies_ms"] == [0.5] and result["repeat"] == 0
    run = _croissant_rows(data_dir / "croissant.json", "runs")[0]
    assert run["finished_at"] == datetime.datetime(2026, 11, 23, 0, 1, tzinfo=datetime.UTC)
    case = _croissant_rows(data_dir / "croissant.json", "cases")[0]
    assert case["samples"] == ["mince2023"]


def test_datasets_streams_results_like_pyarrow(data_dir: Path, tmp_path: Path, no_network: None) -> None:
    streamed = datasets.load_dataset(
        str(data_dir), "results", split="train", streaming=True, cache_dir=str(tmp_path / "cache")
    )
    rows = list(itertools.islice(streamed, FIRST_ROWS))
    assert rows and rows == _pyarrow_rows(data_dir, "results", TABLES["results"].names)
    assert rows[0]["op_latencies_ms"] == [0.5]


@pytest.mark.parametrize("variant", ["local", "hub"])
def test_validator_reports_no_warning(data_dir: Path, tmp_path: Path, variant: str) -> None:
    meta = json.loads((data_dir / "croissant.json").read_text())
    if variant == "hub":
        meta = hub_variant(meta, "portability-bench/portability", "v0.1.0")
    jsonld = tmp_path / "croissant.json"
    jsonld.write_text(json.dumps(meta))
    dataset = mlc.Dataset(jsonld=jsonld)  # raises on any error
    assert dataset.metadata.ctx.issues.warnings == set()
    assert {record_set.name for record_set in dataset.metadata.record_sets} == set(TABLES)
    # the context check only logs, so read what the CLI prints as well
    cli = Path(sys.executable).with_name("mlcroissant")
    validate = subprocess.run(
        [str(cli), "validate", "--jsonld", str(jsonld)], capture_output=True, text=True, check=False
    )
    output = validate.stdout + validate.stderr
    assert validate.returncode == 0, output
    assert "Done." in output
    assert not re.search(r"^[WE]\d{4}|warning|error", output, flags=re.MULTILINE | re.IGNORECASE), output


def test_release_facts_and_field_descriptions(data_dir: Path) -> None:
    meta = json.loads((data_dir / "croissant.json").read_text())
    assert meta["conformsTo"] == CROISSANT_VERSION and meta["version"] == "0.1.0"
    assert meta["datePublished"] == "2026-11-23"  # the day the example run finished
    assert meta["license"] == "https://www.apache.org/licenses/LICENSE-2.0"
    assert "The Grand Illusion" in meta["citeAs"] and "Mince" in meta["citeAs"]
    card = (REPO_ROOT / "DATASET_CARD.md").read_text()
    assert CITATION in card, "citeAs differs from the card's BibTeX block"
    for record_set in meta["recordSet"]:
        contract = TABLES[record_set["name"]]
        for field in record_set["field"]:
            meaning = contract.field(field["name"]).metadata[b"description"].decode()
            assert meaning and field["description"].startswith(meaning)
    results = next(r for r in meta["recordSet"] if r["name"] == "results")
    latencies = next(f for f in results["field"] if f["name"] == "op_latencies_ms")
    assert (latencies["dataType"], latencies["repeated"]) == ("sc:Float", True)


def test_build_is_stable_and_date_follows_the_runs(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    write_example_dataset(folder)
    first = (folder / "croissant.json").read_bytes()
    write_example_dataset(folder)
    assert (folder / "croissant.json").read_bytes() == first  # `dvc repro` stays a no-op
    later = {
        **example_rows()["runs"][0],
        "run_id": "torch-cpu-eager-2",
        "finished_at": pd.Timestamp("2027-01-02T03:04:05Z"),
    }
    write_table("runs", pd.DataFrame([later]), folder / "runs" / "portability" / "torch-cpu-eager-2.parquet")
    assert croissant_metadata(folder, "0.1.0", PARAMS)["datePublished"] == "2027-01-02"
    pinned = {**PARAMS, "date_published": "2027-02-01"}
    assert croissant_metadata(folder, "0.1.0", pinned)["datePublished"] == "2027-02-01"


def test_columns_missing_from_older_shards_are_left_out_and_named(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    write_example_dataset(folder)
    # a shard written before schema version 2 added these columns (as the study's imports are)
    older = pq.read_table(files_of(folder, "results")[0])
    added = ["execution", "graph_breaks", "confirmation", "failure_subcategory"]
    older = older.drop_columns(added).replace_schema_metadata({b"table": b"results", b"schema_version": b"1"})
    pq.write_table(
        older.set_column(0, "run_id", pa.array(["torch-cpu-eager-0"] * older.num_rows)),
        folder / "results" / "portability" / "torch-cpu-eager-0.parquet",
    )
    meta = croissant_metadata(folder, "0.1.0", PARAMS)
    results = next(r for r in meta["recordSet"] if r["name"] == "results")
    assert [f["name"] for f in results["field"]] == [n for n in TABLES["results"].names if n not in added]
    assert f"Not listed here: {', '.join(added)} (added" in results["description"]
    (folder / "croissant.json").write_text(json.dumps(meta))
    rows = _croissant_rows(folder / "croissant.json", "results", limit=10)
    assert [row["run_id"] for row in rows] == ["torch-cpu-eager-0"] * 2 + ["torch-cpu-eager-1"] * 2


def test_hub_variant_reads_the_release_from_the_hub_repo(data_dir: Path) -> None:
    from mlcroissant._src.operation_graph.operations.download import extract_git_info

    local = json.loads((data_dir / "croissant.json").read_text())
    hub = hub_variant(local, "ns/portability", "v0.2.0")
    assert is_local(local) and not is_local(hub)
    repo, *file_sets = hub["distribution"]
    assert extract_git_info(repo["contentUrl"]) == (
        "https://huggingface.co/datasets/ns/portability",
        "refs/tags/v0.2.0",
    )
    assert [entry["containedIn"] for entry in file_sets] == [{"@id": repo["@id"]}] * len(TABLES)
    without_container = [{k: v for k, v in entry.items() if k != "containedIn"} for entry in file_sets]
    assert without_container == local["distribution"]
    assert hub["recordSet"] == local["recordSet"] and hub["datePublished"] == local["datePublished"]
    built = croissant_metadata(data_dir, "0.1.0", PARAMS, variant="hub", revision="v0.1.0")
    assert built["distribution"][0]["contentUrl"] == (
        "https://huggingface.co/datasets/portability-bench/portability/tree/refs%2Ftags%2Fv0.1.0"
    )


def test_repository_croissant_reads_offline(no_network: None) -> None:
    jsonld = REPO_ROOT / "data" / "croissant.json"
    if not jsonld.exists():
        pytest.skip("data/croissant.json not built yet (dvc repro)")
    meta = json.loads(jsonld.read_text())
    if not is_local(meta):
        pytest.skip(
            "data/croissant.json was built by older code (its files are in a Hub FileObject); "
            "the next `dvc repro` writes the local variant"
        )
    rows = _croissant_rows(jsonld, "published")
    assert rows and rows == _pyarrow_rows(REPO_ROOT / "data", "published", list(rows[0]))


def test_data_limitations_describe_the_folders_data(tmp_path: Path) -> None:
    """rai:dataLimitations is written from the tables: an xla run is named as not a TPU, its version
    beside the CPU's, and a run that measured other work on its cores is called contended."""
    from portability_data.dataset.limitations import data_limitations

    folder = tmp_path / "data"
    write_example_dataset(folder)
    before = data_limitations(folder, 1.5)
    assert "not a TPU" not in before and "no run of ours measured other work" in before
    xla = {
        **example_rows()["runs"][0],
        "run_id": "torch-xla-compiled-1",
        "device": "xla",
        "device_model": "XLA CPU (PJRT)",
        "framework_version": "2.9.0+cu128",
        "mode": "compiled",
        "host_load_max": 7.9,
        "host_other_cpu_max": 1.61,
    }
    write_table("runs", pd.DataFrame([xla]), folder / "runs" / "portability" / "torch-xla-compiled-1.parquet")
    after = data_limitations(folder, 1.5)
    assert "the xla device is torch_xla on XLA's CPU backend (PJRT), not a TPU" in after
    assert "torch xla 2.9.0+cu128" in after
    assert "1 of our 2 runs (curated and census) measured other work" in after
    assert "torch xla compiled 1 of 1" in after
    meta = croissant_metadata(folder, "0.1.0", PARAMS)
    assert meta["rai:dataLimitations"] == data_limitations(folder, 1.5)
    assert "Small sample of functions" not in meta["rai:dataLimitations"]  # the 2023-era sentence


def test_data_limitations_count_every_pair_that_ran_with_no_oracle(tmp_path: Path) -> None:
    """The census pairs that ran through with nothing comparing their values: `ran` (issue 48's
    status for exactly that) and a host fallback without an oracle, not a judged `works` pair nor
    one that failed."""
    from portability_data.dataset.folder import CONFIG_FILES
    from portability_data.dataset.limitations import data_limitations

    folder = tmp_path / "data"
    write_example_dataset(folder)
    base = example_rows()["support_matrix"][0]
    rows = [
        {
            **base,
            "entry": entry,
            "case_id": f"torch.census.opinfo.{entry}",
            "status": status,
            "oracle": oracle,
        }
        for entry, status, oracle in (
            ("argsort", "works", "reference"),
            ("sort", "ran", "none"),
            ("nonzero", "host_fallback", "none"),
            ("unique", "fails", "none"),
        )
    ]
    path = folder / CONFIG_FILES["support_matrix"].split("/")[0] / "support_matrix.parquet"
    write_table("support_matrix", pd.DataFrame(rows), path)
    assert "of which 2 pairs ran through with no oracle" in data_limitations(folder, 1.5)
