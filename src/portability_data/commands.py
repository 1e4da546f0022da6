"""What each `portability` command does: one function per command, given the parsed arguments.

`cli` declares the commands and their options and calls these. Each step's module is imported only
when its command runs, so `portability run` on a bare accelerator machine never imports pandas,
pandera, DVC or `datasets`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


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
    from portability_data.pipeline.enumerate import run_enumerate

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
    from portability_data.pipeline.frequencies.build import run_frequencies

    params = load_params(args.params)
    run_frequencies(params["frequencies"], args.api, args.out)


def cmd_sample(args: argparse.Namespace) -> None:
    from portability_data.pipeline.corpus import corpus_id
    from portability_data.pipeline.sample import run_sample

    params = load_params(args.params)
    corpus = corpus_id(params["frequencies"])  # the default source's rows, not a comparison corpus
    run_sample(params["sample"], args.frequencies, args.reference_samples, args.cases_dir, args.out, corpus)


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
        problems = check_rows(rows, api, _samples_to_check(args.samples), root, collect=not args.no_collect)
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


def _samples_to_check(path: Path) -> Any:
    """The samples table the rows' `samples` are checked against. A missing one is an error, never a
    skip: without it no row's `samples` would be checked, and the check would still say OK."""
    from portability_data.tables.locations import table_path
    from portability_data.tables.tableio import parquet_files, read_table

    if not parquet_files(path):
        fresh = table_path("samples", "fresh")
        raise SystemExit(
            f"error: --samples {path}: no samples table there (no *.parquet file), so the rows' "
            f"`samples` cannot be checked; in a checkout, restore the committed one "
            f"(`git checkout -- {table_path('samples')}`) or remake {fresh} (`dvc repro -s sample`), "
            "or give --samples a samples table"
        )
    return read_table("samples", path)


def cmd_devices(args: argparse.Namespace) -> None:
    from portability_data.runner import devices
    from portability_data.runner.provenance import harness_digest
    from portability_data.tables.contracts import FRAMEWORKS

    cases_dir = _repo_root() / "cases"
    for name, path in devices.registry().items():
        print(f"{name} (runner/devices/{path.module}): {path.summary}")
        for framework in FRAMEWORKS:
            if framework in path.backends:
                backend = path.backends[framework]
                compiler = path.compiler(framework, "compiled") or "none"
                # an export path's backend has compiled mode only (runner/devices/onnxruntime.py)
                modes = " and ".join(getattr(backend, "modes", ("eager", "compiled")))
                print(f"  {framework}: {backend.__name__}, modes {modes} (compiler {compiler})")
            elif framework in path.not_served:
                print(f"  {framework}: not on this path: {path.not_served[framework]}")
        print(f"  needs: {path.needs or 'the pinned frameworks only (.[frameworks])'}")
        print(f"  harness digest: {harness_digest(cases_dir, name)[:16]} (the shared core and {path.module})")


def _own_compiler_as_none(args: argparse.Namespace) -> str | None:
    """`--compiler`, or None where it names the device path's own (one spec, one params hash)."""
    from portability_data.runner import devices

    if args.compiler is None or args.device not in devices.path_names():
        return args.compiler
    own = devices.path_named(args.device).compiler(args.framework, args.mode)
    return None if args.compiler == own else args.compiler


