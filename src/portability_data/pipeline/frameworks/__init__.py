"""Each framework's readers of its own test databases, in one place: its census manifests (what the
census runs, `portability census-harvest`), its declared support (the `declared` stage) and its
NumPy namesakes (namesakes.py, the census every framework shares). The pipeline finds a framework
here, in FRAMEWORKS, and nowhere else: the census harvest and the declared stage loop over it.

To add a framework:
1. Make `frameworks/<name>/` (the name as the tables spell it, contracts.FRAMEWORKS) with its
   census.py (origin -> manifest, built with manifest.manifest_document; NumPy namesakes through
   namesakes.namesake_census) and declared.py (rows of the declared table), and a `READERS =
   Readers(...)` in its __init__.py (readers.py says what each field holds).
2. List it in FRAMEWORKS below, after the others (the declared table's rows come in this order).
3. Add its census folder to dvc.yaml's census stage, its name to params.yaml's census.frameworks and
   to cli.py's census-harvest --framework choices (the CLI imports no pipeline module to start);
   `portability census-harvest --framework <name>` writes its manifests.

Shared by the frameworks: manifest.py (the manifest document every harvester writes), namesakes.py
(NumPy's trials and the namesake loop), readers.py (what a framework provides).
"""

from __future__ import annotations

from portability_data.pipeline.frameworks.jax import READERS as JAX
from portability_data.pipeline.frameworks.readers import Readers
from portability_data.pipeline.frameworks.tensorflow import READERS as TENSORFLOW
from portability_data.pipeline.frameworks.torch import READERS as TORCH

# name (as the tables spell it) -> its readers, in the order the declared table lists them
FRAMEWORKS: dict[str, Readers] = {"torch": TORCH, "jax": JAX, "tensorflow": TENSORFLOW}
