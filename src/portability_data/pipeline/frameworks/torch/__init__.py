"""PyTorch's readers of its own test databases: census.py (OpInfo, ModuleInfo, OptimizerInfo
manifests), namesakes.py (the NumPy namesakes its OpInfo declares), entries.py, databases.py and
mps.py (what the databases and the MPS lists declare: declared.py's rows), xla.py (torch_xla's own
test lists, `portability torch-xla import`).
"""

from __future__ import annotations

from portability_data.pipeline.frameworks.readers import Readers
from portability_data.pipeline.frameworks.torch.census import census_manifests, summary_lines
from portability_data.pipeline.frameworks.torch.declared import torch_declared_rows

READERS = Readers(
    module="torch",
    census_manifests=census_manifests,
    summary_lines=summary_lines,
    declared_rows=torch_declared_rows,
    required=True,
)