def cmd_run(args: argparse.Namespace) -> None:
    from portability_data.runner.interrupt import RunInterrupted, signals_interrupt
    from portability_data.runner.progress import terminal_progress
    from portability_data.runner.run_summary import RunSummary
    from portability_data.runner.spec import LOCAL_SOURCE, Paths, RunError, RunSpec
    from portability_data.runner.supervisor import run

    try:
        if args.close:
            from portability_data.runner.supervisor import close_partial

            if args.dry_run or args.resume:
                raise RunError("--close writes a killed run's shard: not with --dry-run or --resume")
            print(close_partial(args.close, Paths.under(_repo_root())))
            return
        if args.resume and args.dry_run:
            raise RunError("--dry-run plans a new run; it does not go with --resume or --close")
        if args.source and (args.resume or args.close):
            raise RunError("--source names a new run's source; a resumed or closed run keeps its own")
        if args.framework is None and args.resume:
            from portability_data.runner.supervisor import resume_state

            spec = resume_state(args.resume, Paths.under(_repo_root())).spec  # the run id's own
        elif args.framework is None:
            raise RunError("--framework is required (whose cases to run), except with --resume or --close")
        else:
            spec = RunSpec(
                framework=args.framework,
                device=args.device,
                mode=args.mode,
                repeats=args.repeats,
                timeout_s=args.timeout,
                memory_mb=args.memory_mb,
                cases=tuple(args.cases or ()),
                suite=args.suite,
                compiler=_own_compiler_as_none(args),
                source=args.source or LOCAL_SOURCE,
            )
        if args.dry_run:
            from portability_data.runner.probe import dry_run

            if not dry_run([spec], Paths.under(_repo_root())):
                raise SystemExit(1)
            return
        if args.compile_cache:  # the workers' environment reads it (runner/compile_cache.py)
            from portability_data.runner.compile_cache import CACHE_ENV, OFF, ON

            if os.environ.get(CACHE_ENV, "").strip().lower() in ("", OFF):
                os.environ[CACHE_ENV] = ON  # a folder named in the environment is kept
        paths = Paths.under(_repo_root())
        with signals_interrupt():
            run_id = run(
                spec,
                paths,
                resume=args.resume,
                confirm=not args.no_confirm,
                progress=terminal_progress(),
                confirm_jobs=args.confirm_jobs,
                jobs=args.jobs,
                confirm_by=args.confirm_by,
            )
    except RunError as exc:
        raise SystemExit(f"error: {exc}") from None
    except RunInterrupted as stop:
        print(
            f"interrupted: run {stop.run_id} stopped, its workers with it; every row so far is in its "
            f"journal. Finish it with `portability run --resume {stop.run_id}`, or write its shard as "
            f"it stands with `portability run --close {stop.run_id}`.",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(130) from None
    print(run_id, flush=True)  # stdout: the run id alone, for scripts; the summary is for people
    [shard] = paths.results_dir.glob(f"*/{run_id}.parquet")  # under the run's source (a run id is unique)
    summary = RunSummary.of_shard(run_id, shard)
    print("\n".join([_landed(shard, paths.repo_root), *summary.report()]), file=sys.stderr, flush=True)
    if summary.not_run:
        raise SystemExit(1)


def _landed(shard: Path, repo_root: Path) -> str:
    """Where the run landed and what that makes it: this machine's (local) or the project's."""
    from portability_data.runner.spec import LOCAL_SOURCE

    where = shard.relative_to(repo_root)
    if shard.parent.name == LOCAL_SOURCE:
        return (
            f"-> {where} (source local: this machine's run; `dvc repro` sets it beside the project's "
            "in the report, never pooled with them)"
        )
    return f"-> {where} (source {shard.parent.name}: the project's own data; commit it with its runs row)"


def cmd_run_stage(args: argparse.Namespace) -> None:
    from portability_data.pipeline.run_stage import run_stage

    section = "census" if args.suite == "census" else "run"
    frameworks = tuple(args.frameworks or ())
    run_stage(load_params(args.params)[section], _repo_root(), args.out, frameworks, suite=args.suite)


def cmd_support_matrix(args: argparse.Namespace) -> None:
    from portability_data.pipeline.support_matrix import run_support_matrix

    lines = run_support_matrix(args.results, args.runs, args.declared, args.out, args.cases, args.api)
    print("\n".join(lines))


def cmd_crossframework(args: argparse.Namespace) -> None:
    from portability_data.pipeline.crossframework import run_crossframework

    print("\n".join(run_crossframework(args.matrix, args.out)))


def cmd_census_harvest(args: argparse.Namespace) -> None:
    from portability_data.pipeline.census.harvest import harvest
    from portability_data.pipeline.frameworks.manifest import HarvestError
    from portability_data.tables.tableio import read_table

    census = load_params(args.params)["census"]
    folder = args.folder or Path("cases") / args.framework / "census"
    try:
        lines = harvest(args.framework, read_table("api", args.api), census, folder, nn_only=args.nn)
    except (HarvestError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    print("\n".join(lines))


def cmd_bench(args: argparse.Namespace) -> None:
    if args.device is not None:
        return _device_bench(args)
    from portability_data.pipeline.bench import BenchError, bench, closing_lines, dry_run
    from portability_data.runner.progress import terminal_progress

    if args.dry_run:
        try:
            frameworks = tuple(args.frameworks or ())
            ready = dry_run(load_params(args.params), _repo_root(), args.profile, frameworks)
        except BenchError as exc:
            raise SystemExit(f"error: {exc}") from None
        if not ready:
            raise SystemExit(1)
        return
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
    print("\n".join(closing_lines(report, _repo_root())), flush=True)
    if report.not_run:
        raise SystemExit(f"FAILED: case files could not run in {', '.join(report.not_run)} (see above)")


def _device_bench(args: argparse.Namespace) -> None:
    """`bench --device D --budget S --out DIR` (runner/budget_bench.py): parts in priority order
    until the budget; then the summary and the submission folder (out/submission/)."""
    from portability_data.runner import budget_bench as bb
    from portability_data.runner.budget_report import package_check, write_summary
    from portability_data.runner.spec import RunError

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    try:
        parts = tuple(bb.Part.parse(p) for p in args.parts) if args.parts else bb.DEFAULT_PARTS
        parts = tuple(p for p in parts if not args.frameworks or p.framework in args.frameworks)
        limits = bb.Limits(args.device, args.budget, args.repeats, args.timeout, source=args.source)
        for part in parts:
            bb.part_spec(part, limits)  # an unknown mode or a path without the framework: said now
        if args.dry_run:
            from portability_data.pipeline.bench_estimate import plan_lines

            lines, ready = package_check(tuple(dict.fromkeys(p.framework for p in parts)), args.device)
            done = bb.BenchJournal(args.out).state["parts"] if args.out else {}
            plan, _ = plan_lines(parts, limits, _repo_root(), done)
            print("\n".join(["package check:", *(f"  {line}" for line in lines), *plan]), flush=True)
            if not ready:
                raise SystemExit("not ready: see the package check above (nothing was run)")
            return
        if args.out is None:
            raise RunError("--device runs the budgeted bench into a folder: give --out DIR (a device: $OUT)")
        state = bb.bench_device(parts, limits, args.out, _repo_root(), say)
    except RunError as exc:
        raise SystemExit(f"error: {exc}") from None
    print("\n".join(write_summary(args.out, state, bb.paths_in(args.out, _repo_root()), args.source)))
    _package_bench(args.out, state)


def _package_bench(out: Path, state: dict[str, Any]) -> None:
    """out/submission/: every run of the bench that wrote a shard, made again on every call."""
    import shutil

    from portability_data.dataset.submission.package import package

    run_ids = [r for entry in state["parts"].values() for r in entry["run_ids"]]
    folder, landing = out / "submission", out / ".submission.new"
    shutil.rmtree(landing, ignore_errors=True)
    if not run_ids:
        print("nothing measured: no submission folder", file=sys.stderr)
        return
    package(out, run_ids, landing)
    shutil.rmtree(folder, ignore_errors=True)
    landing.rename(folder)
    print(f"-> {folder} ({len(run_ids)} run(s)); check: portability submission check {folder}")


def cmd_submission_package(args: argparse.Namespace) -> None:
    from portability_data.dataset.submission.files import SubmissionError
    from portability_data.dataset.submission.package import package

    try:
        system = package(args.root, args.run_ids, args.out)
    except SubmissionError as exc:
        raise SystemExit(f"error: {exc}") from None
    for run in system["runs"]:
        print(f"{run['run_id']}: {', '.join(f['path'] for f in run['files'])}")
    print(f"-> {args.out} (with system.json); next: portability submission check {args.out}")


def cmd_submission_spot_check(args: argparse.Namespace) -> None:
    from portability_data.dataset.submission.files import SubmissionError
    from portability_data.dataset.submission.spot_check import spot_check

    try:
        report = spot_check(args.paths, args.root, args.sample, args.seed)
    except SubmissionError as exc:
        raise SystemExit(f"error: {exc}") from None
    if report.warnings:  # evidence for the reviewer: warnings alone leave the exit code 0
        print("\n".join(report.warnings), file=sys.stderr)
    print("\n".join(report.lines))
    if report.refused:
        print("\n".join(report.refused), file=sys.stderr)
        print(f"FAILED: {len(report.refused)} run(s) above disagree on most of their sample", file=sys.stderr)
        raise SystemExit(1)


def cmd_submission_check(args: argparse.Namespace) -> None:
    from portability_data.dataset.submission.check import branch_files, check_submission
    from portability_data.dataset.submission.files import SubmissionError

    paths = list(args.paths)
    try:
        if not paths and args.base is None:
            raise SubmissionError(
                "nothing to check: give the files (shards, runs rows) or the submission folder, or "
                "--base <target branch> to check every shard your branch adds"
            )
        if not paths:
            paths = [args.root / found for found in branch_files(args.root, args.base)]
            print(
                f"{len(paths)} shard(s) and runs row(s) added or changed against {args.base}", file=sys.stderr
            )
        report = check_submission(paths, args.root, args.base)
    except SubmissionError as exc:
        raise SystemExit(f"error: {exc}") from None
    if report.warnings:  # evidence for the reviewer; the exit code stays 0 for warnings only
        print("\n".join(report.warning_lines()), file=sys.stderr)
    if report.problems:
        print("\n".join(report.lines()), file=sys.stderr)
        print(f"FAILED: {len(report.problems)} problem(s) above, one per line", file=sys.stderr)
        raise SystemExit(1)
    print("\n".join(report.summary()))


def cmd_reference_import(args: argparse.Namespace) -> None:
    from portability_data.pipeline.import_once import ImportConflictError
    from portability_data.pipeline.reference import ReferenceImportError, import_reference

    try:
        imported = import_reference(Path(args.dir), args.out, args.runs_out)
    except (ReferenceImportError, ImportConflictError) as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"{imported.summary('shard(s) and runs row(s)')} ({args.out}, {args.runs_out})")


def cmd_torch_xla_import(args: argparse.Namespace) -> None:
    from portability_data.pipeline.frameworks.torch.xla import TorchXlaImportError, import_torch_xla

    try:
        out, written = import_torch_xla(Path(args.path), args.declared, args.out_dir)
    except TorchXlaImportError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"torch_xla's declarations -> {out}" if written else f"{out}: already imported, nothing written")


