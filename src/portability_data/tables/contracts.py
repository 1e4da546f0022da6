"""The table contracts as Arrow schemas: the one light module every writer needs.

It imports only pyarrow so that the runner can write shards on a bare accelerator machine
(framework + pytest + NumPy + pyarrow, see docs/ARCHITECTURE.md, "The runner"). The pandera models in
`schemas.py` add the value checks and are cross-checked against these schemas in the tests.
"""

from __future__ import annotations

import pyarrow as pa

from portability_data.tables.arrow_fields import FLOAT64, INT64, STRING, described_field, table_schema
from portability_data.tables.arrow_fields import SCHEMA_VERSION as SCHEMA_VERSION
from portability_data.tables.census_contracts import AGREEMENTS as AGREEMENTS
from portability_data.tables.census_contracts import CROSSFRAMEWORK, DTYPE_FIELDS, SUPPORT_MATRIX
from portability_data.tables.census_contracts import DECLARED as DECLARED
from portability_data.tables.census_contracts import DECLARED_ASPECTS as DECLARED_ASPECTS
from portability_data.tables.census_contracts import DECLARED_DTYPE as DECLARED_DTYPE
from portability_data.tables.census_contracts import DECLARED_KINDS as DECLARED_KINDS
from portability_data.tables.census_contracts import DECLARED_ORIGINS as DECLARED_ORIGINS
from portability_data.tables.census_contracts import DTYPE_AGREEMENTS as DTYPE_AGREEMENTS
from portability_data.tables.census_contracts import FINDINGS as FINDINGS
from portability_data.tables.census_contracts import STANDS_APART as STANDS_APART
from portability_data.tables.census_contracts import SUPPORT_STATUSES as SUPPORT_STATUSES
from portability_data.tables.census_contracts import UNMAPPED_REASONS as UNMAPPED_REASONS

# Columns added since a schema version, all nullable: a file written at an older version is read
# with these as nulls (additive evolution); any other difference is schema drift and an error.
ADDED_SINCE: dict[int, dict[str, tuple[str, ...]]] = {
    2: {
        "results": ("execution", "graph_breaks", "confirmation", "failure_subcategory"),
        "runs": (
            "cpu_flags",
            "cpu_count",
            "memory_mb",
            "build",
            "harness_digest",
            "cases_digest",
            "case_digests",
        ),
        "outcomes": ("n_order_dependent", "n_not_compiled"),
    },
    3: {"runs": ("host_load_mean", "host_load_max")},
    4: {
        "results": ("oracle", "samples", "samples_failed", "max_abs_error", "max_rel_error"),
        "cases": ("origin", "no_compiled_form"),
    },
    5: {"runs": ("jobs",), "support_matrix": ("error_message",)},
    6: {"runs": ("host_other_cpu_mean", "host_other_cpu_max")},
    7: {
        "results": ("host_fallback_ops", "host_fallback_calls", "device_compiles", "device_compiles_timed"),
        "outcomes": ("n_host_fallback",),
    },
    8: {
        "results": ("result_dtype", "oracle_dtype", "dtype_mismatches"),
        "support_matrix": ("result_dtype", "oracle_dtype", "dtype_mismatches"),
        "crossframework": ("result_dtype", "oracle_dtype", "dtype_mismatches", "dtype_agreement"),
    },
    9: {"runs": ("code_modified",)},
    10: {"results": ("compiler", "runtime"), "runs": ("compiler", "runtime")},
    11: {
        "results": ("samples_compared",),
        "support_matrix": ("samples_compared",),
        "api": ("canonical_name", "alias"),
        "frequencies": ("canonical_name",),
    },
    12: {"cases": ("canonical_name",), "support_matrix": ("canonical_name",)},
}

