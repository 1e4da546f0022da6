"""croissant.json: MLCommons Croissant 1.0 metadata for the dataset folder, one record set per
config, fields typed from the Arrow contracts, responsible-AI fields from the card's facts."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa

from portability_data.contracts import TABLES, arrow_schema
from portability_data.dataset import CONFIG_FILES

CONTEXT = {
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
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

CITATION = (
    "Mince, F., Dinh, D., Kgomo, J., Thompson, N., Hooker, S. (2023). The Grand Illusion: The Myth of "
    "Software Portability and Implications for ML Progress. arXiv:2309.07181."
)


def _data_type(type_: pa.DataType) -> str:
    if pa.types.is_list(type_):
        return _data_type(type_.value_type)
    if pa.types.is_integer(type_):
        return "sc:Integer"
    if pa.types.is_floating(type_):
        return "sc:Float"
    if pa.types.is_boolean(type_):
        return "sc:Boolean"
    if pa.types.is_timestamp(type_):
        return "sc:DateTime"
    return "sc:Text"


def croissant_metadata(data_dir: Path, version: str, dataset_params: dict[str, Any]) -> dict[str, Any]:
    """The Croissant document for the folder: distribution = one FileSet per config."""
    namespace = dataset_params.get("namespace", "portability-bench")
    distribution: list[dict[str, Any]] = [
        {
            "@type": "cr:FileObject",
            "@id": "repo",
            "name": "repo",
            "description": "The dataset repository on the Hugging Face Hub.",
            "contentUrl": f"https://huggingface.co/datasets/{namespace}/portability/tree/v{version}",
            "encodingFormat": "git+https",
            "sha256": hashlib.sha256(f"{namespace}/portability@{version}".encode()).hexdigest(),
        }
    ]
    record_sets = []
    for table in TABLES:
        distribution.append(
            {
                "@type": "cr:FileSet",
                "@id": f"{table}-files",
                "name": f"{table}-files",
                "description": f"Parquet files of the {table} table.",
                "containedIn": {"@id": "repo"},
                "encodingFormat": "application/x-parquet",
                "includes": CONFIG_FILES[table],
            }
        )
        fields = []
        for field in arrow_schema(table):
            entry: dict[str, Any] = {
                "@type": "cr:Field",
                "@id": f"{table}/{field.name}",
                "name": field.name,
                "description": (field.metadata or {}).get(b"description", b"").decode(),
                "dataType": _data_type(field.type),
                "source": {"fileSet": {"@id": f"{table}-files"}, "extract": {"column": field.name}},
            }
            if pa.types.is_list(field.type):
                entry["repeated"] = True
            fields.append(entry)
        record_sets.append(
            {
                "@type": "cr:RecordSet",
                "@id": table,
                "name": table,
                "description": f"The {table} table (one config of the dataset).",
                "field": fields,
            }
        )
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": "portability",
        "description": (
            "Which functions of PyTorch, TensorFlow and JAX run, fail or slow down on which hardware and in "
            "which execution mode: curated function tests run per device, with the 2023 study's raw results "
            "imported beside them."
        ),
        "license": "https://www.apache.org/licenses/LICENSE-2.0",
        "url": f"https://huggingface.co/datasets/{namespace}/portability",
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
        "rai:dataLimitations": (
            "Small sample of functions (about 63 per framework); CPU results from one machine type unless "
            "accelerator shards are added; the study's JAX TPU outcomes are unknown; latencies include "
            "framework overhead and depend on the host."
        ),
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
