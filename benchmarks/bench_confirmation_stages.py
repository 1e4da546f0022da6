"""Where a forked confirmation's seconds go: the child's imports, pytest's collection, the subtest.

A confirmation is a child forked from runner/fork_worker.py's process running `worker.main` on one
census node id. This starts such a forking process itself (in the worker's environment, under
with fork_worker's own imports and preload), then per failing pair of the
newest `{framework}-{device}-{mode}-census-*` shard forks a child that runs `worker.main` with a
timing plugin added to its pytest session, and reports per pair: the child's whole wall time, the
worker's start before pytest (backend, timer floor, ready), pytest's collection (the census
module's import and parametrisation), the subtest's setup and call, and the seconds the child spent
importing modules the forking process had not (the outermost imports' wall time, the largest named
by their package's first two names; counted around importlib's _find_and_load, so imports by
importlib.import_module count too, which -X importtime misses: jax2onnx imports its plugins so).

Usage: python benchmarks/bench_confirmation_stages.py --framework jax --device onnxruntime
       --mode compiled [--pairs 4] [--seed 0]   (PORTABILITY_FORK_PRELOAD_MORE=0: today's preload)
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"


class StagePlugin:
    """Wall times of pytest's stages in one child session."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}

    def _timed(self, name: str) -> Any:
        started = time.perf_counter()
        yield
        self.times[name] = self.times.get(name, 0.0) + time.perf_counter() - started

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection(self) -> Any:
        return (yield from self._timed("collection"))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self) -> Any:
        return (yield from self._timed("setup"))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self) -> Any:
        return (yield from self._timed("call"))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self) -> Any:
        return (yield from self._timed("teardown"))


def serve(out_dir: Path) -> None:
    """The forking process: fork_worker's imports and preload, then one child per stdin line."""
    from portability_data.runner import fork_worker, harness, worker  # noqa: F401 (as fork_worker does)

    framework = os.environ["PORTABILITY_FRAMEWORK"]
    __import__(framework)
    started = time.perf_counter()
    preloaded = fork_worker.preload(framework, os.environ["PORTABILITY_ROOTDIR"])
    preload_s = time.perf_counter() - started
    gc.collect()
    gc.freeze()
    (out_dir / "ready.json").write_text(json.dumps({"preloaded": preloaded, "preload_s": preload_s}))
    for number, line in enumerate(sys.stdin):
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                code = child(number, line, out_dir)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        os.waitpid(pid, 0)
        print(json.dumps({"done": number}), flush=True)