FRAMEWORKS = ("torch", "tensorflow", "jax")
# xla: PyTorch on torch_xla's PJRT device other than a TPU (XLA CPU here: the XLA layer without a
# TPU, issue 27); tpu: a TPU (torch_xla on TPU, jax, TensorFlow). The tables' vocabulary of the
# device paths the runner registers (runner/devices/: one module each; a test keeps both equal).
# Then the export and edge paths (issues 51-53), each run on the host CPU by its own runtime.
DEVICES: tuple[str, ...] = ("cpu", "gpu", "tpu", "mps", "xla", "onnxruntime", "openvino", "litert")
DEVICES += ("litert_flex", "executorch", "executorch_xnnpack", "iree", "iree_torch_mlir")
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
# The subtest outcomes that fail it (its function's failure, unless the failure rules put the row
# on the harness); host_fallback passed, but off the device, and is counted apart.
FAILING_OUTCOMES = frozenset({"failed", "error", "timeout", "crashed", "memory"})
# Failing outcomes where a run limit stopped the subtest (timeout_s, memory_mb). Such a subtest is
# not run again in a later repeat of the run (runner.journal): its status is failed from that one
# row (any failing repeat fails a subtest) and it can get no latency (that needs timings in every
# repeat), so running it again costs up to its limit per repeat and can change neither.
LIMIT_OUTCOMES = frozenset({"timeout", "memory"})
# the outcomes a run re-runs alone in a fresh worker before they count: every failing one but those
# a limit stopped (each would cost its limit again), and host fallbacks; results.confirmation says
# how that went
CONFIRMED_OUTCOMES = (FAILING_OUTCOMES - LIMIT_OUTCOMES) | {"host_fallback"}
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

_str, _i64, _f64 = STRING, INT64, FLOAT64
_field, _schema = described_field, table_schema


API = _schema(
    "api",
    [
        _field("framework", _str, False, "torch, tensorflow or jax"),
        _field("framework_version", _str, False, "installed version the API was read from"),
        _field("qualified_name", _str, False, "dotted public name, e.g. torch.nn.Linear"),
        _field("module", _str, False, "public module the name was found in"),
        _field("name", _str, False, "bare name (last component)"),
        _field("kind", _str, False, "function, builtin, class or method"),
        _field(
            "canonical_name",
            _str,
            True,
            "the function this name refers to, under its canonical name (the same Python object or the "
            "documented alias; pipeline/api_aliases.py gives the rule); the name itself where it has no "
            "other; null in tables written before schema 11",
        ),
        _field(
            "alias",
            _str,
            True,
            "how the name is canonical_name's: same_object or documented; null: it is the canonical name",
        ),
    ],
)

FREQUENCIES = _schema(
    "frequencies",
    [
        _field("framework", _str, False, "torch, tensorflow or jax"),
        _field("corpus", _str, False, "corpus identifier (source and its parameters)"),
        _field("qualified_name", _str, False, "API function counted"),
        _field("calls", _i64, False, "calls resolved to this qualified name through imports"),
        _field("bare_calls", _i64, False, "the study's count: bare identifier followed by '('"),
        _field("files", _i64, False, "corpus files with at least one resolved call"),
        _field("resolution", _str, False, "how calls were attributed: resolved, bare_only"),
        _field(
            "canonical_name",
            _str,
            True,
            "the function qualified_name (the name the corpus wrote) refers to (api.canonical_name); null "
            "in tables written before schema 11",
        ),
    ],
)

SAMPLES = _schema(
    "samples",
    [
        _field("sample_id", _str, False, "which sample, e.g. mince2023"),
        _field("framework", _str, False, "torch, tensorflow or jax"),
        _field("function", _str, False, "qualified name of the sampled function"),
        _field("study_name", _str, True, "the name as the study spelled it, where it differs or is known"),
        _field("bucket", _str, False, "top20 or the frequency decile 10..100"),
        _field("frequency", _i64, True, "usage count the draw was based on, where known"),
        _field("draw_order", _i64, False, "order of the draw within the sample"),
        _field("status", _str, False, "kept, replaced, replacement or overlap"),
        _field("replaced_by", _str, True, "function drawn in its place"),
        _field("reason", _str, True, "why it was replaced"),
        _field("seed", _i64, True, "random seed of the draw, where known"),
    ],
)

