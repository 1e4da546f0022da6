"""Setups that run beside the suite (issue 57): a command a test only waits for the end of (a venv
built, the whole aggregation of the committed shards, every case collected) starts, at the lowest
priority, as soon as the session has collected a test that needs it, so that its seconds overlap the
rest of the suite instead of adding to it; the test then asserts on its exit status and output as
it would have on a `subprocess.run` of its own.

A test module declares its jobs in `BESIDE`: name -> (a function of a scratch folder that prepares
what the commands need and returns them, the names of the tests and fixtures that wait for it).
conftest.py starts the jobs a selected test needs (`start`), in one process at the lowest priority
(nice 19, idle I/O) that runs them one after another, moves the modules that declare jobs to the
end of the session (their tests then find the jobs done) and stops what is left when the session
ends (`stop`). `finished` waits for a job, or runs it there and then where the session did not start
it (a module run another way).

Under pytest-xdist (`-n`) every worker collects every test, and a job's waiting test may run in any
of them, so the jobs still run once: the controller makes a folder its workers share (`configure`;
they inherit its environment), the first worker to claim it starts the jobs there, every worker's
`finished` waits on that folder, and the controller, once all workers are done, ends what is left
and removes the folder (`unconfigure`). A worker's own session end ends nothing: another worker may
still be waiting.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TIMEOUT_S = 900  # as conftest's `command`
SHARED_ENV = "PORTABILITY_BESIDE_DIR"  # the folder an xdist controller's workers share their jobs in


@dataclass(frozen=True)
class Job:
    """Commands run in `cwd`, each only if the one before it succeeded (`sh -c "a && b"`)."""

    commands: list[list[str]]
    cwd: Path


@dataclass(frozen=True)
class Done:
    """How a job ended: the last command's exit status, all its commands' output, its folder."""

    returncode: int
    stdout: str
    stderr: str
    folder: Path


Prepare = Callable[[Path], Job]


@dataclass
class _Session:
    base: Path
    jobs: dict[str, Path] = field(default_factory=dict)  # name -> its folder
    process: subprocess.Popen[bytes] | None = None
    shared: bool = False  # an xdist worker's: the jobs may be another worker's, the controller ends them


_session: _Session | None = None


def _script(job: Job, folder: Path) -> str:
    """One job's lines of the runner's script: its output and then its exit status in its folder."""
    chain = " && ".join(shlex.join(command) for command in job.commands)
    run = shlex.quote(f"cd {shlex.quote(str(job.cwd))} && {chain}")
    out, err, status = (shlex.quote(str(folder / name)) for name in ("stdout", "stderr", "status"))
    return f"sh -c {run} > {out} 2> {err} < /dev/null; echo $? > {status}.part && mv {status}.part {status}\n"


def arrange(items: list[Any]) -> None:
    """Start the jobs that the selected tests (`items`) need, themselves or through a fixture, and
    move the modules that declare jobs to the end, so that the jobs have the rest of the suite to end in."""
    wanted: dict[str, Prepare] = {}
    late = []
    for item in items:
        jobs = getattr(getattr(item, "module", None), "BESIDE", None)
        if not jobs:
            continue
        late.append(item)
        needs = {getattr(item, "originalname", item.name), *getattr(item, "fixturenames", ())}
        wanted.update({name: prepare for name, (prepare, users) in jobs.items() if needs & set(users)})
    if wanted:
        moved = set(map(id, late))
        items[:] = [item for item in items if id(item) not in moved] + late
        start(wanted)


def configure(config: Any) -> None:
    """The xdist controller (`-n` above 0, and not itself a worker): the folder its workers share."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        os.environ[SHARED_ENV] = tempfile.mkdtemp(prefix="portability-beside-")


def unconfigure(config: Any) -> None:
    """The xdist controller, after its workers: end the jobs still running and remove their folder."""
    shared = os.environ.get(SHARED_ENV)
    if shared is None or hasattr(config, "workerinput"):
        return
    with_pid = Path(shared) / "pid"
    if with_pid.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.killpg(int(with_pid.read_text()), signal.SIGKILL)
    shutil.rmtree(shared, ignore_errors=True)
    del os.environ[SHARED_ENV]