def child(number: int, line: str, out_dir: Path) -> int:
    """The forked child: `worker.main` on one request, with its stages and imports written down."""
    from portability_data.runner import worker

    keep = Path(os.environ.get("BENCH_PROFILE") or out_dir)
    imports = ImportClock()
    log = os.open(out_dir / "child.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(log, 1)  # pytest's report; the forking process's stdout says when a child is done
    plugin, real_main, pytest_s = StagePlugin(), pytest.main, []

    def timed_main(args: list[str], plugins: Any = None) -> Any:
        begun = time.perf_counter()
        try:
            return real_main(args, plugins=[*(plugins or []), plugin])
        finally:
            pytest_s.append(time.perf_counter() - begun)

    pytest.main = timed_main
    sys.stdin = io.StringIO(line)
    begun = time.perf_counter()
    if os.environ.get("BENCH_PROFILE"):  # cProfile of the child, for a closer look
        import cProfile

        profile = cProfile.Profile()
        code: int = profile.runcall(worker.main)
        profile.dump_stats(keep / f"child-{number}.prof")
    else:
        code = worker.main()
    seconds, largest = imports.summary()
    stages = {
        "child_s": time.perf_counter() - begun, "pytest_s": sum(pytest_s), **plugin.times,
        "imports_s": seconds, "largest_imports": largest,
    }  # fmt: skip
    (out_dir / f"stages-{number}.json").write_text(json.dumps(stages))
    return code


class ImportClock:
    """Wall seconds of the outermost imports from now on, by package (its first two names)."""

    def __init__(self) -> None:
        import importlib._bootstrap as bootstrap

        self.seconds: dict[str, float] = {}
        self.depth = 0
        real = bootstrap._find_and_load

        def timed(name: str, import_: Any) -> Any:  # the C import and import_module both call it
            if self.depth:
                return real(name, import_)
            self.depth, begun = 1, time.perf_counter()
            try:
                return real(name, import_)
            finally:
                self.depth = 0
                key = ".".join(name.split(".")[:2])
                self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - begun

        bootstrap._find_and_load = timed

    def summary(self, top: int = 6) -> tuple[float, list[tuple[str, float]]]:
        """(seconds importing, the largest packages)."""
        largest = sorted(self.seconds.items(), key=lambda item: -item[1])[:top]
        return sum(self.seconds.values()), largest


def measure(framework: str, device: str, mode: str, test_ids: list[str]) -> dict[str, Any]:
    """Stage times of each pair's forked child, through a forking process started here."""
    from portability_data.runner.spec import Paths, RunSpec
    from portability_data.runner.worker_process import worker_environment

    spec = RunSpec(framework=framework, device=device, mode=mode, repeats=1, timeout_s=300, suite="census")
    with tempfile.TemporaryDirectory(prefix="bench-stages-") as name:
        scratch = Path(name)
        events = os.open(scratch / "events.jsonl", os.O_WRONLY | os.O_CREAT)
        env = worker_environment(spec, Paths.under(REPO), scratch, events)
        env["PYTHONPATH"] = f"{env['PYTHONPATH']}{os.pathsep}{REPO / 'benchmarks'}"
        for key in ("PORTABILITY_FORK_PRELOAD_MORE", "BENCH_PROFILE"):
            if key in os.environ:
                env[key] = os.environ[key]
        started = time.perf_counter()
        server_log = (scratch / "server.log").open("wb")
        server = subprocess.Popen(
            [sys.executable, "-m", "bench_confirmation_stages", "--serve", name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=server_log,
            cwd=scratch, env=env, pass_fds=(events,), text=True,
        )  # fmt: skip
        assert server.stdin is not None and server.stdout is not None
        pairs = []
        for number, test_id in enumerate(test_ids):
            server.stdin.write(json.dumps({"select": [str(REPO / test_id)]}) + "\n")
            server.stdin.flush()
            server.stdout.readline()
            stages = json.loads((scratch / f"stages-{number}.json").read_text())
            pairs.append({"test_id": test_id, **stages})
        server.stdin.close()
        server.wait()
        server_log.close()
        ready = json.loads((scratch / "ready.json").read_text())
        os.close(events)
        outcomes = [
            json.loads(line)
            for line in (scratch / "events.jsonl").read_text().splitlines()
            if '"result"' in line
        ]
    return {
        "server_s": time.perf_counter() - started, **ready, "pairs": pairs,
        "outcomes": [(e.get("test_id"), e.get("outcome"), e.get("error_type")) for e in outcomes],
    }  # fmt: skip


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(Path(sys.argv[2]))
        return
    from bench_confirmations import failing_pairs

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mode", default="eager")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    run_id, test_ids = failing_pairs(args.framework, args.device, args.pairs, args.seed, args.mode)
    report = {"shard": run_id, **measure(args.framework, args.device, args.mode, test_ids)}
    for pair in report["pairs"]:
        ready_s = pair["child_s"] - pair["pytest_s"]
        stages = ", ".join(f"{stage} {pair.get(stage, 0):.2f}" for stage in ("collection", "setup", "call"))
        print(
            f"{pair['test_id'].split('/')[-1]}: child {pair['child_s']:.2f} s = ready {ready_s:.2f} + "
            f"pytest {pair['pytest_s']:.2f} ({stages}); imports {pair['imports_s']:.2f} s: "
            + ", ".join(f"{name} {seconds:.2f}" for name, seconds in pair["largest_imports"][:4])
        )
    print(f"preload {report['preload_s']:.2f} s: {report['preloaded']}")
    RESULTS.mkdir(exist_ok=True)
    before = os.environ.get("PORTABILITY_FORK_PRELOAD_MORE") == "0"  # without the path's packages
    report["path_preload"] = not before
    suffix = "_before" if before else ""
    name = f"bench_confirmation_stages_{args.framework}_{args.device}_{args.mode}{suffix}.json"
    (RESULTS / name).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