CASES = _schema(
    "cases",
    [
        _field("case_id", _str, False, "unique case id, <framework>.<name>"),
        _field("framework", _str, False, "torch, tensorflow or jax"),
        _field("function", _str, False, "qualified name of the function under test"),
        _field("canonical_name", _str, True, "function's canonical name (api.canonical_name), else itself"),
        _field("study_name", _str, True, "the study's spelling of the name, where it differs"),
        _field("test_file", _str, True, "test file, relative to the repository root (null: removed)"),
        _field("upstream_test", _str, True, "where the framework's own test lives (file::class::test)"),
        _field("samples", pa.list_(_str), False, "sample ids the case belongs to"),
        _field("status", _str, False, "active, removed or unsuitable"),
        _field("removed_since", _str, True, "framework version that removed the function"),
        _field("notes", _str, False, "free-text notes"),
        _field("schema_version", _i64, False, "version of the case row format"),
        _field("origin", _str, True, "curated (a case file written here) or a census source: opinfo, ..."),
        _field(
            "no_compiled_form",
            _str,
            True,
            "why the function has no compiled form (graph or session API, Python hook, file I/O); "
            "null: compiled mode routes it through the compiler",
        ),
    ],
)

RESULTS = _schema(
    "results",
    [
        _field("run_id", _str, False, "run that produced the row"),
        _field("source", _str, False, "who produced it: portability or mince2023"),
        _field("case_id", _str, False, "case the subtest belongs to"),
        _field("framework", _str, False, "torch, tensorflow or jax"),
        _field("function", _str, False, "qualified name of the function under test"),
        _field("test_id", _str, False, "pytest node id of the subtest, as run"),
        _field("subtest", _str, False, "subtest name with the device token removed (dtype kept)"),
        _field("repeat", _i64, False, "repeat index, 0-based"),
        _field("outcome", _str, False, OUTCOME_DOC),
        _field("failure_category", _str, True, "type_failure, not_implemented, timeout, memory, ..."),
        _field("failure_rule", _str, True, "id of the rule that classified the failure"),
        _field("error_type", _str, True, "exception type name"),
        _field("error_message", _str, True, "first lines of the error"),
        _field("op_latencies_ms", pa.list_(_f64), False, "every timed operation, milliseconds"),
        _field("test_time_ms", _f64, True, "wall time of the whole subtest, milliseconds"),
        _field("device", _str, False, "cpu, gpu, tpu or mps"),
        _field("device_model", _str, False, "hardware model, e.g. T4, TPU v3-8, x86_64 CPU name"),
        _field("mode", _str, False, "eager or compiled"),
        _field("framework_version", _str, False, "framework version the subtest ran on"),
        _field(
            "execution",
            _str,
            True,
            "how it ran: eager, compiled, graph_breaks, eager_fallback, not_routed (null: not recorded)",
        ),
        _field("graph_breaks", _i64, True, "graph breaks torch.compile reported for the subtest"),
        _field(
            "confirmation",
            _str,
            True,
            "failing subtest re-run alone in a fresh worker: confirmed, order_dependent, inconclusive",
        ),
        _field(
            "failure_subcategory",
            _str,
            True,
            "finer reading of the failure from the rule table (compile_limitation, wrong_result, ...)",
        ),
        _field(
            "oracle",
            _str,
            True,
            "what the values were compared with: reference (the entry's own reference function; for a "
            "ModuleInfo entry upstream's, not NumPy), numpy, numpy_32bit, scipy, eager, cpu (the host "
            "CPU's result of the same sample, off the host), torch_cpu (PyTorch's CPU result of the same "
            "sample: the NN-op census of TensorFlow and JAX); several joined by '+' (reference+cpu); "
            "none: nothing judged any sample",
        ),
        _field("samples", _i64, True, "sample inputs the subtest ran (census: a subtest per entry x dtype)"),
        _field("samples_failed", _i64, True, "of those samples, how many raised or left the tolerance"),
        _field(
            "samples_compared",
            _i64,
            True,
            "of those samples, how many some oracle judged (null before schema 11: then `oracle` other "
            "than none says only that some sample was)",
        ),
        _field("max_abs_error", _f64, True, "largest absolute deviation from the oracle over the samples"),
        _field("max_rel_error", _f64, True, "largest relative deviation from the oracle over the samples"),
        _field(
            "host_fallback_ops",
            pa.list_(_str),
            True,
            "ops of the subtest's timed calls that ran on the host instead of the device (torch_xla's "
            "executed fallback counters, e.g. aten::nonzero), or outside the target runtime's own kernels "
            "on an export or edge path (ops OpenVINO left to PyTorch, a TFLite model's Flex ops, ops "
            "XNNPACK did not take), sorted; null where the device cannot tell",
        ),
        _field("host_fallback_calls", _i64, True, "host executions of those ops, all calls together"),
        _field(
            "device_compiles",
            _i64,
            True,
            "graph compilations of the device during the subtest's timed calls, warm-up included (XLA)",
        ),
        _field(
            "device_compiles_timed",
            _i64,
            True,
            "of those, compilations during the timed call itself: the call recompiled after its warm-up",
        ),
        *DTYPE_FIELDS,  # census rows of NumPy namesakes (runner/promotion.py)
        _field("compiler", _str, True, COMPILER_DOC),
        _field("runtime", _str, True, RUNTIME_DOC),
    ],
)

