"""croissant.json: MLCommons Croissant 1.0 metadata for the dataset folder, one record set per
config, fields typed and described from the Arrow contracts, responsible-AI fields from the card.

Two variants of one document, differing only in where the files are:
- local (written by `portability dataset build` into data/): every FileSet is relative to the
  folder holding croissant.json, so a Croissant client reads records from a checkout offline;
- hub (written by `portability dataset publish` into the Hub repo): the FileSets are contained in
  the Hub's git repository at the released tag, so a client with only the URL can fetch them.
"""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from portability_data.dataset.folder import CONFIG_FILES, HUB_REPO_ID, TABLE_PURPOSE, files_of
from portability_data.dataset.limitations import data_limitations
from portability_data.readings.quiet import quiet_load_max
from portability_data.tables.contracts import TABLES, arrow_schema

CROISSANT_VERSION = "http://mlcommons.org/croissant/1.0"
# The standard JSON-LD @context of Croissant 1.0, as mlcroissant 1.1 defines it
# (mlcroissant._src.core.rdf.make_context); anything else makes the validator warn.
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

# The 2023 study the dataset extends, as BibTeX (Croissant's recommended citeAs form); the same
# block as in DATASET_CARD.md (a test keeps them equal).
CITATION = """@article{mince2023grand,
  title   = {The Grand Illusion: The Myth of Software Portability and Implications for ML Progress},
  author  = {Mince, Fraser and Dinh, Dzung and Kgomo, Jonas and Thompson, Neil and Hooker, Sara},
  journal = {arXiv preprint arXiv:2309.07181},
  year    = {2023}
}"""

HUB_FILE_OBJECT_ID = "hub-repo"

Variant = Literal["local", "hub"]


def _data_type(type_: pa.DataType) -> str:
    """The Croissant dataType of an Arrow type (of a list's items: the field is then repeated)."""
    if pa.types.is_list(type_) or pa.types.is_large_list(type_):
        return _data_type(type_.value_type)
    if pa.types.is_integer(type_):
        return "sc:Integer"
    if pa.types.is_floating(type_):
        return "sc:Float"
    if pa.types.is_boolean(type_):
        return "sc:Boolean"
    if pa.types.is_timestamp(type_):
        return "sc:DateTime"
    if pa.types.is_string(type_) or pa.types.is_large_string(type_):
        return "sc:Text"
    raise ValueError(f"no Croissant dataType for Arrow type {type_}; add one to croissant._data_type")


def date_published(data_dir: Path, dataset_params: dict[str, Any]) -> str | None:
    """The release date: params dataset.date_published if set, else the day the newest run in
    runs/ finished (UTC). Derived from the data, not the clock, so rebuilding unchanged data
    gives the same file (`dvc repro` stays a no-op); None when no run has finished."""
    if dataset_params.get("date_published"):
        return str(dataset_params["date_published"])
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    newest: datetime.datetime | None = None
    for path in files_of(data_dir, "runs"):
        finished = pc.max(pq.read_table(path, columns=["finished_at"])["finished_at"]).as_py()
        if finished is not None and (newest is None or finished > newest):
            newest = finished
    return None if newest is None else newest.astimezone(datetime.UTC).date().isoformat()


def columns_in_every_file(data_dir: Path, table: str) -> list[str]:
    """The contract's columns that every file of the table holds, in contract order. A Croissant
    1.0 field must exist in every file of its FileSet (mlcroissant fails on the first file
    without it), while shards written before a column was added (contracts.ADDED_SINCE) lack
    it; those columns are left out of the record set rather than make it unreadable."""
    import pyarrow.parquet as pq

    present = set(arrow_schema(table).names)
    for path in files_of(data_dir, table):
        present &= set(pq.read_schema(path).names)
    return [name for name in arrow_schema(table).names if name in present]


def _fields(table: str, columns: list[str]) -> list[dict[str, Any]]:
    """One Croissant field per column: the contract's description, dataType and column."""
    fields = []
    for name in columns:
        column = arrow_schema(table).field(name)
        description = (column.metadata or {}).get(b"description", b"").decode()
        if pa.types.is_timestamp(column.type):
            description += f" ({column.type.tz or 'naive'} timestamp, {column.type.unit} precision)"
        entry: dict[str, Any] = {
            "@type": "cr:Field",
            "@id": f"{table}/{name}",
            "name": name,
            "description": description,
            "dataType": _data_type(column.type),
            "source": {"fileSet": {"@id": f"{table}-files"}, "extract": {"column": name}},
        }
        if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
            entry["repeated"] = True
        fields.append(entry)
    return fields


