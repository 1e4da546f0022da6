"""What the installed PyTorch wheel declares per device type and dtype, as rows of the `declared`
table: its OpInfo, ModuleInfo and OptimizerInfo databases (databases.py) and the MPS lists
(mps.py); pipeline/declared.py's docstring has the choices.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

from portability_data.pipeline.api_names import public_names
from portability_data.pipeline.frameworks.readers import DeclaredError
from portability_data.pipeline.frameworks.torch.databases import (
    module_rows,
    opinfo_refs,
    opinfo_rows,
    optimizer_rows,
)
from portability_data.pipeline.frameworks.torch.mps import MPS_MODULE, mps_rows

FRAMEWORK = "torch"


def torch_declared_rows(api: pd.DataFrame) -> pd.DataFrame:
    """The declared rows of the installed torch (columns of the declared table, plain types)."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_modules import module_db
    from torch.testing._internal.common_optimizers import optim_db

    version = str(torch.__version__)
    public = public_names(api, FRAMEWORK, version, DeclaredError)
    refs = opinfo_refs(op_db, public)
    spec = importlib.util.find_spec(MPS_MODULE)
    if spec is None or spec.origin is None:
        raise DeclaredError(f"{MPS_MODULE} is not in the installed torch")
    mps_source = Path(spec.origin).read_text(encoding="utf-8")
    by_mps_key = {op.name + op.variant_test_name: ref for op, ref in zip(op_db, refs, strict=True)}
    rows = [
        *opinfo_rows(op_db, refs),
        *module_rows(module_db, public),
        *optimizer_rows(optim_db, public),
        *mps_rows(mps_source, by_mps_key, public),
    ]
    frame = pd.DataFrame(rows)
    frame.insert(0, "framework_version", version)
    frame.insert(0, "framework", FRAMEWORK)
    return frame