RUNS = _schema(
    "runs",
    [
        _field("run_id", _str, False, "unique run id"),
        _field("source", _str, False, "portability or mince2023"),
        _field("framework", _str, False, "torch, tensorflow or jax"),
        _field("framework_version", _str, False, "framework version"),
        _field("device", _str, False, "cpu, gpu, tpu or mps"),
        _field("device_model", _str, False, "hardware model"),
        _field("mode", _str, False, "eager or compiled"),
        _field("repeats", _i64, False, "runs of every subtest"),
        _field("timeout_s", _f64, True, "per-case timeout, seconds"),
        _field("host", _str, False, "host name (or the study's machine name)"),
        _field("os", _str, False, "operating system"),
        _field("python", _str, False, "Python version"),
        _field("cpu_model", _str, False, "CPU model"),
        _field("accelerator", _str, True, "accelerator name"),
        _field("driver", _str, True, "accelerator driver version"),
        _field("packages", _str, False, "JSON object of relevant package versions"),
        _field(
            "git_commit", _str, True, "commit of the repository when the run started (its cases and code)"
        ),
        _field("params_hash", _str, True, "sha256 of the run parameters"),
        _field("timer_floor_ms", _f64, True, "median of an empty timed block with sync, ms"),
        _field("started_at", pa.timestamp("us", tz="UTC"), True, "start time"),
        _field("finished_at", pa.timestamp("us", tz="UTC"), True, "end time"),
        _field("status", _str, False, "running, complete or partial"),
        _field("n_results", _i64, False, "rows in the run's shard"),
        _field(
            "cpu_flags", _str, True, "vector and matrix extensions of the host CPU (avx2, avx512f, amx...)"
        ),
        _field("cpu_count", _i64, True, "logical CPUs the run could use"),
        _field("memory_mb", _i64, True, "host memory, MB"),
        _field("build", _str, True, "JSON: the framework's build facts (BLAS, oneDNN/MKL, CUDA, XLA)"),
        _field("harness_digest", _str, True, "sha256 of the harness and worker code that ran the cases"),
        _field("cases_digest", _str, True, "sha256 over the case files run (rows and test files)"),
        _field("case_digests", _str, True, "JSON object: case_id -> sha256 of its row and test file"),
        _field(
            "host_load_mean",
            _f64,
            True,
            "mean 1-minute load average of the host at each case start; the run's own worker adds about "
            "1, so above 1 + 0.5 other work competed for the cores and latencies are contended",
        ),
        _field("host_load_max", _f64, True, "largest of those load-average samples"),
        _field(
            "host_other_cpu_mean",
            _f64,
            True,
            "CPU cores' worth of work outside the run's own processes (its workers and their threads "
            "not counted), per case, mean: above about 0.5 other work competed (null: before v6, or not "
            "Linux)",
        ),
        _field("host_other_cpu_max", _f64, True, "largest of those per-case samples"),
        _field("jobs", _i64, True, "workers side by side (1: alone; > 1: census only; null: before v5)"),
        _field(
            "code_modified",
            pa.bool_(),
            True,
            "the package's code (src/: runner, harness, rules) had uncommitted changes beside git_commit "
            "when the run started or finished, or HEAD moved while it ran (runs finished before "
            "2026-11-29: read when the row was written), so git_commit alone does not name the code "
            "that ran; case files are named exactly by case_digests (null: before v9, outside git, or "
            "the package that ran is not this checkout's)",
        ),
        _field("compiler", _str, True, COMPILER_DOC),
        _field("runtime", _str, True, RUNTIME_DOC),
    ],
)

