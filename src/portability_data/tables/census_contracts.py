"""The census's table records: what the frameworks declare (`declared`), the support matrix and
the cross-framework table (pyarrow only; `contracts` holds them in its TABLES beside the others)."""

from __future__ import annotations

from typing import Any

from portability_data.tables.declaration import (
    BOOL,
    IDENTIFIER,
    LOWER_NAME,
    QUALIFIED_NAME,
    FrameCheck,
    Table,
)
from portability_data.tables.declaration import FLOAT64 as _f64
from portability_data.tables.declaration import INT64 as _i64
from portability_data.tables.declaration import STRING as _str
from portability_data.tables.declaration import Column as _col
from portability_data.tables.vocabulary import (
    CASE_ORIGINS,
    CONFIRMATIONS,
    DEVICES,
    FAILURE_CATEGORIES,
    FRAMEWORK,
    MODES,
)

# The census's support matrix: one row per function entry x dtype x setting of a census run.
# works (every sample ran and matched its oracle); ran (every sample ran, not every one compared: no
# oracle for some); no_sample (the generator raised on this device before any sample existed);
# partial / fails: some / all samples raised; deviates: ran, values off the oracle beyond the
# tolerance policy (first failing sample); unconfirmed: failed, deviated, crashed or fell back, never
# confirmed alone (its run was closed partial before the confirmations ended): not counted either way;
# the faults.
SUPPORT_STATUSES = (
    "works",  # every sample ran and matched its oracle (the row's `oracle` says which)
    "ran",  # every sample ran, and some sample nothing could judge: never counted as works
    "partial",
    "fails",
    "deviates",
    "reference_quirk",  # it deviates from a reference known to compute something else (reference_quirks.yaml)
    "unconfirmed",
    "error",
    "timeout",
    "crashed",
    "memory",
    "unknown",
    "host_fallback",  # it ran, with some op on the host instead of the device (XLA's counters)
    "no_sample",  # the sample generator raised before any sample existed: nothing of the function ran
    "not_in_wheel",  # the installed wheel lacks the entry (the manifest's is another version): not measured
    "harness",  # the failure is our test code's by the current rules (failures.yaml): not measured
)
# The statuses of a pair that ran without raising (ran: nothing judged its values): what "still runs"
# means moving off the CPU and across frameworks, and what a declared-unsupported dtype should not do.
RUNNING_STATUSES = ("works", "ran")
DECLARED_DTYPE = ("supported", "unsupported")
FINDINGS = ("declared_unsupported_works", "declared_supported_fails")

# NumPy namesakes on the shared generator's inputs (runner/promotion.py): null for other entries and
# for rows measured before the census recorded dtypes (schema 8).
DTYPE_COLUMNS = (
    _col(
        "result_dtype",
        _str,
        True,
        "the dtypes the function returned, output by output (comma-joined); distinct ones over its "
        "samples joined by ' | '",
        since=8,
    ),
    _col("oracle_dtype", _str, True, "the dtypes NumPy returned on the same inputs, written alike", since=8),
    _col("dtype_mismatches", _i64, True, "samples whose result dtypes differ from NumPy's", ge=0, since=8),
)


def _failed_within_samples(frame: Any) -> Any:
    both = frame["samples"].notna() & frame["samples_failed"].notna()
    return ~both | (frame["samples_failed"] <= frame["samples"])


def _compared_within_samples(frame: Any) -> Any:
    both = frame["samples"].notna() & frame["samples_compared"].notna()
    return ~both | (frame["samples_compared"] <= frame["samples"])


def _works_compared_every_sample(frame: Any) -> Any:
    # an order-dependent pair's measures are its failing run's; its verdict is the run alone's
    both = frame["samples"].notna() & frame["samples_compared"].notna()
    alone = frame["confirmation"] == "order_dependent"
    claims = (frame["status"] == "works") & both & ~alone
    return ~claims | (frame["samples_compared"] == frame["samples"])