def start(wanted: dict[str, Prepare]) -> None:
    """Prepare each job and start them all, in this order, in one process of its own session; under
    xdist, only where this worker is the first to claim the shared folder (the others wait on it)."""
    from tests.conftest import StaleLock

    global _session
    if not wanted:
        return
    shared = os.environ.get(SHARED_ENV)
    if shared is not None:
        _session = _Session(Path(shared), shared=True)
        try:
            (_session.base / "claimed").mkdir()
        except FileExistsError:  # another worker starts them: wait on its folders (`finished`)
            return
    else:
        _session = _Session(Path(tempfile.mkdtemp(prefix="portability-beside-")))
    script = ""
    for name, prepare in wanted.items():
        folder = _session.base / name
        folder.mkdir()
        try:
            job = prepare(folder)
        except StaleLock:  # `finished` prepares it again in the test, which then fails saying why
            continue
        script += _script(job, folder)
        _session.jobs[name] = folder
    # the lowest CPU priority (and the idle I/O class, where there is ionice): the suite's own tests,
    # some of which wait on beats of a fraction of a second, keep the machine
    idle_io = ["ionice", "-c", "3"] if shutil.which("ionice") else []
    _session.process = subprocess.Popen(
        ["nice", "-n", "19", *idle_io, "sh", "-c", script], start_new_session=True, stdin=subprocess.DEVNULL
    )
    if _session.shared:  # for the controller (`unconfigure`) and the other workers (`finished`),
        # written whole or not at all: another worker reads them as soon as they exist
        from portability_data.tables.atomic import atomic_write_bytes

        atomic_write_bytes(_session.base / "pid", str(_session.process.pid).encode())
        atomic_write_bytes(_session.base / "started", "\n".join(_session.jobs).encode())


def stop() -> None:
    """End what still runs (a session cut short) and remove the jobs' folders."""
    global _session
    if _session is None or _session.shared:  # another worker may still wait on a job: `unconfigure`
        return
    if _session.process is not None and _session.process.poll() is None:
        os.killpg(_session.process.pid, signal.SIGKILL)
        _session.process.wait()
    shutil.rmtree(_session.base, ignore_errors=True)
    _session = None


def _claimed_elsewhere(base: Path) -> dict[str, Path]:
    """The jobs another xdist worker started in the shared folder, once it says which (it prepares
    them first: a copy of the repository, seconds)."""
    started, deadline = base / "started", time.monotonic() + TIMEOUT_S
    while not started.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"no worker said which jobs it started beside the suite in {base}")
        time.sleep(0.2)
    return {name: base / name for name in started.read_text().split()}


def _read(folder: Path) -> Done:
    code = int((folder / "status").read_text())
    return Done(code, (folder / "stdout").read_text(), (folder / "stderr").read_text(), folder)


def finished(name: str, prepare: Prepare, scratch: Path | None = None) -> Done:
    """The job `name` once it has ended: started beside the suite, or else run now in `scratch`
    (a new temporary folder where none is given)."""
    if _session is not None and _session.shared and _session.process is None:
        _session.jobs = _claimed_elsewhere(_session.base)
    if _session is not None and name in _session.jobs:
        folder = _session.jobs[name]
        deadline = time.monotonic() + TIMEOUT_S
        while not (folder / "status").exists():
            ended = _session.process is not None and _session.process.poll() is not None
            if ended and not (folder / "status").exists():
                raise AssertionError(f"the jobs beside the suite ended before {name} did")
            if time.monotonic() > deadline:
                raise AssertionError(f"{name}, beside the suite, still runs after {TIMEOUT_S} s")
            time.sleep(0.2)
        return _read(folder)
    folder = scratch or Path(tempfile.mkdtemp(prefix=f"portability-{name}-"))
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["sh", "-c", _script(prepare(folder), folder)], check=True, timeout=TIMEOUT_S)
    return _read(folder)