OUTCOMES = _schema(
    "outcomes",
    [
        _field("source", _str, False, "portability or mince2023"),
        _field("framework", _str, False, "torch, tensorflow or jax"),
        _field("framework_version", _str, False, "framework version"),
        _field("function", _str, False, "qualified name"),
        _field("device", _str, False, "cpu, gpu, tpu or mps"),
        _field("device_model", _str, False, "hardware model"),
        _field("mode", _str, False, "eager or compiled"),
        _field(
            "outcome",
            _str,
            False,
            "success, partial_failure, complete_failure, unknown, unavailable, not_compiled, host_fallback",
        ),
        _field("n_subtests", _i64, False, "subtests counted (skipped ones excluded)"),
        _field("n_passed", _i64, False, "subtests that passed in every repeat"),
        _field("n_failed", _i64, False, "subtests that failed in some repeat"),
        _field("n_skipped", _i64, False, "subtests skipped"),
        _field("dominant_failure_category", _str, True, "most frequent failure category"),
        _field(
            "n_order_dependent", _i64, True, "subtests that failed in the run but passed alone (not failures)"
        ),
        _field(
            "n_not_compiled",
            _i64,
            True,
            "compiled mode: subtests left out because they did not really compile (graph breaks, "
            "eager fallback, not routed)",
        ),
        _field("n_host_fallback", _i64, True, "subtests that ran (and did not fail) with ops on the host"),
    ],
)

LATENCIES = _schema(
    "latencies",
    [
        _field("source", _str, False, "portability or mince2023"),
        _field("framework", _str, False, "torch, tensorflow or jax"),
        _field("framework_version", _str, False, "framework version"),
        _field("function", _str, False, "qualified name"),
        _field("mode", _str, False, "eager or compiled"),
        _field("device", _str, False, "device measured"),
        _field("device_model", _str, False, "hardware model measured"),
        _field("reference_device", _str, True, "device it is paired with (null: unpaired)"),
        _field("reference_device_model", _str, True, "hardware model it is paired with"),
        _field("n_subtests", _i64, False, "subtests used"),
        _field("latency_ms", _f64, False, "study procedure: unweighted mean of subtest means, ms"),
        _field("median_ms", _f64, False, "median over subtest medians, ms"),
        _field("spread", _f64, False, "median relative spread (IQR/median) of the subtests"),
        _field("reference_latency_ms", _f64, True, "latency on the reference device, same subtests"),
        _field("ratio", _f64, True, "latency_ms / reference_latency_ms"),
    ],
)