SUPPORT_MATRIX_RECORD = Table(
    "support_matrix",
    "The census: per function entry x dtype x setting, whether it works on the framework's own sample "
    "inputs (samples run and failed, deviation from the oracle), beside what the framework declares "
    "for that device type and dtype.",
    (
        FRAMEWORK,
        _col("framework_version", _str, False, "version the census ran on", min_length=1),
        _col("function", _str, False, "public qualified name the entry tests", matches=QUALIFIED_NAME),
        _col(
            "canonical_name",
            _str,
            True,
            "function's canonical name (api.canonical_name), else itself",
            matches=QUALIFIED_NAME,
            since=12,
        ),
        _col("origin", _str, False, "the census source: opinfo, ...", isin=CASE_ORIGINS),
        _col("entry", _str, False, "the database entry (name.variant), e.g. linalg.svd", min_length=1),
        _col("case_id", _str, False, "census case id", matches=QUALIFIED_NAME),
        _col("dtype", _str, False, "dtype of the samples", matches=LOWER_NAME),
        _col("device", _str, False, "cpu, gpu, tpu or mps", isin=DEVICES),
        _col("device_model", _str, False, "hardware model", min_length=1),
        _col("mode", _str, False, "eager or compiled", isin=MODES),
        _col("run_id", _str, False, "the census run (newest of its setting)", matches=IDENTIFIER),
        _col(
            "status",
            _str,
            False,
            "works (every sample matched an oracle), ran (every sample ran, some with nothing to judge "
            "it), partial/fails (some/all samples raised), deviates, reference_quirk, unconfirmed, "
            "host_fallback, no_sample (no sample could be built on the device), not_in_wheel or "
            "harness (not measured), a fault",
            isin=SUPPORT_STATUSES,
        ),
        _col("samples", _i64, True, "samples run (null: the generator raised before any ran)", ge=0),
        _col("samples_failed", _i64, True, "samples that raised or left the tolerance", ge=0),
        _col(
            "samples_compared",
            _i64,
            True,
            "samples some oracle judged (null: not recorded, before schema 11)",
            ge=0,
            since=11,
        ),
        _col(
            "oracle",
            _str,
            True,
            "reference (the entry's own reference function: an OpInfo's ref, upstream's reference "
            "function for a ModuleInfo entry, TensorFlow's mapped reference), numpy, numpy_32bit, "
            "scipy, eager, cpu (the host CPU's result of the same sample), several joined by '+', "
            "or none",
        ),
        _col("max_abs_error", _f64, True, "largest absolute deviation from the oracle", ge=0),
        _col("max_rel_error", _f64, True, "largest relative deviation from the oracle", ge=0),
        _col("error_type", _str, True, "the first failing sample's exception"),
        _col("failure_category", _str, True, "the study's category of that failure", isin=FAILURE_CATEGORIES),
        _col(
            "confirmation",
            _str,
            True,
            "confirmed, order_dependent, inconclusive (failing pairs)",
            isin=CONFIRMATIONS,
        ),
        _col("error_message", _str, True, "first lines of that failure: which input, how far off", since=5),
        _col(
            "declared_dtype",
            _str,
            True,
            "dtype list of the device type: supported, unsupported",
            isin=DECLARED_DTYPE,
        ),
        _col("declared_failures", _i64, False, "active skips, xfails for device type x dtype", ge=0),
        _col(
            "finding",
            _str,
            True,
            "declared_unsupported_works, declared_supported_fails (null: agree)",
            isin=FINDINGS,
        ),
        *DTYPE_COLUMNS,
    ),
    (
        FrameCheck(
            "one_row_per_pair",
            "one row per entry, dtype and setting",
            lambda frame: (
                ~frame.duplicated(
                    ["framework", "case_id", "dtype", "device", "device_model", "mode", "framework_version"],
                    keep=False,
                )
            ),
        ),
        FrameCheck("failed_within_samples", "samples_failed cannot exceed samples", _failed_within_samples),
        FrameCheck(
            "compared_within_samples", "samples_compared cannot exceed samples", _compared_within_samples
        ),
        FrameCheck(
            "works_compared_every_sample",
            "works claims every sample compared (samples_compared == samples)",
            _works_compared_every_sample,
        ),
    ),
)

# The cross-framework table: a NumPy name x dtype x setting measured in two frameworks or more on
# the shared generator's inputs, one row per framework (pipeline/crossframework.py).
AGREEMENTS = ("agree", "disagree")
STANDS_APART = ("alone_fails", "alone_works")
# same_dtype: every framework's result dtypes are the same; differs: not; null: fewer than two
# frameworks of the group recorded them
DTYPE_AGREEMENTS = ("same_dtype", "differs")


def _frameworks_counts_the_group(frame: Any) -> Any:
    counted = frame.groupby(["name", "dtype", "device", "mode"])["framework"].transform("count")
    return frame["frameworks"] == counted


