"""Result dtypes beside NumPy's (runner/promotion.py): what the census rows of NumPy namesakes say
of dtype promotion, and which census cases re-measure when the module changes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from portability_data.runner.oracle import NO_ORACLE
from portability_data.runner.promotion import DtypeLedger, signature

REPO_ROOT = Path(__file__).resolve().parents[1]


def recorded(ledger: DtypeLedger) -> dict:
    found: dict = {}
    ledger.record(lambda name, value: found.__setitem__(name, value))
    return found


def test_a_signature_names_every_output_in_the_oracles_order() -> None:
    values, indices = torch.sort(torch.tensor([3.0, 1.0]))
    assert signature((values, indices)) == "float32,int64"
    assert signature(np.float64(1.0)) == "float64"  # a NumPy scalar result
    assert signature([torch.ones(1, dtype=torch.bfloat16), None]) == "bfloat16,none"


def test_the_ledger_counts_samples_whose_dtypes_part_from_numpys() -> None:
    ledger = DtypeLedger()
    ints = np.arange(4, dtype=np.int8)
    ledger.note(torch.sqrt(torch.from_numpy(ints)), np.sqrt(ints))  # float32 vs NumPy's float16
    ledger.note(torch.sqrt(torch.from_numpy(ints)), np.sqrt(ints))
    ledger.note(torch.zeros(0), np.zeros(0))  # an empty input returns float32 in torch, float64 in NumPy
    ledger.note(torch.ones(1), NO_ORACLE)  # nothing to hold it to: its dtype is kept, not judged
    assert recorded(ledger) == {
        "result_dtype": "float32",
        "oracle_dtype": "float16 | float64",
        "dtype_mismatches": 3,
    }


def test_without_a_returned_sample_nothing_is_claimed() -> None:
    assert recorded(DtypeLedger()) == {"result_dtype": None, "oracle_dtype": None, "dtype_mismatches": None}
    only_refused = DtypeLedger()
    only_refused.note(torch.ones(1), NO_ORACLE)
    assert recorded(only_refused) == {
        "result_dtype": "float32",
        "oracle_dtype": None,
        "dtype_mismatches": None,
    }


def test_a_changed_generator_or_ledger_re_measures_the_census_cases_that_import_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shared generator makes the inputs of the NumPy namesakes and the TensorFlow mapping, the
    ledger what their rows say of dtypes, the device judge judges every census sample: a change to
    one is a change to the census cases that import it (their digests move, so the run stage
    re-measures them) and to no other case."""
    from portability_data.runner import provenance
    from portability_data.runner.spec import Paths

    copies = []
    for original in provenance.CENSUS_INPUT_FILES:
        copy = tmp_path / original.name
        copy.write_bytes(original.read_bytes())
        copies.append(copy)
    monkeypatch.setattr(provenance, "CENSUS_INPUT_FILES", tuple(copies))
    generator, ledger, judge, nn_samples = copies
    paths = Paths.under(REPO_ROOT)
    torch_cases = ["torch.census.numpy.sqrt", "torch.census.opinfo.add", "torch.addr"]
    tf_cases = [
        "tensorflow.census.mapped.math.sin",
        "tensorflow.census.tnp.add",
        "tensorflow.census.nn.nn.functional.relu",
    ]

    def digests() -> dict[str, str]:
        return {
            **provenance.case_digests(paths, torch_cases, "torch"),
            **provenance.case_digests(paths, tf_cases, "tensorflow"),
        }

    before = digests()
    assert set(before) == {*torch_cases, *tf_cases}
    ledger.write_text(ledger.read_text() + "\n# changed\n")
    after_ledger = digests()
    assert {c for c in before if before[c] != after_ledger[c]} == {
        "torch.census.numpy.sqrt",
        "tensorflow.census.tnp.add",
    }
    generator.write_text(generator.read_text() + "\n# changed\n")
    after_generator = digests()
    assert {c for c in before if after_ledger[c] != after_generator[c]} == {
        "torch.census.numpy.sqrt",
        "tensorflow.census.mapped.math.sin",
        "tensorflow.census.tnp.add",
    }
    # the device judge (runner/device_oracle.py) judges every census module's samples: a change to it
    # re-measures every census case, and no curated one
    judge.write_text(judge.read_text() + "\n# changed\n")
    after_judge = digests()
    assert {c for c in before if after_generator[c] != after_judge[c]} == {*torch_cases, *tf_cases} - {
        "torch.addr"
    }
    # the NN census's sample builder (runner/nn_samples.py) makes the NN modules' inputs only
    nn_samples.write_text(nn_samples.read_text() + "\n# changed\n")
    after_nn = digests()
    assert {c for c in before if after_judge[c] != after_nn[c]} == {"tensorflow.census.nn.nn.functional.relu"}


def test_the_report_counts_pairs_off_numpys_dtype_and_reads_them_as_promotion_rules() -> None:
    """Per setting, the namesake pairs that recorded dtypes and those off NumPy's; the rules they
    follow (input dtype -> result dtype vs NumPy's), most functions first; rows measured before
    schema 8 (no dtypes) are neither."""
    import pandas as pd

    from portability_data.report.census import promotion_patterns, result_dtypes_off_numpy

    def pair(framework: str, entry: str, dtype: str, returned, numpy, off) -> dict:
        return {
            "framework": framework,
            "device": "cpu",
            "mode": "eager",
            "function": f"{framework}.{entry}",
            "entry": entry,
            "dtype": dtype,
            "result_dtype": returned,
            "oracle_dtype": numpy,
            "dtype_mismatches": off,
        }

    matrix = pd.DataFrame(
        [
            pair("torch", "sqrt", "int8", "float32", "float16", 7),
            pair("torch", "sin", "int8", "float32", "float16", 7),
            pair("torch", "sin", "int64", "float32", "float64", 7),
            pair("torch", "add", "int8", "int8", "int8", 0),
            pair("torch", "cos", "int8", None, None, None),
            pair("jax", "sin", "int8", "float16", "float16", 0),
        ]
    )
    counts = result_dtypes_off_numpy(matrix).set_index("framework")
    assert counts.loc["torch", ["pairs_recorded", "pairs_off_numpy", "functions_off_numpy"]].tolist() == [
        4,
        3,
        2,
    ]
    assert counts.loc["jax", ["pairs_recorded", "pairs_off_numpy", "functions_off_numpy"]].tolist() == [
        1,
        0,
        0,
    ]
    rules = promotion_patterns(matrix)
    assert rules[["input_dtype", "result_dtype", "numpy_dtype", "functions", "examples"]].values.tolist() == [
        ["int8", "float32", "float16", 2, "sin, sqrt"],
        ["int64", "float32", "float64", 1, "sin"],
    ]