PUBLISHED = _schema(
    "published",
    [
        _field("source", _str, False, "who printed it: mince2023-published (the study's paper, as printed)"),
        _field(
            "value_id",
            _str,
            False,
            "where the value sits in the transcribed tables: JSON pointer (#k: k-th value of a sentence)",
        ),
        _field("published_table", _str, False, "per_function_latency, outcome_counts or stated_in_text"),
        _field("location", _str, False, "table or figure of the paper the value is printed in"),
        _field("framework", _str, False, "torch, tensorflow or jax"),
        _field("device", _str, True, "device the value is about: gpu or tpu (null: none)"),
        _field("device_model", _str, True, "hardware model the value is about, e.g. T4, TPU v3-8"),
        _field("reference_device", _str, True, "device it is compared with (ratios, slower-on-TPU shares)"),
        _field("reference_device_model", _str, True, "hardware model it is compared with"),
        _field("printed_name", _str, True, "the function as the study printed it (latency tables)"),
        _field("quantity", _str, False, "what the value is: latency_ms, ratio, success, pct_failing, ..."),
        _field("relation", _str, False, "equals (a rounded value) or at_most (a printed bound)"),
        _field("value_text", _str, False, "the value as printed, without its unit"),
        _field("value", _f64, False, "the printed value as a number"),
        _field("decimals", _i64, False, "printed precision: digits after the decimal point"),
        _field("unit", _str, False, "ms, ratio, functions or %"),
        _field("context", _str, False, "the printed sentence, or the table's caption as transcribed"),
    ],
)

REPRODUCTION = _schema(
    "reproduction",
    [
        _field("value_id", _str, False, "the published value (published.value_id)"),
        _field("source", _str, False, "the raw data ours is computed from: mince2023"),
        _field("published_table", _str, False, "per_function_latency, outcome_counts or stated_in_text"),
        _field("location", _str, False, "table or figure of the paper the value is printed in"),
        _field("framework", _str, False, "torch, tensorflow or jax"),
        _field("device", _str, True, "device the value is about (null: none)"),
        _field("device_model", _str, True, "hardware model the value is about"),
        _field("reference_device", _str, True, "device it is compared with"),
        _field("reference_device_model", _str, True, "hardware model it is compared with"),
        _field("printed_name", _str, True, "the function as the study printed it"),
        _field(
            "function", _str, True, "our qualified name of the printed function (null: none or not matched)"
        ),
        _field("quantity", _str, False, "what the value is (published.quantity)"),
        _field("relation", _str, False, "equals or at_most (published.relation)"),
        _field("unit", _str, False, "ms, ratio, functions or %"),
        _field("printed_text", _str, False, "the value as printed"),
        _field("printed_value", _f64, False, "the printed value as a number"),
        _field("decimals", _i64, False, "printed precision: digits after the decimal point"),
        _field(
            "ours", _f64, True, "ours: from our aggregation of the study's raw data (null: not derivable)"
        ),
        _field("ours_text", _str, True, "ours rounded to the printed precision"),
        _field(
            "equal",
            pa.bool_(),
            False,
            "ours equals the printed value at its printed precision (within it, for a bound)",
        ),
        _field(
            "reason",
            _str,
            True,
            "why they differ (null when equal): no_failure_report, hand_curated_outcome...",
        ),
        _field("derivation", _str, False, "how ours is computed: tables, devices, functions counted"),
        _field("evidence", _str, True, "what in the data shows the reason: functions, subtests, outcomes"),
    ],
)

TABLES: dict[str, pa.Schema] = {
    "api": API,
    "frequencies": FREQUENCIES,
    "samples": SAMPLES,
    "cases": CASES,
    "results": RESULTS,
    "runs": RUNS,
    "outcomes": OUTCOMES,
    "latencies": LATENCIES,
    "published": PUBLISHED,
    "reproduction": REPRODUCTION,
    "declared": DECLARED,
    "support_matrix": SUPPORT_MATRIX,
    "crossframework": CROSSFRAMEWORK,
}


def canonical_name(qualified_name: str) -> str:
    """The one spelling every table uses: the importable module path, so `tf.` is `tensorflow.`."""
    return "tensorflow." + qualified_name[3:] if qualified_name.startswith("tf.") else qualified_name


def arrow_schema(table: str) -> pa.Schema:
    """The declared Arrow schema of a table; unknown names are an error that lists the known ones."""
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; known tables: {', '.join(TABLES)}") from None