def cmd_published_import(args: argparse.Namespace) -> None:
    from portability_data.pipeline.import_once import ImportConflictError
    from portability_data.pipeline.published import PublishedImportError, import_published

    try:
        imported = import_published(Path(args.path), args.out)
    except (PublishedImportError, ImportConflictError) as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"{imported.summary('table(s)')} ({args.out})")


def cmd_reproduce(args: argparse.Namespace) -> None:
    from portability_data.pipeline.reproduce.build import run_reproduce
    from portability_data.readings.reproduction import equal_counts
    from portability_data.tables.tableio import read_table

    written = run_reproduce(
        args.published,
        args.outcomes,
        args.latencies,
        args.results,
        args.samples,
        args.out,
        args.functions_out,
    )
    for row in equal_counts(read_table("reproduction", written)).itertuples(index=False):
        print(f"{row.published_table}: {row.equal}/{row.total} equal at the printed precision")


def cmd_aggregate(args: argparse.Namespace) -> None:
    from portability_data.pipeline.aggregate.build import run_aggregate

    run_aggregate(
        args.results,
        args.runs,
        args.outcomes,
        args.latencies,
        args.pooled,
        cases_path=args.cases,
        quarantine=args.quarantine,
    )


def cmd_report(args: argparse.Namespace) -> None:
    from portability_data.report.build import run_report

    run_report(Path("data"), args.out, args.metrics)
    out = Path(args.out)
    print(f"the report: {out / 'report.md'} (and {out / 'report.html'}, offline)")