CROSSFRAMEWORK_RECORD = Table(
    "crossframework",
    "One NumPy function name, the same inputs, every framework: per name x dtype x setting measured in "
    "two frameworks or more, each framework's status and deviation from NumPy, whether they agree and "
    "which one stands apart.",
    (
        _col(
            "name",
            _str,
            False,
            "NumPy's name of the function, e.g. arccos, linalg.svd; or torch.<entry> for an NN op on "
            "PyTorch's samples (torch.nn.functional.conv2d, issue 60)",
            min_length=1,
        ),
        _col(
            "reference",
            _str,
            False,
            "the NumPy function every framework is held to, e.g. numpy.arccos; torch_cpu for an NN op "
            "(PyTorch's CPU result of the same sample)",
            matches=QUALIFIED_NAME,
        ),
        _col(
            "dtype",
            _str,
            False,
            "dtype of the inputs (the same arrays in every framework)",
            matches=LOWER_NAME,
        ),
        _col("device", _str, False, "cpu, gpu, tpu or mps", isin=DEVICES),
        _col("mode", _str, False, "eager or compiled", isin=MODES),
        FRAMEWORK,
        _col("framework_version", _str, False, "version the census ran on", min_length=1),
        _col(
            "function", _str, False, "the framework's function, e.g. jax.numpy.arccos", matches=QUALIFIED_NAME
        ),
        _col(
            "origin",
            _str,
            False,
            "its census source: numpy (jax.numpy; torch's declared NumPy namesakes), "
            "tnp (tf.experimental.numpy)",
            isin=CASE_ORIGINS,
        ),
        _col("run_id", _str, False, "the census run the row comes from", matches=IDENTIFIER),
        _col(
            "status",
            _str,
            False,
            "the support matrix's status: works, ran, partial, fails, deviates, ...",
            isin=SUPPORT_STATUSES,
        ),
        _col("samples", _i64, True, "samples run", ge=0),
        _col("samples_failed", _i64, True, "samples that raised or left the tolerance", ge=0),
        _col("oracle", _str, True, "numpy, or numpy_32bit (JAX without x64: NumPy given what JAX ran)"),
        _col("max_abs_error", _f64, True, "largest absolute deviation from NumPy", ge=0),
        _col("max_rel_error", _f64, True, "largest relative deviation from NumPy", ge=0),
        _col("error_type", _str, True, "the first failing sample's exception"),
        _col("error_message", _str, True, "first lines of that failure: which input, how far off"),
        _col("frameworks", _i64, False, "frameworks measured for this name, dtype and setting", ge=2),
        _col(
            "agreement",
            _str,
            False,
            "agree (every framework has the same status) or disagree",
            isin=AGREEMENTS,
        ),
        _col(
            "stands_apart",
            _str,
            True,
            "where they disagree: alone_fails (it does not work where the others do), alone_works "
            "(it works where the others do not); null: agree, or no single one apart",
            isin=STANDS_APART,
        ),
        _col(
            "rel_error_spread",
            _f64,
            True,
            "the group's largest minus smallest finite max_rel_error (how differently they round; "
            "null: fewer than two finite)",
            ge=0,
        ),
        *DTYPE_COLUMNS,
        _col(
            "dtype_agreement",
            _str,
            True,
            "same_dtype (every framework of the group returned the same dtypes on the same inputs), "
            "differs (dtype promotion parts them); null: fewer than two recorded",
            isin=DTYPE_AGREEMENTS,
            since=8,
        ),
    ),
    (
        FrameCheck(
            "one_row_per_framework",
            "one row per name, dtype, setting and framework",
            lambda frame: ~frame.duplicated(["name", "dtype", "device", "mode", "framework"], keep=False),
        ),
        FrameCheck(
            "frameworks_counts_the_group",
            "frameworks must count the group's rows",
            _frameworks_counts_the_group,
        ),
    ),
)

# The declared table: what a framework's own test databases declare about devices and dtypes.
# origin: which database the declaration comes from (opinfo: OpInfo op_db; module: ModuleInfo
# module_db; optimizer: OptimizerInfo optim_db; mps_list: the MPS backend's xfail/skip lists).
DECLARED_ORIGINS = ("opinfo", "module", "optimizer", "mps_list", "harnesses", "tnp", "mapped")
# declared: supported_dtype / unsupported_dtype (the entry's dtype list for the device type says the
# dtype works / does not: test_ops checks both ways); expected_failure (the test is expected to fail
# there); skip (the test is not run there); tolerance_override (the test compares with looser
# tolerances there: atol/rtol in reason); other (a test-configuration decorator: runs only on some
# device types, TF32 off, slow test; named in reason); unknown (a declaration the harvester could
# not read: malformed, or a decorator it has no rule for; what it found is in reason).
DECLARED_KINDS = (
    "supported_dtype",
    "unsupported_dtype",
    "expected_failure",
    "skip",
    "tolerance_override",
    "other",
    "unknown",
)
# aspect: what of the entry a declaration is about: forward (its outputs), backward (its
# gradients), error_inputs (the inputs it must reject); null: whatever the named test checks.
DECLARED_ASPECTS = ("forward", "backward", "error_inputs")
# Why an entry maps to no public function: private_name (a leading underscore or dunder: not
# public API) or not_in_api (no candidate name is in the api table: a property, a lambda-only
# entry, an internal op namespace) or not_in_op_db (another database's list names an OpInfo entry
# the pinned torch no longer has: torch_xla's test lists).
UNMAPPED_REASONS = ("private_name", "not_in_api", "not_in_op_db")


