"""TensorFlow's readers: it ships no test database of sample inputs, so census.py holds
tf.experimental.numpy against NumPy (the shared namesake census) and the reviewed mapping
(cases/tensorflow/census/mapping.yml) on the framework-neutral inputs; declared.py reads its kernel
registry per census entry.
"""

from __future__ import annotations

from portability_data.pipeline.frameworks.readers import Readers
from portability_data.pipeline.frameworks.tensorflow.census import summary_lines, tf_manifests
from portability_data.pipeline.frameworks.tensorflow.declared import declared_rows

READERS = Readers(
    module="tensorflow",
    census_manifests=tf_manifests,
    summary_lines=summary_lines,
    declared_rows=declared_rows,
)
