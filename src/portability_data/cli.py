"""`portability`: one subcommand per pipeline step, the same commands dvc.yaml runs.

Each step's module is imported only when its command runs, so `portability run` on a bare
accelerator machine never imports pandas, pandera, DVC or `datasets`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from portability_data.tables.contracts import DEVICES, FRAMEWORKS, MODES


def load_params(path: Path) -> dict[str, Any]:
    """params.yaml as a dict; a missing or malformed file is a clear error."""
    import yaml

    from portability_data.pipeline.params import check_params

    try:
        params = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(f"error: {path} not found; run from the repository root or pass --params") from None
    except yaml.YAMLError as exc:
        raise SystemExit(f"error: {path} is not valid YAML: {exc}") from None
    return check_params(params, str(path))


def _repo_root() -> Path:
    return Path.cwd()


def cmd_enumerate(args: argparse.Namespace) -> None:
    from portability_data.pipeline.enumerate_api import run_enumerate

    params = load_params(args.params)
    run_enumerate(list(params["enumerate"]["frameworks"]), args.out)


def cmd_declared(args: argparse.Namespace) -> None:
    from portability_data.pipeline.declared import DeclaredError, run_declared

    try:
        summary = run_declared(args.api, args.out)
    except DeclaredError as exc:
        raise SystemExit(f"error: {exc}") from None
    print("\n".join([*summary.report(), f"-> {args.out}"]))


def cmd_frequencies(args: argparse.Namespace) -> None:
    from portability_data.pipeline.frequencies import run_frequencies

    params = load_params(args.params)
    run_frequencies(params["frequencies"], args.api, args.out)


def cmd_sample(args: argparse.Namespace) -> None:
    from portability_data.pipeline.sampling import run_sample

    params = load_params(args.params)
    run_sample(params["sample"], args.frequencies, args.reference_samples, args.cases_dir, args.out)


def cmd_cases(args: argparse.Namespace) -> None:
    from portability_data.pipeline.cases import compile_cases

    frame = compile_cases(_repo_root(), args.api, args.samples, args.out, collect=not args.no_collect)
    print(f"{len(frame)} case(s) -> {args.out}")


def cmd_case_new(args: argparse.Namespace) -> None:
    from portability_data.pipeline.cases import CaseNameError, api_names, scaffold

    known = api_names(args.api)
    if known is None:
        print(
            f"warning: no api table at {args.api}; the name is checked against the framework prefix only",
            file=sys.stderr,
        )
    try:
        row, test = scaffold(_repo_root(), args.framework, args.function, known)
    except (CaseNameError, FileExistsError) as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"created {row}\ncreated {test}\nnext: write the test, fill the row, run `portability case check`")


def cmd_case_check(args: argparse.Namespace) -> None:
    from portability_data.pipeline.cases import check_rows
    from portability_data.runner.case_rows import CaseRowError, load_rows
    from portability_data.tables.tableio import read_table

    root = _repo_root()
    try:
        rows = load_rows(root / "cases", root)
        if args.paths:
            wanted = {str(Path(p)) for p in args.paths}
            rows = [r for r in rows if r["_row_file"] in wanted or r.get("test_file") in wanted]
            unmatched = wanted - {r["_row_file"] for r in rows} - {r.get("test_file") for r in rows}
            if unmatched:
                raise SystemExit(
                    f"error: no case row or test file {', '.join(sorted(unmatched))} under cases/; "
                    "give paths relative to the repository root, e.g. cases/torch/argsort.yaml"
                )
        api = read_table("api", args.api) if args.api.exists() else None
        samples = read_table("samples", args.samples) if args.samples.exists() else None
        problems = check_rows(rows, api, samples, root, collect=not args.no_collect)
        if problems:
            raise CaseRowError(problems)
    except CaseRowError as exc:
        print(exc, file=sys.stderr)
        raise SystemExit(1) from None
    print(f"{len(rows)} case row(s) OK")
    if args.run:
        from portability_data.pipeline.cases import run_cases_once

        broken, failed = run_cases_once(root, [r for r in rows if r["status"] == "active"])
        if broken:
            print("\n".join(broken), file=sys.stderr)
            print(
                f"FAILED: {len(broken)} case problem(s) above: the case could not run "
                "(an error of the case file, not the framework's failure)",
                file=sys.stderr,
            )
            raise SystemExit(1)
        print(
            f"OK: every case ran; {failed} subtest(s) failed, which is the framework's result (data), "
            "not a broken case"
        )


def cmd_run(args: argparse.Namespace) -> None:
    from portability_data.runner.progress import terminal_progress
    from portability_data.runner.run_summary import RunSummary
    from portability_data.runner.supervisor import Paths, RunError, RunSpec, run, shard_path

    spec = RunSpec(
        framework=args.framework,
        device=args.device,
        mode=args.mode,
        repeats=args.repeats,
        timeout_s=args.timeout,
        memory_mb=args.memory_mb,
        cases=tuple(args.cases or ()),
    )
    try:
        if args.close:
            from portability_data.runner.supervisor import close_partial

            print(close_partial(args.close, Paths.under(_repo_root())))
            return
        paths = Paths.under(_repo_root())
        run_id = run(
            spec, paths, resume=args.resume, confirm=not args.no_confirm, progress=terminal_progress()
        )
    except RunError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(run_id, flush=True)  # stdout: the run id alone, for scripts; the summary is for people
    summary = RunSummary.of_shard(run_id, shard_path(paths, run_id))
    print("\n".join(summary.report()), file=sys.stderr, flush=True)
    if summary.not_run:
        raise SystemExit(1)


def cmd_run_stage(args: argparse.Namespace) -> None:
    from portability_data.pipeline.run_stage import run_stage

    run_stage(load_params(args.params)["run"], _repo_root(), args.out, tuple(args.frameworks or ()))


def cmd_bench(args: argparse.Namespace) -> None:
    from portability_data.pipeline.bench import BenchError, bench
    from portability_data.runner.progress import terminal_progress

    try:
        report = bench(
            load_params(args.params),
            _repo_root(),
            args.profile,
            tuple(args.frameworks or ()),
            say=lambda text: print(text, file=sys.stderr, flush=True),
            progress=terminal_progress(),
        )
    except BenchError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(
        f"{len(report.covering)} local run(s) cover this machine ({len(report.ran_now)} run now); "
        "`dvc repro` sets them beside the study's"
    )
    if report.not_run:
        raise SystemExit(f"FAILED: case files could not run in {', '.join(report.not_run)} (see above)")


def cmd_submission_package(args: argparse.Namespace) -> None:
    from portability_data.dataset.submission import SubmissionError, package

    try:
        system = package(args.root, args.run_ids, args.out)
    except SubmissionError as exc:
        raise SystemExit(f"error: {exc}") from None
    for run in system["runs"]:
        print(f"{run['run_id']}: {', '.join(f['path'] for f in run['files'])}")
    print(f"-> {args.out} (with system.json); next: portability submission check {args.out}")


def cmd_submission_check(args: argparse.Namespace) -> None:
    from portability_data.dataset.submission import SubmissionError, check_submission

    try:
        report = check_submission(args.paths, args.root, args.base)
    except SubmissionError as exc:
        raise SystemExit(f"error: {exc}") from None
    if report.problems:
        print("\n".join(report.lines()), file=sys.stderr)
        print(f"FAILED: {len(report.problems)} problem(s) above, one per line", file=sys.stderr)
        raise SystemExit(1)
    print("\n".join(report.summary()))


def cmd_reference_import(args: argparse.Namespace) -> None:
    from portability_data.pipeline.reference import import_reference

    written = import_reference(Path(args.dir), args.out, args.runs_out)
    print(f"{len(written)} shard(s) written")


def cmd_published_import(args: argparse.Namespace) -> None:
    from portability_data.pipeline.published import PublishedImportError, import_published

    try:
        written = import_published(Path(args.path), args.out)
    except PublishedImportError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"published values -> {written}")


def cmd_reproduce(args: argparse.Namespace) -> None:
    from portability_data.pipeline.reproduction import equal_counts, run_reproduce
    from portability_data.tables.tableio import read_table

    written = run_reproduce(
        args.published, args.outcomes, args.latencies, args.results, args.samples, args.out
    )
    for row in equal_counts(read_table("reproduction", written)).itertuples(index=False):
        print(f"{row.published_table}: {row.equal}/{row.total} equal at the printed precision")


def cmd_aggregate(args: argparse.Namespace) -> None:
    from portability_data.pipeline.aggregate import run_aggregate

    run_aggregate(
        args.results,
        args.runs,
        args.outcomes,
        args.latencies,
        cases_path=args.cases,
        quarantine=args.quarantine,
    )


def cmd_report(args: argparse.Namespace) -> None:
    from portability_data.report.build import run_report

    run_report(Path("data"), args.out, args.metrics)


def cmd_dataset_build(args: argparse.Namespace) -> None:
    from portability_data.dataset.build import build_dataset

    params = load_params(args.params)
    build_dataset(Path("data"), Path("DATASET_CARD.md"), params["dataset"])
    print("data/README.md written")


def cmd_dataset_card(args: argparse.Namespace) -> None:
    from portability_data.dataset.folder import sync_card

    changed = sync_card(Path("DATASET_CARD.md"))
    print("DATASET_CARD.md " + ("updated" if changed else "already up to date"))


def cmd_dataset_publish(args: argparse.Namespace) -> None:
    from portability_data.dataset.publish import PublishError, publish_folder

    try:
        publish_folder(Path("data"), args.repo_id, revision=args.revision, create_pr=args.create_pr)
    except PublishError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"published data/ to {args.repo_id}" + (f" at {args.revision}" if args.revision else ""))


def cmd_schemas_export(args: argparse.Namespace) -> None:
    from portability_data.tables.schemas import export_all

    for path in export_all(args.out):
        print(path)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="portability",
        description="Measure how portable ML framework functions are across hardware; every step is a table.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, func: Any, help_: str, parent: Any = sub) -> argparse.ArgumentParser:
        """A (sub)command under ``parent``; ``func`` None for a group of commands."""
        p = parent.add_parser(name, help=help_, description=help_)
        if func is not None:
            p.set_defaults(func=func)
        return p

    def group(name: str, help_: str) -> Any:
        """A command whose subcommands are added with ``add(..., parent=group(...))``."""
        return add(name, None, help_).add_subparsers(dest=f"{name}_command", required=True, metavar="COMMAND")

    p = add(
        "enumerate",
        cmd_enumerate,
        "List every public function, class and method of the frameworks (api table).",
    )
    p.add_argument(
        "--params", type=Path, default=Path("params.yaml"), help="parameters file (enumerate section)"
    )
    p.add_argument("--out", type=Path, default=Path("data/api/api.parquet"), help="api table to write")

    p = add(
        "declared",
        cmd_declared,
        "Read what the installed PyTorch wheel declares per function, device type and dtype "
        "(OpInfo, ModuleInfo, OptimizerInfo, the MPS lists) into the declared table.",
    )
    p.add_argument(
        "--api",
        type=Path,
        default=Path("data/api/api.parquet"),
        help="api table of the installed torch, to map entries to public names (default: %(default)s)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("data/declared/declared.parquet"),
        help="declared table to write (default: %(default)s)",
    )

    p = add("frequencies", cmd_frequencies, "Count how often each API function is called in a corpus.")
    p.add_argument(
        "--params", type=Path, default=Path("params.yaml"), help="parameters file (frequencies section)"
    )
    p.add_argument(
        "--api", type=Path, default=Path("data/api/api.parquet"), help="api table to resolve names"
    )
    p.add_argument(
        "--out", type=Path, default=Path("data/frequencies/frequencies.parquet"), help="table to write"
    )

    p = add("sample", cmd_sample, "Draw the stratified sample (top N + per decile) with replacements.")
    p.add_argument(
        "--params", type=Path, default=Path("params.yaml"), help="parameters file (sample section)"
    )
    p.add_argument(
        "--frequencies",
        type=Path,
        default=Path("data/frequencies/frequencies.parquet"),
        help="usage counts to draw from, made by `portability frequencies` (default: %(default)s)",
    )
    p.add_argument(
        "--reference-samples",
        type=Path,
        default=Path("data/reference/samples_mince2023.parquet"),
        help="the study's own sample (made by `portability reference import`)",
    )
    p.add_argument(
        "--cases-dir", type=Path, default=Path("cases"), help="case rows (unsuitable ones get replaced)"
    )
    p.add_argument(
        "--out", type=Path, default=Path("data/samples/samples.parquet"), help="samples table to write"
    )

    p = add("cases", cmd_cases, "Check every case row and compile them into the cases table.")
    p.add_argument(
        "--api",
        type=Path,
        default=Path("data/api/api.parquet"),
        help="api table to check names (default: %(default)s)",
    )
    p.add_argument(
        "--samples",
        type=Path,
        default=Path("data/samples/samples.parquet"),
        help="samples table the cases serve (default: %(default)s)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("data/cases/cases.parquet"),
        help="cases table to write (default: %(default)s)",
    )
    p.add_argument("--no-collect", action="store_true", help="skip the pytest collection check")

    case_sub = group("case", "Add or check cases (the contributor's commands).")
    p = add("new", cmd_case_new, "Scaffold a case row and test file.", case_sub)
    p.add_argument("framework", choices=FRAMEWORKS, help="the framework the function belongs to")
    p.add_argument("function", help="qualified name, e.g. torch.nn.Linear (checked against the api table)")
    p.add_argument(
        "--api", type=Path, default=Path("data/api/api.parquet"), help="api table the name must be in"
    )
    p = add("check", cmd_case_check, "Validate case rows (what CI runs).", case_sub)
    p.add_argument("paths", nargs="*", help="row or test files to check (default: all)")
    p.add_argument(
        "--api", type=Path, default=Path("data/api/api.parquet"), help="api table the case names must be in"
    )
    p.add_argument(
        "--samples",
        type=Path,
        default=Path("data/samples/samples.parquet"),
        help="samples table the rows' `samples` must name",
    )
    p.add_argument("--no-collect", action="store_true", help="skip the pytest collection check")
    p.add_argument(
        "--run",
        action="store_true",
        help="also run the checked cases once on the CPU (eager); exit 1 if a case cannot be collected "
        "or hits a harness error (failed subtests are the framework's data: exit 0)",
    )

    p = add(
        "run",
        cmd_run,
        "Run the cases of one framework on one device and mode; append a result shard "
        "(exit 1 if a case file could not be collected; failed subtests are data).",
    )
    p.add_argument("--framework", choices=FRAMEWORKS, required=True, help="whose cases to run")
    p.add_argument("--device", choices=DEVICES, default="cpu", help="the device under test (one per run)")
    p.add_argument(
        "--mode",
        choices=MODES,
        default="eager",
        help="eager, or compiled (torch.compile / tf.function / jax.jit)",
    )
    p.add_argument("--repeats", type=int, default=3, help="runs of every subtest (the study: 3)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per subtest (the study: 15 minutes)")
    p.add_argument("--memory-mb", type=int, default=8192, help="memory cap of the case worker")
    p.add_argument("--cases", nargs="*", help="case ids to run (default: all active cases)")
    p.add_argument("--resume", metavar="RUN_ID", help="finish a run that was killed, from its journal")
    p.add_argument(
        "--no-confirm",
        action="store_true",
        help="do not re-run failing subtests alone in a fresh worker (their confirmation stays empty, "
        "so an order-dependent failure counts as the framework's)",
    )
    p.add_argument(
        "--close",
        metavar="RUN_ID",
        help="write a killed run's shard as it stands (runs.status = partial) instead of resuming",
    )

    p = add("run-stage", cmd_run_stage, "The DVC run stage: every framework x device x mode of params.yaml.")
    p.add_argument("--params", type=Path, default=Path("params.yaml"), help="parameters file (run section)")
    p.add_argument("--out", type=Path, default=Path("data/run_manifest.json"), help="the manifest to write")
    p.add_argument(
        "--frameworks",
        nargs="*",
        choices=FRAMEWORKS,
        help="run only these frameworks' settings (two streams side by side; the stage runs all)",
    )

    p = add(
        "bench",
        cmd_bench,
        "Measure this machine: the study's cases on every device found, as source local (then dvc repro).",
    )
    p.add_argument(
        "--params", type=Path, default=Path("params.yaml"), help="where the profiles are (bench.profiles)"
    )
    p.add_argument(
        "--profile",
        default="quick",
        help="a profile of params.yaml bench.profiles: quick (eager, 1 repeat), full (3 repeats, both modes)",
    )
    p.add_argument(
        "--frameworks", nargs="*", choices=FRAMEWORKS, help="only these frameworks (default: run.frameworks)"
    )

    submission_sub = group("submission", "Submit runs from your hardware by pull request, checked by CI.")
    p = add(
        "package",
        cmd_submission_package,
        "Copy runs' shards and runs rows into a submission folder with system.json (machine and code).",
        submission_sub,
    )
    p.add_argument("run_ids", nargs="+", metavar="RUN_ID", help="runs to submit (`ls data/runs/*/`)")
    p.add_argument("--out", type=Path, required=True, help="new or empty folder to write the submission to")
    p.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        help="checkout the runs were made in (default: current folder)",
    )
    p = add(
        "check",
        cmd_submission_check,
        "Refuse a submission that breaks a rule, one line per problem (what CI runs on a pull request).",
        submission_sub,
    )
    p.add_argument(
        "paths", nargs="+", type=Path, help="shards and runs rows a pull request adds, or a submission folder"
    )
    p.add_argument(
        "--base",
        metavar="REV",
        help="the pull request's target revision: also refuse changed or deleted shards, and judge run "
        "ids new against data/ there (default: HEAD, no change check)",
    )
    p.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        help="repository whose commits and data/ the submission is checked against (default: current folder)",
    )

    ref_sub = group("reference", "Import the 2023 study's raw data.")
    p = add(
        "import",
        cmd_reference_import,
        "Import the study's raw results as shards (source mince2023).",
        ref_sub,
    )
    p.add_argument("dir", help="folder laid out like shared/reference/mince2023")
    p.add_argument(
        "--out",
        type=Path,
        default=Path("data/results/mince2023"),
        help="folder for the study's result shards (source mince2023) (default: %(default)s)",
    )
    p.add_argument(
        "--runs-out",
        type=Path,
        default=Path("data/runs/mince2023"),
        help="folder for their runs rows (default: %(default)s)",
    )

    pub_sub = group("published", "Import the 2023 study's printed numbers.")
    p = add(
        "import",
        cmd_published_import,
        "Import the study's printed tables and figures as the published table (source mince2023-published).",
        pub_sub,
    )
    p.add_argument("path", help="published_tables.json, or a folder holding it (shared/reference/mince2023)")
    p.add_argument(
        "--out",
        type=Path,
        default=Path("data/published/published.parquet"),
        help="published table to write (default: %(default)s)",
    )

    p = add("aggregate", cmd_aggregate, "Compute outcomes and latencies from every shard (the study's way).")
    p.add_argument(
        "--results",
        type=Path,
        default=Path("data/results"),
        help="result shards, every source, read recursively (default: %(default)s)",
    )
    p.add_argument(
        "--runs",
        type=Path,
        default=Path("data/runs"),
        help="runs rows: repeats, and the digests that decide supersession (default: %(default)s)",
    )
    p.add_argument(
        "--cases",
        type=Path,
        default=Path("data/cases/cases.parquet"),
        help="cases table: functions removed from the API become unavailable (default: %(default)s)",
    )
    p.add_argument(
        "--outcomes",
        type=Path,
        default=Path("data/outcomes/outcomes.parquet"),
        help="outcomes table to write (default: %(default)s)",
    )
    p.add_argument(
        "--latencies",
        type=Path,
        default=Path("data/latencies/latencies.parquet"),
        help="latencies table to write (default: %(default)s)",
    )
    p.add_argument("--quarantine", action="store_true", help="leave bad shards out (default: stop on them)")

    p = add(
        "reproduce",
        cmd_reproduce,
        "Set every published number of the study beside ours (reproduction table).",
    )
    p.add_argument(
        "--published",
        type=Path,
        default=Path("data/published"),
        help="the study's printed numbers, made by `portability published import` (default: %(default)s)",
    )
    p.add_argument(
        "--outcomes",
        type=Path,
        default=Path("data/outcomes/outcomes.parquet"),
        help="outcomes table (its mince2023 rows are used) (default: %(default)s)",
    )
    p.add_argument(
        "--latencies",
        type=Path,
        default=Path("data/latencies/latencies.parquet"),
        help="latencies table (its mince2023 rows are used) (default: %(default)s)",
    )
    p.add_argument(
        "--results",
        type=Path,
        default=Path("data/results/mince2023"),
        help="the study's result shards, the evidence for each difference (default: %(default)s)",
    )
    p.add_argument(
        "--samples",
        type=Path,
        default=Path("data/samples/mince2023.parquet"),
        help="the study's sample, which maps printed names to functions (default: %(default)s)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("data/reproduction/reproduction.parquet"),
        help="reproduction table to write (default: %(default)s)",
    )

    p = add("report", cmd_report, "Render the report (Markdown + offline HTML, figures) and the metrics.")
    p.add_argument(
        "--out",
        type=Path,
        default=Path("reports"),
        help="folder to write report.md, report.html, figures/ and plots/ into (the tables are read "
        "from data/ under the current directory) (default: %(default)s)",
    )
    p.add_argument(
        "--metrics",
        type=Path,
        default=Path("reports/metrics.json"),
        help="JSON file of the headline numbers, for `dvc metrics diff` (default: %(default)s)",
    )

    ds_sub = group("dataset", "Build or publish the dataset folder.")
    p = add("build", cmd_dataset_build, "Write data/README.md (card + configs + features).", ds_sub)
    p.add_argument(
        "--params",
        type=Path,
        default=Path("params.yaml"),
        help="parameters file (dataset section) (default: %(default)s)",
    )
    add(
        "card",
        cmd_dataset_card,
        "Regenerate the table section of DATASET_CARD.md from the contracts.",
        ds_sub,
    )
    p = add("publish", cmd_dataset_publish, "Upload the dataset folder to the Hugging Face Hub.", ds_sub)
    p.add_argument("--repo-id", required=True, help="<namespace>/portability")
    p.add_argument("--revision", help="tag or branch")
    p.add_argument(
        "--create-pr", action="store_true", help="open a pull request on the Hub instead of committing"
    )

    sch_sub = group("schemas", "Export the table schemas.")
    p = add("export", cmd_schemas_export, "Write schemas/<table>.yaml from the pandera models.", sch_sub)
    p.add_argument(
        "--out",
        type=Path,
        default=Path("schemas"),
        help="folder for the <table>.yaml files (default: %(default)s)",
    )
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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    _stamp_dataset_version(getattr(args, "params", None) or Path("params.yaml"))
    try:
        args.func(args)
    except ValueError as exc:
        # Contract breaks (TableValidationError, CaseRowError, ParamsError) say what and where.
        if type(exc).__name__ not in ("TableValidationError", "CaseRowError", "ParamsError"):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
