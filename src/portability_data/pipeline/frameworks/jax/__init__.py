"""JAX's readers of its own test databases: census.py (its primitive harnesses; jax.numpy against
NumPy, through the shared namesake census) and declared.py (the harnesses' `jax_unimplemented`
limitations as declared rows).
"""

from __future__ import annotations

from portability_data.pipeline.frameworks.jax.census import jax_manifests, summary_lines
from portability_data.pipeline.frameworks.jax.declared import jax_declared_rows
from portability_data.pipeline.frameworks.readers import Readers

READERS = Readers(
    module="jax",
    census_manifests=jax_manifests,
    summary_lines=summary_lines,
    declared_rows=jax_declared_rows,
)