def _record_set(data_dir: Path, table: str) -> dict[str, Any]:
    """The table's record set; its description names any contract column left out."""
    columns = columns_in_every_file(data_dir, table)
    left_out = [name for name in arrow_schema(table).names if name not in columns]
    description = TABLE_PURPOSE[table]
    if left_out:
        description += (
            f" Not listed here: {', '.join(left_out)} (added to the contract after some files were "
            "written, so not in every file); `datasets` and `portability_data.load_dataset` read them, "
            "null for the older files."
        )
    return {
        "@type": "cr:RecordSet",
        "@id": table,
        "name": table,
        "description": description,
        "field": _fields(table, columns),
    }


def croissant_metadata(
    data_dir: Path,
    version: str,
    dataset_params: dict[str, Any],
    variant: Variant = "local",
    revision: str | None = None,
) -> dict[str, Any]:
    """The Croissant document for the folder: one FileSet and one record set per config, the
    FileSets local to the folder (variant local) or in the Hub repo at `revision` (hub)."""
    namespace = dataset_params.get("namespace", HUB_REPO_ID.split("/")[0])
    repo_id = f"{namespace}/{HUB_REPO_ID.split('/')[1]}"
    distribution = [
        {
            "@type": "cr:FileSet",
            "@id": f"{table}-files",
            "name": f"{table}-files",
            "description": f"Parquet files of the {table} table, relative to the dataset folder.",
            "encodingFormat": "application/x-parquet",
            "includes": CONFIG_FILES[table],
        }
        for table in TABLES
    ]
    record_sets = [_record_set(Path(data_dir), table) for table in TABLES]
    meta: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CROISSANT_VERSION,
        "name": "portability",
        "description": (
            "Which functions of PyTorch, TensorFlow and JAX run, fail or slow down on which hardware and in "
            "which execution mode: curated function tests run per device, with the 2023 study's raw results "
            "imported beside them."
        ),
        "license": "https://www.apache.org/licenses/LICENSE-2.0",
        "url": f"https://huggingface.co/datasets/{repo_id}",
        "version": version,
        "citeAs": CITATION,
        "isLiveDataset": True,
        "creator": {"@type": "sc:Organization", "name": "portability contributors"},
        "keywords": ["benchmark", "portability", "pytorch", "tensorflow", "jax", "hardware"],
        "rai:dataCollection": (
            "Cases are pytest tests written by contributors, run by the portability runner on one device "
            "per run; the study's raw timing and failure files are imported unchanged in meaning "
            "(source mince2023)."
        ),
        "rai:dataCollectionType": ["Experiments", "Software Collection"],
        "rai:dataLimitations": data_limitations(Path(data_dir), quiet_load_max()),
        "rai:dataBiases": (
            "Function frequencies come from a corpus of public code that over-represents popular packages; "
            "bare-name counts (the study's) conflate homonyms, which resolved counts correct."
        ),
        "rai:personalSensitiveInformation": "None: the data describe software and hardware, not people.",
        "rai:dataUseCases": (
            "Measuring framework portability across hardware and versions; choosing hardware."
        ),
        "rai:dataSocialImpact": "Makes the cost of hardware lock-in visible to researchers and vendors.",
        "rai:dataReleaseMaintenancePlan": "Versioned releases (semver, git tags); shards are append-only.",
        "distribution": distribution,
        "recordSet": record_sets,
    }
    published = date_published(Path(data_dir), dataset_params)
    if published is not None:
        meta["datePublished"] = published
    if variant == "hub":
        return hub_variant(meta, repo_id, revision)
    if variant != "local":
        raise ValueError(f"unknown Croissant variant {variant!r}; known: local, hub")
    return meta


def hub_variant(local_meta: dict[str, Any], repo_id: str, revision: str | None = None) -> dict[str, Any]:
    """The document as the Hub copy describes itself: the same record sets, with every FileSet
    contained in the Hub's git repository (at tag `revision`, else its main branch). Made from
    the built local document so that the published metadata is exactly what the pipeline wrote."""
    meta = copy.deepcopy(local_meta)
    content_url = f"https://huggingface.co/datasets/{repo_id}"
    if revision:
        content_url += f"/tree/refs%2Ftags%2F{revision}"  # the form mlcroissant checks out
    repo = {
        "@type": "cr:FileObject",
        "@id": HUB_FILE_OBJECT_ID,
        "name": HUB_FILE_OBJECT_ID,
        "description": f"The dataset repository {repo_id} on the Hugging Face Hub"
        + (f", at tag {revision}." if revision else "."),
        "contentUrl": content_url,
        "encodingFormat": "git+https",
    }
    file_sets = [
        {**entry, "containedIn": {"@id": HUB_FILE_OBJECT_ID}}
        for entry in meta["distribution"]
        if entry.get("@type") == "cr:FileSet"
    ]
    meta["distribution"] = [repo, *file_sets]
    meta["url"] = f"https://huggingface.co/datasets/{repo_id}"
    return meta


def is_local(meta: dict[str, Any]) -> bool:
    """Whether every file of the document is read from the folder holding it (no download)."""
    return all(
        entry.get("@type") == "cr:FileSet" and "containedIn" not in entry
        for entry in meta.get("distribution", [])
    )