def cmd_scan(args: argparse.Namespace) -> None:
    """The scan's output on standard output (or --out); exits 1 on a --fail-on status, 2 on bad input."""
    from portability_data import __version__
    from portability_data.dataset.loader import CHECKOUT, dataset_folder
    from portability_data.pipeline.scan.findings import ScanInputError
    from portability_data.pipeline.scan.output import run_scan
    from portability_data.tables.atomic import atomic_write_bytes

    try:
        data_dir = dataset_folder(args.data if args.data is not None else CHECKOUT)
        text, code = run_scan(
            args.paths,
            data_dir,
            targets=args.target,
            frameworks=args.framework,
            output=args.output,
            fail_on=args.fail_on,
            evidence=args.evidence,
            tool_version=__version__,
        )
    except (ScanInputError, FileNotFoundError) as exc:  # bad input: 2, apart from --fail-on's 1
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if args.out is not None:
        atomic_write_bytes(args.out, (text + "\n").encode("utf-8"))
        print(f"-> {args.out}", file=sys.stderr)
    else:
        print(text)
    if code:
        raise SystemExit(code)


def cmd_explorer(args: argparse.Namespace) -> None:
    from portability_data.report.explorer import write_explorer

    page, data = write_explorer(args.data, args.out)
    print(f"the explorer: {page} ({len(data['functions'])} functions, {len(data['cells'])} cells; offline)")


def cmd_dataset_build(args: argparse.Namespace) -> None:
    from portability_data.dataset.build import build_dataset

    params = load_params(args.params)
    build_dataset(Path("data"), Path("DATASET_CARD.md"), params["dataset"])
    print("data/README.md written")


def cmd_dataset_card(args: argparse.Namespace) -> None:
    from portability_data.dataset.folder import sync_card

    version = str(load_params(args.params)["dataset"]["version"])
    try:
        changed = sync_card(Path("DATASET_CARD.md"), version)
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None
    print("DATASET_CARD.md " + (f"updated (version {version})" if changed else "already up to date"))


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
