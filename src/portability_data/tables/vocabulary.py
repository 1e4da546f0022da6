"""The tables' vocabularies: the values a column may hold (frameworks, devices, outcomes, statuses),
which the table records check and the runner, pipeline and report read. `contracts` re-exports
them, beside the subtest outcome sets it keeps."""

from __future__ import annotations

from portability_data.tables.declaration import STRING, Column

FRAMEWORKS = ("torch", "tensorflow", "jax")
# xla: PyTorch on torch_xla's PJRT device other than a TPU (XLA CPU here: the XLA layer without a
# TPU, issue 27); tpu: a TPU (torch_xla on TPU, jax, TensorFlow). The tables' vocabulary of the
# device paths the runner registers (runner/devices/: one module each; a test keeps both equal).
# Then the export and edge paths (issues 51-53), each run on the host CPU by its own runtime.
DEVICES: tuple[str, ...] = ("cpu", "gpu", "tpu", "mps", "xla", "onnxruntime", "openvino", "litert")
DEVICES += ("litert_flex", "executorch", "executorch_xnnpack", "iree", "iree_torch_mlir")
# openvino with float32 inference pinned (its CPU plugin runs float32 in bf16 by default on a bf16 CPU)
DEVICES += ("openvino_f32",)
COMPILER_DOC = (
    "compiled mode's compiler: inductor, openxla (torch.compile's backends), xla (jax.jit, "
    "tf.function jit_compile); null in eager mode, and in rows before schema 10, where it is the "
    "device path's own (runner.devices.compiler_of; `portability devices` lists them)"
)
RUNTIME_DOC = (
    "the runtime that executed the exported program where it is not the framework's own (e.g. "
    "onnxruntime, litert, executorch, iree); null: the framework's own runtime"
)
MODES = ("eager", "compiled")
API_KINDS = ("function", "builtin", "class", "method")
# api.alias: how a name is its canonical name's (pipeline/api_aliases.py); null: it is the canonical name
API_ALIASES = ("same_object", "documented")
# host_fallback: the subtest passed, but some op of its function under test ran on the host, not on
# the device under test (torch_xla's executed fallback counters), or an output came back on the host;
# on an export or edge path: some op ran outside the target runtime's own kernels (OpenVINO's ops left
# to PyTorch, Flex ops of a TFLite model, ops XNNPACK did not take in ExecuTorch).
SUBTEST_OUTCOMES = (
    "passed", "failed", "skipped", "error", "timeout", "crashed", "memory", "unknown", "host_fallback",
)  # fmt: skip
OUTCOME_DOC = ", ".join(SUBTEST_OUTCOMES) + (
    "; skipped with error_type NotRerun: a later repeat of a subtest that hit a run limit, not run again"
)
FAILURE_CATEGORIES = (
    "type_failure",
    "not_implemented",
    "timeout",
    "memory",
    "float_precision",
    "harness",
    "other",
)
FUNCTION_OUTCOMES = (
    "success",
    "partial_failure",
    "complete_failure",
    "unknown",
    "unavailable",
    "not_compiled",
    "host_fallback",  # no subtest failed, some ran ops on the host: runs, but not on the device
)
SAMPLE_STATUSES = ("kept", "replaced", "replacement", "overlap")
REPLACEMENT_REASONS = ("no_test", "error_handling_only", "legacy_version", "unsuitable")
CASE_STATUSES = ("active", "removed", "unsuitable")
# curated: a case file written here; the census sources: PyTorch's OpInfo, ModuleInfo and
# OptimizerInfo databases, JAX's primitive harnesses, jax.numpy against NumPy; nn: the NN ops on
# PyTorch's samples against torch's CPU result (cases/nn_ops.yml, issue 60).
CASE_ORIGINS = ("curated", "opinfo", "module", "optimizer", "harnesses", "numpy", "tnp", "mapped", "nn")
# What a run runs: the curated case files, or the census manifests (cases/<framework>/census/).
SUITES = ("curated", "census")


def is_census_case(case_id: str) -> bool:
    """Census case ids are <framework>.census.<origin>.<entry> (runner/census_rows.py)."""
    parts = str(case_id).split(".", 3)
    return len(parts) == 4 and parts[1] == "census"


RUN_STATUSES = ("running", "complete", "partial")
# How a subtest ran (results.execution): eager; compiled (the function under test went through the
# compiler whole: torch.compile fullgraph, jax.jit, tf.function(jit_compile=True)); graph_breaks
# (torch.compile split it, count in graph_breaks); eager_fallback (torch.compile made no graph and
# ran it eagerly); not_routed (compiled mode, but the timed code did not go through the compiler).
EXECUTIONS = ("eager", "compiled", "graph_breaks", "eager_fallback", "not_routed")
# results.confirmation: a failing subtest re-run alone in a fresh worker: confirmed (it failed
# again), order_dependent (it passed alone: not counted as the framework's failure), inconclusive
# (skipped or an outcome of another kind alone).
CONFIRMATIONS = ("confirmed", "order_dependent", "inconclusive")
# The study's printed numbers (table `published`) and what our aggregation of its raw data gives
# for each (table `reproduction`).
PUBLISHED_TABLES = ("per_function_latency", "outcome_counts", "stated_in_text")
PUBLISHED_QUANTITIES = (
    "latency_ms",
    "ratio",
    "success",
    "partial_failure",
    "complete_failure",
    "n_functions",
    "pct_failing",
    "pct_complete_failure",
    "n_timed_on_both",
    "pct_slower_on_device",
    "max_outcome_share_difference_pct",
)
# relation: a rounded value (equals) or a printed bound ("at most 1%").
PUBLISHED_RELATIONS = ("equals", "at_most")
PUBLISHED_UNITS = ("ms", "ratio", "functions", "%")
# Why a published value and ours differ (reproduction.reason), each backed by evidence in the data.
REPRODUCTION_REASONS = (
    "rounded_before_dividing",
    "no_failure_report",
    "harness_failure_only",
    "undetermined_test_file",
    "hand_curated_outcome",
    "not_printed",
    "not_timed_on_both",
    "name_not_matched",
    "unexplained",
)

# The column nearly every table has, alike in each.
FRAMEWORK = Column("framework", STRING, False, "torch, tensorflow or jax", isin=FRAMEWORKS)
