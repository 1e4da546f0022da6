"""The reviewed reference quirks (runner/rules/reference_quirks.yaml, issue 48): each shown on real
inputs against the reference the installed wheel's OpInfo really names, every listed entry a census
entry, a malformed file refused by name, and the support matrix keeping such deviations apart."""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.fft
import torch
import yaml
from torch.testing._internal.common_methods_invocations import op_db

from portability_data.pipeline.reference_quirks import ReferenceQuirksError, parse_quirks, reference_quirks
from portability_data.pipeline.support_matrix import support_matrix

OPINFO = {op.name: op for op in op_db if op.variant_test_name == ""}


def test_var_and_std_differ_from_their_reference_by_bessels_correction() -> None:
    for name in ("var", "std"):  # what the wheel compares with: NumPy's, population by default
        reference = OPINFO[name].ref
        assert (reference.__module__, reference.__name__) == ("numpy", name)
        assert inspect.signature(reference).parameters["ddof"].default == 0
    x = torch.randn(5, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    n = x.numel()
    assert torch.var(x).item() / np.var(x.numpy()) == pytest.approx(n / (n - 1), rel=1e-12)
    assert torch.std(x).item() / np.std(x.numpy()) == pytest.approx(math.sqrt(n / (n - 1)), rel=1e-12)
    assert torch.var(x, correction=0).item() == pytest.approx(np.var(x.numpy()), rel=1e-12)  # same, asked


def test_ihfft2_transforms_two_axes_where_its_reference_transforms_all() -> None:
    assert OPINFO["fft.ihfft2"].ref is scipy.fft.ihfftn
    x = torch.randn(3, 4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    ours = torch.fft.ihfft2(x).numpy()
    assert np.allclose(ours, scipy.fft.ihfftn(x.numpy(), axes=(-2, -1)))
    reference = scipy.fft.ihfftn(x.numpy())
    assert ours.shape != reference.shape or not np.allclose(ours, reference)


def test_every_quirk_names_a_census_entry(repo_root: Path) -> None:
    manifest = yaml.safe_load((repo_root / "cases" / "torch" / "census" / "opinfo.yaml").read_text())
    entries = {entry["entry"] for entry in manifest["entries"]}
    quirks = reference_quirks()
    assert quirks and {entry for (_, origin, entry) in quirks if origin == "opinfo"} <= entries


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reason": ""}, r"quirks\[0\]: field reason missing or empty"),
        ({"framework": "mxnet"}, r"quirks\[0\]: field framework: 'mxnet'"),
        ({"entries": []}, r"quirks\[0\]: field entries missing or empty"),
    ],
)
def test_a_malformed_quirk_is_refused_naming_file_and_field(change: dict, message: str) -> None:
    quirk = {"framework": "torch", "origin": "opinfo", "entries": ["var"], "reference": "r", "function": "f",
             "reason": "why", "source": "docs"}  # fmt: skip
    with pytest.raises(ReferenceQuirksError, match=message):
        parse_quirks({"schema_version": 1, "quirks": [{**quirk, **change}]}, "quirks.yaml")
    with pytest.raises(ReferenceQuirksError, match="entry 'var' is listed twice"):
        parse_quirks({"schema_version": 1, "quirks": [quirk, quirk]}, "quirks.yaml")


def test_a_deviation_of_a_quirky_entry_is_the_references_not_the_functions() -> None:
    from tests.conftest import example_rows

    base = example_rows()["results"][0]
    rows = [
        {
            **base, "framework": "torch", "device": device, "framework_version": "2.13.0+cpu",
            "case_id": f"torch.census.opinfo.{entry}", "function": f"torch.{entry}",
            "test_id": f"cases/torch/census/test_opinfo.py::test_entry[{entry}-float64]",
            "subtest": f"test_entry[{entry}-float64]", "outcome": "failed", "confirmation": "confirmed",
            "failure_category": "float_precision", "error_type": "ValuesOffOracle",
            "error_message": "1 of 1 values off the oracle", "samples": 3, "samples_failed": 1,
        }
        for entry in ("var", "cos") for device in ("cpu", "xla")
    ]  # fmt: skip
    matrix = support_matrix(pd.DataFrame(rows), None, None)
    status = dict(zip(matrix["entry"] + "/" + matrix["device"], matrix["status"], strict=True))
    assert status == {"var/cpu": "reference_quirk", "var/xla": "reference_quirk",
                      "cos/cpu": "deviates", "cos/xla": "deviates"}  # fmt: skip