def _dtype_rows_are_specific(frame: Any) -> Any:
    dtype_row = frame["declared"].isin(["supported_dtype", "unsupported_dtype"])
    return ~dtype_row | (frame["device_type"].notna() & frame["dtype"].notna())


DECLARED_RECORD = Table(
    "declared",
    "What the framework's own test databases declare per function, device type and dtype: supported "
    "dtypes, expected failures, skips, tolerances (PyTorch: OpInfo, ModuleInfo, OptimizerInfo, the MPS "
    "lists).",
    (
        FRAMEWORK,
        _col(
            "framework_version",
            _str,
            False,
            "installed version whose own test databases were read",
            min_length=1,
        ),
        _col(
            "function",
            _str,
            True,
            "public qualified name the entry tests, checked against the api table "
            "(null: none, see unmapped_reason)",
            matches=QUALIFIED_NAME,
        ),
        _col(
            "unmapped_reason",
            _str,
            True,
            "why function is null: private_name, not_in_api, or not_in_op_db (torch_xla's lists name "
            "an entry the pinned torch's op_db no longer has)",
            isin=UNMAPPED_REASONS,
        ),
        _col(
            "origin",
            _str,
            False,
            "which database: opinfo, module, optimizer or mps_list",
            isin=DECLARED_ORIGINS,
        ),
        _col(
            "entry",
            _str,
            False,
            "the database's own name: OpInfo name, ModuleInfo name (nn.Linear), optimizer, MPS list key",
            min_length=1,
        ),
        _col("variant", _str, True, "OpInfo variant_test_name (null: the entry has none)", min_length=1),
        _col(
            "device_type",
            _str,
            True,
            "device type as the wheel names it: cpu, cuda, rocm, xpu, mps, hpu, meta... (null: every one)",
            matches=LOWER_NAME,
        ),
        _col(
            "dtype",
            _str,
            True,
            "dtype as torch names it without the prefix, e.g. float32 (null: every dtype)",
            matches=LOWER_NAME,
        ),
        _col(
            "declared",
            _str,
            False,
            "supported_dtype, unsupported_dtype, expected_failure, skip, tolerance_override, other, unknown",
            isin=DECLARED_KINDS,
        ),
        _col(
            "aspect",
            _str,
            True,
            "forward, backward or error_inputs (null: whatever the named test checks; module dtypes: all)",
            isin=DECLARED_ASPECTS,
        ),
        _col(
            "test_class", _str, True, "test class the declaration is limited to, e.g. TestCommon (null: all)"
        ),
        _col("test_name", _str, True, "test the declaration is limited to, e.g. test_out (null: all)"),
        _col(
            "active",
            BOOL,
            True,
            "its own condition (active_if, a skipIf dependency) held where the wheel was read "
            "(null: decided when the test runs, or on another platform)",
        ),
        _col(
            "reason",
            _str,
            True,
            "the skip message, tolerance, list and comment, or what could not be read (null: none given)",
        ),
        _col(
            "source",
            _str,
            False,
            "where under torch/testing/_internal: file[:line]:symbol, e.g. "
            "common_methods_invocations.py:op_db[3].decorators[1]",
            min_length=1,
        ),
    ),
    (
        FrameCheck(
            "function_or_reason",
            "function and unmapped_reason: exactly one of them is set",
            lambda frame: frame["function"].notna() != frame["unmapped_reason"].notna(),
        ),
        FrameCheck(
            "dtype_rows_are_specific",
            "a supported/unsupported dtype row names its device type and dtype",
            _dtype_rows_are_specific,
        ),
        FrameCheck(
            "unique_declarations",
            "the same declaration is recorded twice",
            lambda frame: (
                ~frame.duplicated(
                    ["origin", "entry", "variant", "source", "device_type", "dtype", "declared", "aspect"],
                    keep=False,
                )
            ),
        ),
    ),
)
