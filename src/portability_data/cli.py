"""`portability`: one subcommand per pipeline step, the same commands dvc.yaml runs.

Every command and option is one entry of COMMANDS, and `build_parser` makes the parser from it;
what a command does is in `commands` (a function per command). Each step's module is imported only
when its command runs, so `portability run` on a bare accelerator machine never imports pandas,
pandera, DVC or `datasets`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from portability_data import commands
from portability_data.cli_spec import (
    Command,
    arg,
    budget_args,
    comma_list,
    command,
    device_help,
    flag,
    path_arg,
)
from portability_data.runner import devices
from portability_data.runner.spec import RUN_SOURCES
from portability_data.tables.contracts import FRAMEWORKS, MODES, SUITES
from portability_data.tables.locations import table_path

# Every command and option of `portability`, in the order `--help` lists them.
COMMANDS: tuple[Command, ...] = (
    command(
        "enumerate",
        commands.cmd_enumerate,
        "List every public function, class and method of the frameworks (api table).",
        path_arg("--params", "params.yaml", "parameters file (enumerate section)"),
        path_arg("--out", table_path("api"), "api table to write"),
    ),
    command(
        "declared",
        commands.cmd_declared,
        "Read what the installed PyTorch wheel declares per function, device type and dtype "
        "(OpInfo, ModuleInfo, OptimizerInfo, the MPS lists) into the declared table.",
        path_arg(
            "--api",
            table_path("api"),
            "api table of the installed torch, to map entries to public names (default: %(default)s)",
        ),
        path_arg("--out", table_path("declared"), "declared table to write (default: %(default)s)"),
    ),
    command(
        "frequencies",
        commands.cmd_frequencies,
        "Count how often each API function is called in a corpus.",
        path_arg("--params", "params.yaml", "parameters file (frequencies section)"),
        path_arg("--api", table_path("api"), "api table to resolve names"),
        path_arg("--out", table_path("frequencies"), "table to write"),
    ),
    command(
        "sample",
        commands.cmd_sample,
        "Draw the stratified sample (top N + per decile) with replacements.",
        path_arg("--params", "params.yaml", "parameters file (sample section)"),
        path_arg(
            "--frequencies",
            table_path("frequencies"),
            "usage counts to draw from, made by `portability frequencies` (default: %(default)s)",
        ),
        path_arg(
            "--reference-samples",
            table_path("samples", "mince2023"),
            "the study's own sample (committed; no stage writes it) (default: %(default)s)",
        ),
        path_arg("--cases-dir", "cases", "case rows (unsuitable ones get replaced)"),
        path_arg("--out", table_path("samples", "fresh"), "samples table to write (default: %(default)s)"),
    ),
    command(
        "cases",
        commands.cmd_cases,
        "Check every case row and compile them into the cases table.",
        path_arg("--api", table_path("api"), "api table to check names (default: %(default)s)"),
        path_arg("--samples", table_path("samples"), "samples table the cases serve (default: %(default)s)"),
        path_arg("--out", table_path("cases"), "cases table to write (default: %(default)s)"),
        flag("--no-collect", "skip the pytest collection check"),
    ),
    command("case", None, "Add or check cases (the contributor's commands)."),
    command(
        "case new",
        commands.cmd_case_new,
        "Scaffold a case row and test file.",
        arg("framework", choices=FRAMEWORKS, help="the framework the function belongs to"),
        arg("function", help="qualified name, e.g. torch.nn.Linear (checked against the api table)"),
        path_arg("--api", table_path("api"), "api table the name must be in"),
    ),
    command(
        "case check",
        commands.cmd_case_check,
        "Validate case rows (what CI runs).",
        arg("paths", nargs="*", help="row or test files to check (default: all)"),
        path_arg("--api", table_path("api"), "api table the case names must be in"),
        path_arg(
            "--samples",
            table_path("samples"),
            "samples table the rows' `samples` must name (default: %(default)s, every sample; a missing "
            "table is an error)",
        ),
        flag("--no-collect", "skip the pytest collection check"),
        flag(
            "--run",
            "also run the checked cases once on the CPU (eager); exit 1 if a case cannot be collected "
            "or hits a harness error (failed subtests are the framework's data: exit 0)",
        ),
    ),
    command(
        "devices",
        commands.cmd_devices,
        "List the registered device paths (runner/devices/): frameworks, compilers, what each needs, "
        "and each path's harness digest.",
    ),
    command(
        "run",
        commands.cmd_run,
        "Run the cases of one framework on one device and mode; append a result shard "
        "(exit 1 if a case file could not be collected; failed subtests are data).",
        arg(
            "--framework",
            choices=FRAMEWORKS,
            help="whose cases to run (required, except with --resume or --close: the run id names it)",
        ),
        arg("--device", choices=devices.path_names(), default="cpu", help=device_help()),
        arg(
            "--mode",
            choices=MODES,
            default="eager",
            help="eager, or compiled (torch.compile / tf.function / jax.jit)",
        ),
        arg(
            "--compiler",
            help="compiled mode's compiler, one the device path registers for the framework (default: the "
            "path's own: inductor on cpu and gpu, openxla on xla and tpu for torch; XLA for JAX and "
            "TensorFlow); recorded as runs.compiler",
        ),
        arg("--repeats", type=int, default=3, help="runs of every subtest (the study: 3)"),
        arg("--timeout", type=float, default=900.0, help="seconds per subtest (the study: 15 minutes)"),
        arg("--memory-mb", type=int, default=8192, help="memory cap of the case worker"),
        arg("--cases", nargs="*", help="case ids to run (default: all active cases)"),
        arg(
            "--suite",
            choices=SUITES,
            default="curated",
            help="curated: the case files of cases/<framework>/; census: the entries of the harvested "
            "manifests in cases/<framework>/census/ (one subtest per entry x dtype)",
        ),
        arg(
            "--source",
            choices=RUN_SOURCES,
            help="whose run this is, the folder under data/results/ and data/runs/ (default: local, "
            "this machine's, set beside the project's in the report); portability: the project's own "
            "source, for a maintainer measuring a committed setting (a resumed run keeps its own)",
        ),
        arg("--resume", metavar="RUN_ID", help="finish a run that was killed, from its journal"),
        flag(
            "--no-confirm",
            "do not re-run failing subtests alone in a fresh worker (their confirmation stays empty, "
            "so an order-dependent failure counts as the framework's)",
        ),
        arg(
            "--confirm-jobs",
            type=int,
            default=1,
            help="fresh workers confirming failures at once (each subtest still runs alone in its own)",
        ),
        arg(
            "--confirm-by",
            choices=["fork", "spawn"],
            default="fork",
            help="how a confirmation's fresh worker is made: forked from a process that only imported "
            "the framework (no import cost per subtest), or spawned as a new interpreter",
        ),
        arg(
            "--jobs",
            type=int,
            default=1,
            help="workers running the cases side by side: census runs only (their rows are verdicts "
            "and deviations; curated timings are measured alone); recorded as runs.jobs",
        ),
        flag(
            "--compile-cache",
            "keep compiled programs for a re-run: JAX's persistent compile cache for census workers, under "
            "$XDG_CACHE_HOME/portability/compile (runs.build's compile_cache); off by default: a first run "
            "pays 11%% more to fill it (benchmarks/bench_compile_cache.py); PORTABILITY_COMPILE_CACHE=on "
            "or =<folder> does the same for run-stage and bench",
        ),
        arg(
            "--close",
            metavar="RUN_ID",
            help="write a killed run's shard as it stands (runs.status = partial) instead of resuming",
        ),
        flag(
            "--dry-run",
            "measure nothing and write nothing under data/: start one case worker to check the device "
            "is reachable, print what would run (device model, framework version, timer floor, cases, "
            "repeats); exit 1 if it cannot start",
        ),
    ),
    command(
        "run-stage",
        commands.cmd_run_stage,
        "The DVC run stage: every framework x device x mode of params.yaml.",
        path_arg("--params", "params.yaml", "parameters file (run section)"),
        path_arg("--out", "data/run_manifest.json", "the manifest to write"),
        arg(
            "--frameworks",
            nargs="*",
            choices=FRAMEWORKS,
            help="run only these frameworks' settings (two streams side by side; the stage runs all)",
        ),
        arg(
            "--suite",
            choices=SUITES,
            default="curated",
            help="curated: params.yaml run settings; census: params.yaml census settings",
        ),
    ),
    command(
        "support-matrix",
        commands.cmd_support_matrix,
        "Build the census's support matrix (function entry x dtype x setting, beside what the "
        "framework declares) from the census runs' shards.",
        path_arg("--results", table_path("results"), "results shards (census rows are picked out)"),
        path_arg("--runs", table_path("runs"), "runs rows"),
        arg(
            "--declared",
            type=Path,
            nargs="+",
            default=[table_path("declared"), table_path("declared", "torch_xla")],
            help="declared tables: the wheels' own, and other sources' such as torch_xla's test lists "
            "(default: %(default)s)",
        ),
        path_arg("--cases", "cases", "case folders (census manifests: entries that share declarations)"),
        path_arg("--api", table_path("api"), "api table (each function's canonical name)"),
        path_arg("--out", table_path("support_matrix"), "table to write (default: %(default)s)"),
    ),
    command(
        "crossframework",
        commands.cmd_crossframework,
        "Build the cross-framework table: every NumPy name measured in two frameworks or more on the "
        "shared generator's inputs, each framework beside the others (status, deviation from NumPy).",
        path_arg("--matrix", table_path("support_matrix"), "the census's support matrix"),
        path_arg("--out", table_path("crossframework"), "table to write (default: %(default)s)"),
    ),
    command(
        "census-harvest",
        commands.cmd_census_harvest,
        "Write the census manifests of the installed wheel (torch: OpInfo, ModuleInfo, OptimizerInfo, the "
        "NumPy namesakes its OpInfo declares; jax: "
        "its primitive harnesses, jax.numpy against NumPy; tensorflow: tf.experimental.numpy against NumPy, "
        "the reviewed mapping.yaml): entries, public functions, dtypes, tolerances.",
        path_arg("--params", "params.yaml", "parameters file (census.tolerances, census.compiled)"),
        path_arg("--api", table_path("api"), "api table of the installed frameworks (public names)"),
        arg(
            "--framework",
            choices=("torch", "jax", "tensorflow"),
            default="torch",
            help="whose databases to read",
        ),
        arg(
            "--folder",
            type=Path,
            help="where the <source>.yaml manifests go (default: cases/<framework>/census)",
        ),
        flag(
            "--nn",
            "only the NN-op manifest nn.yaml (tensorflow, jax) from the reviewed cases/nn_ops.yml, "
            "on PyTorch's OpInfo / ModuleInfo samples (issue 60)",
        ),
    ),
    command(
        "bench",
        commands.cmd_bench,
        "Measure this machine: the study's cases on every device found, as source local (then dvc repro).",
        path_arg("--params", "params.yaml", "where the profiles are (bench.profiles)"),
        arg(
            "--profile",
            default="quick",
            help="a profile of params.yaml bench.profiles: quick (eager, 1 repeat), "
            "full (3 repeats, both modes)",
        ),
        arg(
            "--frameworks",
            nargs="*",
            choices=FRAMEWORKS,
            help="only these frameworks (default: run.frameworks)",
        ),
        flag(
            "--dry-run",
            "measure nothing and write nothing under data/: start one case worker per framework x "
            "device x mode the profile would run, print the plan; exit 1 if any of them cannot start",
        ),
        *budget_args(),
    ),
    command("submission", None, "Submit runs from your hardware by pull request, checked by CI."),
    command(
        "submission package",
        commands.cmd_submission_package,
        "Copy runs' shards and runs rows into a submission folder with system.json (machine and code).",
        arg("run_ids", nargs="+", metavar="RUN_ID", help="runs to submit (`ls data/runs/*/`)"),
        arg("--out", type=Path, required=True, help="new or empty folder to write the submission to"),
        path_arg("--root", ".", "checkout the runs were made in (default: current folder)"),
    ),
    command(
        "submission check",
        commands.cmd_submission_check,
        "Refuse a submission that breaks a rule, one line per problem (what CI runs on a pull request).",
        arg(
            "paths",
            nargs="*",
            type=Path,
            help="shards and runs rows a pull request adds, or a submission folder (default with --base: "
            "every shard and runs row under data/ the branch adds or changes against it, committed or not)",
        ),
        arg(
            "--base",
            metavar="REV",
            help="the pull request's target revision: also refuse changed or deleted shards, and judge run "
            "ids new against data/ there (default: HEAD, no change check)",
        ),
        path_arg(
            "--root",
            ".",
            "repository whose commits and data/ the submission is checked against (default: current folder)",
        ),
    ),
    command(
        "submission spot-check",
        commands.cmd_submission_spot_check,
        "Re-run a seeded sample of a submitted cpu run's subtests here and compare outcomes (CI, on a PR).",
        arg(
            "paths",
            nargs="+",
            type=Path,
            help="runs rows (their shards are found beside them), or a submission folder",
        ),
        arg("--sample", type=int, default=8, help="subtests re-run per run (default: 8)"),
        arg("--seed", type=int, default=0, help="sample seed; with the run id, it fixes the sample"),
        path_arg("--root", ".", "repository whose cases and harness re-run the sample (default: .)"),
    ),
    command("reference", None, "Import the 2023 study's raw data."),
    command(
        "reference import",
        commands.cmd_reference_import,
        "Import the study's raw results as shards (source mince2023).",
        arg("dir", help="folder laid out like shared/reference/mince2023"),
        path_arg(
            "--out",
            table_path("results", "mince2023"),
            "folder for the study's result shards (source mince2023) (default: %(default)s)",
        ),
        path_arg(
            "--runs-out", table_path("runs", "mince2023"), "folder for their runs rows (default: %(default)s)"
        ),
    ),
    command("published", None, "Import the 2023 study's printed numbers."),
    command(
        "published import",
        commands.cmd_published_import,
        "Import the study's printed tables and figures as the published table (source mince2023-published).",
        arg("path", help="published_tables.json, or a folder holding it (shared/reference/mince2023)"),
        path_arg(
            "--out", table_path("published", "mince2023"), "published table to write (default: %(default)s)"
        ),
    ),
    command("torch-xla", None, "Import torch_xla's own expectations as declarations for device xla."),
    command(
        "torch-xla import",
        commands.cmd_torch_xla_import,
        "Import the lists of torch_xla's OpInfo test (allowed, allowed with fallback, commented out) as "
        "declared rows for device type xla (data/declared/torch_xla-<tag>.parquet; never rewritten).",
        arg("path", help="test_ops_lists.json, or a folder holding it (shared/reference/torch_xla)"),
        path_arg(
            "--declared",
            table_path("declared"),
            "the wheel's declared table (default: %(default)s)",
        ),
        path_arg("--out-dir", table_path("declared").parent, "folder of the table (default: %(default)s)"),
    ),
    command(
        "aggregate",
        commands.cmd_aggregate,
        "Compute outcomes and latencies from every shard (the study's way).",
        path_arg(
            "--results",
            table_path("results"),
            "result shards, every source, read recursively (default: %(default)s)",
        ),
        path_arg(
            "--runs",
            table_path("runs"),
            "runs rows: repeats, and the digests that decide supersession (default: %(default)s)",
        ),
        path_arg(
            "--cases",
            table_path("cases"),
            "cases table: functions removed from the API become unavailable (default: %(default)s)",
        ),
        path_arg("--outcomes", table_path("outcomes"), "outcomes table to write (default: %(default)s)"),
        path_arg("--latencies", table_path("latencies"), "latencies table to write (default: %(default)s)"),
        path_arg("--pooled", table_path("pooled"), "the rows as pooled, to write (default: %(default)s)"),
        flag("--quarantine", "leave bad shards out (default: stop on them)"),
    ),
    command(
        "reproduce",
        commands.cmd_reproduce,
        "Set every published number of the study beside ours (reproduction table).",
        path_arg(
            "--published",
            table_path("published"),
            "the study's printed numbers, made by `portability published import` (default: %(default)s)",
        ),
        path_arg(
            "--outcomes",
            table_path("outcomes"),
            "outcomes table (its mince2023 rows are used) (default: %(default)s)",
        ),
        path_arg(
            "--latencies",
            table_path("latencies"),
            "latencies table (its mince2023 rows are used) (default: %(default)s)",
        ),
        path_arg(
            "--results",
            table_path("results", "mince2023"),
            "the study's result shards, the evidence for each difference (default: %(default)s)",
        ),
        path_arg(
            "--samples",
            table_path("samples", "mince2023"),
            "the study's sample, which maps printed names to functions (default: %(default)s)",
        ),
        path_arg("--out", table_path("reproduction"), "reproduction table to write (default: %(default)s)"),
        path_arg(
            "--functions-out",
            table_path("reproduction_functions"),
            "the functions behind Table 8's differences, to write (default: %(default)s)",
        ),
    ),
    command(
        "report",
        commands.cmd_report,
        "Render the report (Markdown + offline HTML, figures) and the metrics.",
        path_arg(
            "--out",
            "reports",
            "folder to write report.md, report.html, figures/ and plots/ into (the tables are read "
            "from data/ under the current directory) (default: %(default)s)",
        ),
        path_arg(
            "--metrics",
            "reports/metrics.json",
            "JSON file of the headline numbers, for `dvc metrics diff` (default: %(default)s)",
        ),
    ),
    command(
        "scan",
        commands.cmd_scan,
        "Find the framework calls in your Python files and print what the dataset knows of each "
        "function on every device path (offline, from the committed tables).",
        arg("paths", nargs="+", type=Path, metavar="PATH", help="Python files or folders to scan"),
        arg(
            "--target",
            type=comma_list,
            help="device paths to report, comma-separated, e.g. xla,gpu (default: every path the "
            "dataset has rows for; `portability devices` lists the paths)",
        ),
        arg("--framework", type=comma_list, help="only these frameworks' calls, comma-separated"),
        arg(
            "--format",
            dest="output",
            choices=("table", "json", "sarif"),
            default="table",
            help="table (a person), json (a script), sarif (SARIF 2.1.0: GitHub code scanning, editors) "
            "(default: %(default)s)",
        ),
        arg(
            "--fail-on",
            type=comma_list,
            help="exit 1 when a called function has one of these statuses on a target path, e.g. "
            "fails,partial,host_fallback (CI use)",
        ),
        flag("--evidence", "table: show each problem's evidence (run id, entry and dtype, error line)"),
        arg(
            "--data",
            type=Path,
            help="the dataset folder to read (a checkout's data/ or a downloaded dataset folder; "
            "default: the data/ of the checkout this package was installed from)",
        ),
        arg("--out", type=Path, help="write the output to this file instead of standard output"),
    ),
    command(
        "explorer",
        commands.cmd_explorer,
        "Write the offline explorer: a static page and its data (search a function, its setting x dtype "
        "matrix by status, a cell's evidence), built from the tables.",
        path_arg("--data", "data", "the dataset folder to read (default: %(default)s)"),
        path_arg("--out", "reports/explorer", "folder for index.html and data.js (default: %(default)s)"),
    ),
    command("dataset", None, "Build or publish the dataset folder."),
    command(
        "dataset build",
        commands.cmd_dataset_build,
        "Write data/README.md (card + configs + features).",
        path_arg("--params", "params.yaml", "parameters file (dataset section) (default: %(default)s)"),
    ),
    command(
        "dataset card",
        commands.cmd_dataset_card,
        "Regenerate DATASET_CARD.md's generated parts: its table section from the contracts, and the "
        "dataset version it shows from params.yaml.",
        path_arg("--params", "params.yaml", "parameters file (dataset.version) (default: %(default)s)"),
    ),
    command(
        "dataset publish",
        commands.cmd_dataset_publish,
        "Upload the dataset folder to the Hugging Face Hub.",
        arg("--repo-id", required=True, help="<namespace>/portability"),
        arg("--revision", help="tag or branch"),
        flag("--create-pr", "open a pull request on the Hub instead of committing"),
    ),
    command("schemas", None, "Export the table schemas."),
    command(
        "schemas export",
        commands.cmd_schemas_export,
        "Write schemas/<table>.yaml from the pandera models.",
        path_arg("--out", "schemas", "folder for the <table>.yaml files (default: %(default)s)"),
    ),
)


def build_parser() -> argparse.ArgumentParser:
    """The `portability` parser, made from COMMANDS: a group's subcommands go under it."""
    parser = argparse.ArgumentParser(
        prog="portability",
        description="Measure how portable ML framework functions are across hardware; every step is a table.",
    )
    subcommands = {"": parser.add_subparsers(dest="command", required=True, metavar="COMMAND")}
    for entry in COMMANDS:
        group, _, name = entry.words.rpartition(" ")
        command_parser = subcommands[group].add_parser(name, help=entry.help, description=entry.help)
        if entry.func is None:
            subcommands[entry.words] = command_parser.add_subparsers(
                dest=f"{name}_command", required=True, metavar="COMMAND"
            )
        else:
            command_parser.set_defaults(func=entry.func)
        for option in entry.args:
            command_parser.add_argument(*option.names, **option.settings)
    return parser


def _stamp_dataset_version(params_path: Path) -> None:
    """Every table this command writes carries the dataset version of params.yaml in its metadata."""
    import yaml

    from portability_data.tables import atomic

    try:
        params = yaml.safe_load(Path(params_path).read_text(encoding="utf-8"))
        version = params["dataset"]["version"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return  # no params here (a bare accelerator machine): nothing to stamp
    atomic.DEFAULT_METADATA["dataset_version"] = str(version)


# Errors that mean bad input and name the file, row or field and the fix (contract breaks of a
# table, case rows, params.yaml, a census manifest): printed as one message, never a traceback.
INPUT_ERRORS = ("TableValidationError", "CaseRowError", "ParamsError", "CensusManifestError")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    _stamp_dataset_version(getattr(args, "params", None) or Path("params.yaml"))
    try:
        args.func(args)
    except (ValueError, RuntimeError) as exc:
        # Bad input, whatever the command: the message says what, where and what to do.
        if type(exc).__name__ not in INPUT_ERRORS:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
