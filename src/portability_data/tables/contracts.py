"""The table contracts: every table's record (tables/declaration.py), and the Arrow schemas derived
from them, the one light module every writer needs.

It imports only pyarrow so that the runner can write shards on a bare accelerator machine
(framework + pytest + NumPy + pyarrow, see docs/ARCHITECTURE.md, "The runner"). The records of the
two tables the runner writes (`results`, `runs`) are here, beside the subtest outcome sets
`results` checks; the others are in input_, aggregate_ and census_contracts. `schemas.py`
derives the pandera models from the same records.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pyarrow as pa

from portability_data.tables import aggregate_contracts, census_contracts, input_contracts
from portability_data.tables.census_contracts import AGREEMENTS as AGREEMENTS
from portability_data.tables.census_contracts import DECLARED_ASPECTS as DECLARED_ASPECTS
from portability_data.tables.census_contracts import DECLARED_DTYPE as DECLARED_DTYPE
from portability_data.tables.census_contracts import DECLARED_KINDS as DECLARED_KINDS
from portability_data.tables.census_contracts import DECLARED_ORIGINS as DECLARED_ORIGINS
from portability_data.tables.census_contracts import DTYPE_AGREEMENTS as DTYPE_AGREEMENTS
from portability_data.tables.census_contracts import DTYPE_COLUMNS
from portability_data.tables.census_contracts import FINDINGS as FINDINGS
from portability_data.tables.census_contracts import STANDS_APART as STANDS_APART
from portability_data.tables.census_contracts import SUPPORT_STATUSES as SUPPORT_STATUSES
from portability_data.tables.census_contracts import UNMAPPED_REASONS as UNMAPPED_REASONS
from portability_data.tables.declaration import (
    BOOL,
    FLOATS,
    IDENTIFIER,
    QUALIFIED_NAME,
    STRINGS,
    TIMESTAMP,
    FrameCheck,
    Table,
)
from portability_data.tables.declaration import FLOAT64 as _f64
from portability_data.tables.declaration import INT64 as _i64
from portability_data.tables.declaration import SCHEMA_VERSION as SCHEMA_VERSION
from portability_data.tables.declaration import STRING as _str
from portability_data.tables.declaration import Column as _col
from portability_data.tables.vocabulary import API_ALIASES as API_ALIASES
from portability_data.tables.vocabulary import API_KINDS as API_KINDS
from portability_data.tables.vocabulary import CASE_ORIGINS as CASE_ORIGINS
from portability_data.tables.vocabulary import CASE_STATUSES as CASE_STATUSES
from portability_data.tables.vocabulary import COMPILER_DOC as COMPILER_DOC
from portability_data.tables.vocabulary import CONFIRMATIONS as CONFIRMATIONS
from portability_data.tables.vocabulary import DEVICES as DEVICES
from portability_data.tables.vocabulary import EXECUTIONS as EXECUTIONS
from portability_data.tables.vocabulary import FAILURE_CATEGORIES as FAILURE_CATEGORIES
from portability_data.tables.vocabulary import FRAMEWORK as FRAMEWORK
from portability_data.tables.vocabulary import FRAMEWORKS as FRAMEWORKS
from portability_data.tables.vocabulary import FUNCTION_OUTCOMES as FUNCTION_OUTCOMES
from portability_data.tables.vocabulary import MODES as MODES
from portability_data.tables.vocabulary import OUTCOME_DOC as OUTCOME_DOC
from portability_data.tables.vocabulary import PUBLISHED_QUANTITIES as PUBLISHED_QUANTITIES
from portability_data.tables.vocabulary import PUBLISHED_RELATIONS as PUBLISHED_RELATIONS
from portability_data.tables.vocabulary import PUBLISHED_TABLES as PUBLISHED_TABLES
from portability_data.tables.vocabulary import PUBLISHED_UNITS as PUBLISHED_UNITS
from portability_data.tables.vocabulary import REPLACEMENT_REASONS as REPLACEMENT_REASONS
from portability_data.tables.vocabulary import REPRODUCTION_REASONS as REPRODUCTION_REASONS
from portability_data.tables.vocabulary import RUN_STATUSES as RUN_STATUSES
from portability_data.tables.vocabulary import RUNTIME_DOC as RUNTIME_DOC
from portability_data.tables.vocabulary import SAMPLE_STATUSES as SAMPLE_STATUSES
from portability_data.tables.vocabulary import SUBTEST_OUTCOMES as SUBTEST_OUTCOMES
from portability_data.tables.vocabulary import SUITES as SUITES
from portability_data.tables.vocabulary import is_census_case as is_census_case

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

# The columns both tables the runner writes end with.
_COMPILER = _col("compiler", _str, True, COMPILER_DOC, matches=IDENTIFIER, since=10)
_RUNTIME = _col("runtime", _str, True, RUNTIME_DOC, matches=IDENTIFIER, since=10)


def _category_matches_outcome(frame: Any) -> Any:
    failing = frame["outcome"].isin(FAILING_OUTCOMES)
    has_category = frame["failure_category"].notna()
    return (failing == has_category) | ~frame["outcome"].isin([*FAILING_OUTCOMES, "passed"])


RESULTS_RECORD = Table(
    "results",
    "One row per subtest x repeat of a run: outcome, failure category, every op timing.",
    (
        _col("run_id", _str, False, "run that produced the row", matches=IDENTIFIER),
        _col("source", _str, False, "who produced it: portability or mince2023", matches=IDENTIFIER),
        _col("case_id", _str, False, "case the subtest belongs to", matches=QUALIFIED_NAME),
        FRAMEWORK,
        _col("function", _str, False, "qualified name of the function under test", matches=QUALIFIED_NAME),
        _col("test_id", _str, False, "pytest node id of the subtest, as run", min_length=1),
        _col("subtest", _str, False, "subtest name with the device token removed (dtype kept)", min_length=1),
        _col("repeat", _i64, False, "repeat index, 0-based", ge=0),
        _col("outcome", _str, False, OUTCOME_DOC, isin=SUBTEST_OUTCOMES),
        _col(
            "failure_category",
            _str,
            True,
            "type_failure, not_implemented, timeout, memory, ...",
            isin=FAILURE_CATEGORIES,
        ),
        _col("failure_rule", _str, True, "id of the rule that classified the failure"),
        _col("error_type", _str, True, "exception type name"),
        _col("error_message", _str, True, "first lines of the error"),
        _col("op_latencies_ms", FLOATS, False, "every timed operation, milliseconds"),
        _col("test_time_ms", _f64, True, "wall time of the whole subtest, milliseconds", ge=0),
        _col("device", _str, False, "cpu, gpu, tpu or mps", isin=DEVICES),
        _col("device_model", _str, False, "hardware model, e.g. T4, TPU v3-8, x86_64 CPU name", min_length=1),
        _col("mode", _str, False, "eager or compiled", isin=MODES),
        _col("framework_version", _str, False, "framework version the subtest ran on", min_length=1),
        _col(
            "execution",
            _str,
            True,
            "how it ran: eager, compiled, graph_breaks, eager_fallback, not_routed (null: not recorded)",
            isin=EXECUTIONS,
            since=2,
        ),
        _col(
            "graph_breaks", _i64, True, "graph breaks torch.compile reported for the subtest", ge=0, since=2
        ),
        _col(
            "confirmation",
            _str,
            True,
            "failing subtest re-run alone in a fresh worker: confirmed, order_dependent, inconclusive",
            isin=CONFIRMATIONS,
            since=2,
        ),
        _col(
            "failure_subcategory",
            _str,
            True,
            "finer reading of the failure from the rule table (compile_limitation, wrong_result, ...)",
            since=2,
        ),
        _col(
            "oracle",
            _str,
            True,
            "what the values were compared with: reference (the entry's own reference function; for a "
            "ModuleInfo entry upstream's, not NumPy), numpy, numpy_32bit, scipy, eager, cpu (the host "
            "CPU's result of the same sample, off the host), torch_cpu (PyTorch's CPU result of the same "
            "sample: the NN-op census of TensorFlow and JAX); several joined by '+' (reference+cpu); "
            "none: nothing judged any sample",
            since=4,
        ),
        _col(
            "samples",
            _i64,
            True,
            "sample inputs the subtest ran (census: a subtest per entry x dtype)",
            ge=0,
            since=4,
        ),
        _col(
            "samples_failed",
            _i64,
            True,
            "of those samples, how many raised or left the tolerance",
            ge=0,
            since=4,
        ),
        _col(
            "samples_compared",
            _i64,
            True,
            "of those samples, how many some oracle judged (null before schema 11: then `oracle` other "
            "than none says only that some sample was)",
            ge=0,
            since=11,
        ),
        _col(
            "max_abs_error",
            _f64,
            True,
            "largest absolute deviation from the oracle over the samples",
            ge=0,
            since=4,
        ),
        _col(
            "max_rel_error",
            _f64,
            True,
            "largest relative deviation from the oracle over the samples",
            ge=0,
            since=4,
        ),
        _col(
            "host_fallback_ops",
            STRINGS,
            True,
            "ops of the subtest's timed calls that ran on the host instead of the device (torch_xla's "
            "executed fallback counters, e.g. aten::nonzero), or outside the target runtime's own kernels "
            "on an export or edge path (ops OpenVINO left to PyTorch, a TFLite model's Flex ops, ops "
            "XNNPACK did not take), sorted; null where the device cannot tell",
            since=7,
        ),
        _col(
            "host_fallback_calls",
            _i64,
            True,
            "host executions of those ops, all calls together",
            ge=0,
            since=7,
        ),
        _col(
            "device_compiles",
            _i64,
            True,
            "graph compilations of the device during the subtest's timed calls, warm-up included (XLA)",
            ge=0,
            since=7,
        ),
        _col(
            "device_compiles_timed",
            _i64,
            True,
            "of those, compilations during the timed call itself: the call recompiled after its warm-up",
            ge=0,
            since=7,
        ),
        *DTYPE_COLUMNS,  # census rows of NumPy namesakes (runner/promotion.py)
        _COMPILER,
        _RUNTIME,
    ),
    (
        FrameCheck(
            "host_fallback_says_what",
            "a host_fallback subtest names the ops that ran on the host or its host output",
            lambda frame: ~(frame["outcome"] == "host_fallback") | frame["error_message"].notna(),
        ),
        FrameCheck(
            "category_matches_outcome",
            "a failed subtest needs a failure category, a passed one none",
            _category_matches_outcome,
        ),
        FrameCheck(
            "unique_rows",
            "(run_id, test_id, repeat) is duplicated",
            lambda frame: ~frame.duplicated(["run_id", "test_id", "repeat"], keep=False),
        ),
    ),
)

RUNS_RECORD = Table(
    "runs",
    "One row per run: machine, versions, parameters, the timer's floor, status.",
    (
        _col("run_id", _str, False, "unique run id", matches=IDENTIFIER, unique=True),
        _col("source", _str, False, "portability or mince2023", matches=IDENTIFIER),
        FRAMEWORK,
        _col("framework_version", _str, False, "framework version", min_length=1),
        _col("device", _str, False, "cpu, gpu, tpu or mps", isin=DEVICES),
        _col("device_model", _str, False, "hardware model", min_length=1),
        _col("mode", _str, False, "eager or compiled", isin=MODES),
        _col("repeats", _i64, False, "runs of every subtest", ge=1),
        _col("timeout_s", _f64, True, "per-case timeout, seconds", gt=0),
        _col("host", _str, False, "host name (or the study's machine name)"),
        _col("os", _str, False, "operating system"),
        _col("python", _str, False, "Python version"),
        _col("cpu_model", _str, False, "CPU model"),
        _col("accelerator", _str, True, "accelerator name"),
        _col("driver", _str, True, "accelerator driver version"),
        _col("packages", _str, False, "JSON object of relevant package versions", startswith="{"),
        _col("git_commit", _str, True, "commit of the repository when the run started (its cases and code)"),
        _col("params_hash", _str, True, "sha256 of the run parameters"),
        _col("timer_floor_ms", _f64, True, "median of an empty timed block with sync, ms", ge=0),
        _col("started_at", TIMESTAMP, True, "start time"),
        _col("finished_at", TIMESTAMP, True, "end time"),
        _col(
            "status",
            _str,
            False,
            "running, complete, or partial: closed before its end (--close) or with failures left "
            "unconfirmed (--no-confirm), whose unconfirmed failures read as unknown",
            isin=RUN_STATUSES,
        ),
        _col("n_results", _i64, False, "rows in the run's shard", ge=0),
        _col(
            "cpu_flags",
            _str,
            True,
            "vector and matrix extensions of the host CPU (avx2, avx512f, amx...)",
            since=2,
        ),
        _col("cpu_count", _i64, True, "logical CPUs the run could use", ge=1, since=2),
        _col("memory_mb", _i64, True, "host memory, MB", ge=1, since=2),
        _col(
            "build",
            _str,
            True,
            "JSON: the framework's build facts (BLAS, oneDNN/MKL, CUDA, XLA)",
            startswith="{",
            since=2,
        ),
        _col(
            "harness_digest", _str, True, "sha256 of the harness and worker code that ran the cases", since=2
        ),
        _col("cases_digest", _str, True, "sha256 over the case files run (rows and test files)", since=2),
        _col(
            "case_digests",
            _str,
            True,
            "JSON object: case_id -> sha256 of its row and test file",
            startswith="{",
            since=2,
        ),
        _col(
            "host_load_mean",
            _f64,
            True,
            "mean 1-minute load average of the host at each case start; the run's own worker adds about "
            "1, so above 1 + 0.5 other work competed for the cores and latencies are contended",
            ge=0,
            since=3,
        ),
        _col("host_load_max", _f64, True, "largest of those load-average samples", ge=0, since=3),
        _col(
            "host_other_cpu_mean",
            _f64,
            True,
            "CPU cores' worth of work outside the run's own processes (its workers and their threads "
            "not counted), per case, mean: above about 0.5 other work competed (null: before v6, or not "
            "Linux)",
            ge=0,
            since=6,
        ),
        _col("host_other_cpu_max", _f64, True, "largest of those per-case samples", ge=0, since=6),
        _col(
            "jobs",
            _i64,
            True,
            "workers side by side (1: alone; > 1: census only; null: before v5)",
            ge=1,
            since=5,
        ),
        _col(
            "code_modified",
            BOOL,
            True,
            "the package's code (src/: runner, harness, rules) had uncommitted changes beside git_commit "
            "when the run started or finished, or HEAD moved while it ran (runs finished before "
            "2026-11-29: read when the row was written), so git_commit alone does not name the code "
            "that ran; case files are named exactly by case_digests (null: before v9, outside git, or "
            "the package that ran is not this checkout's)",
            since=9,
        ),
        _COMPILER,
        _RUNTIME,
    ),
)

# The columns of `results` the pooled table keeps (the report reads nothing else of the rows: not the
# timings, which the latencies hold, nor the error messages, read already into the failure columns).
_POOLED_FROM_RESULTS = (
    "source", "framework", "framework_version", "device", "device_model", "mode", "function", "outcome",
    "failure_category", "run_id", "case_id", "subtest", "execution", "graph_breaks", "confirmation",
    "failure_rule", "failure_subcategory", "host_fallback_ops", "host_fallback_calls", "device_compiles",
    "device_compiles_timed",
)  # fmt: skip
_RESULTS_COLUMNS = {column.name: column for column in RESULTS_RECORD.columns}

# The pooled table's column that says the current rules read a failing row differently (aggregate
# writes it, the report counts it).
REREAD = "failure_reread"

POOLED_RECORD = Table(
    "pooled",
    "Every result row (curated and census, without its timings and error text) as the aggregate stage "
    "pooled it: failures read by the current rule table, and for a row left out, why and which run "
    "superseded it (outcomes and latencies rest on the others' curated rows; the report reads this "
    "table instead of pooling the results again).",
    (
        *(replace(_RESULTS_COLUMNS[name], since=None) for name in _POOLED_FROM_RESULTS),
        _col(REREAD, BOOL, False, "the current rule table reads this failing row differently"),
        _col(
            "superseded_reason",
            _str,
            True,
            "why supersession left the row out of the pool (null: pooled)",
            min_length=1,
        ),
        _col("superseded_by", _str, True, "run that superseded the row's run", matches=IDENTIFIER),
    ),
)

# Every table's record, in the order the card and the schema exports list them.
RECORDS: dict[str, Table] = {
    table.name: table
    for table in (
        input_contracts.API_RECORD,
        input_contracts.FREQUENCIES_RECORD,
        input_contracts.SAMPLES_RECORD,
        input_contracts.CASES_RECORD,
        RESULTS_RECORD,
        RUNS_RECORD,
        aggregate_contracts.OUTCOMES_RECORD,
        aggregate_contracts.LATENCIES_RECORD,
        POOLED_RECORD,
        aggregate_contracts.PUBLISHED_RECORD,
        aggregate_contracts.REPRODUCTION_RECORD,
        aggregate_contracts.REPRODUCTION_FUNCTIONS_RECORD,
        census_contracts.DECLARED_RECORD,
        census_contracts.SUPPORT_MATRIX_RECORD,
        census_contracts.CROSSFRAMEWORK_RECORD,
    )
}

# The Arrow schemas, derived from the records.
TABLES: dict[str, pa.Schema] = {name: record.arrow_schema() for name, record in RECORDS.items()}
API, FREQUENCIES, SAMPLES, CASES = TABLES["api"], TABLES["frequencies"], TABLES["samples"], TABLES["cases"]
RESULTS, RUNS, OUTCOMES, LATENCIES = (
    TABLES["results"],
    TABLES["runs"],
    TABLES["outcomes"],
    TABLES["latencies"],
)
PUBLISHED, REPRODUCTION, DECLARED = TABLES["published"], TABLES["reproduction"], TABLES["declared"]
SUPPORT_MATRIX, CROSSFRAMEWORK = TABLES["support_matrix"], TABLES["crossframework"]


def _added_since() -> dict[int, dict[str, tuple[str, ...]]]:
    """Schema version -> table -> the columns it added to the table, from the columns' `since`."""
    added: dict[int, dict[str, tuple[str, ...]]] = {}
    for table in RECORDS.values():
        for version, names in table.added_since().items():
            added.setdefault(version, {})[table.name] = names
    return dict(sorted(added.items()))


# Columns added since a schema version, all nullable: a file written at an older version is read
# with these as nulls (additive evolution); any other difference is schema drift and an error.
ADDED_SINCE = _added_since()


def canonical_name(qualified_name: str) -> str:
    """The one spelling every table uses: the importable module path, so `tf.` is `tensorflow.`."""
    return "tensorflow." + qualified_name[3:] if qualified_name.startswith("tf.") else qualified_name


def arrow_schema(table: str) -> pa.Schema:
    """The declared Arrow schema of a table; unknown names are an error that lists the known ones."""
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; known tables: {', '.join(TABLES)}") from None
