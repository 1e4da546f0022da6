"""Where and with what code a run ran: host facts, package versions, and the code digests.

The runs row records the host (CPU, its kernel-relevant features, cores, memory), the packages
and git commit, and sha256 digests of the harness and of every case that ran, so that a changed
harness or case is a new run and a submission can be traced to a commit of this repository
(dataset/submission computes the same digests from git objects, with these functions).
`harness_digest` hashes CORE_FILES and a device path's module beside this module: this module must
stay in runner/.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from portability_data.runner.case_rows import load_rows
from portability_data.runner.census_rows import census_rows
from portability_data.runner.spec import Paths, RunSpec, select_cases


def cpu_model() -> str:
    """The host CPU's name, as the harness reads it (harness.py keeps its private name: its bytes
    are the harness digest)."""
    from portability_data.runner.backends import cpu_model as model

    return model()


# CPU features that change which kernels a framework picks (vector width, bf16/fp16, matrix units).
CPU_FEATURES = (
    "sse4_2", "avx", "f16c", "fma", "avx2", "avx512f", "avx512dq", "avx512bw", "avx512vl",
    "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8",
    "asimd", "sve", "sve2",
)  # fmt: skip


def host_facts() -> dict[str, Any]:
    """The host beyond its CPU name: the features its kernels can use, cores and memory."""
    flags: set[str] = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                flags.update(line.split(":", 1)[1].split())
                break
    memory_mb = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_mb = int(line.split()[1]) // 1024
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return {
        "cpu_flags": " ".join(f for f in CPU_FEATURES if f in flags) or None,
        "cpu_count": cpus,
        "memory_mb": memory_mb,
    }


def host_load() -> list[float]:
    """The host's 1-minute load average now (empty where the OS has none): with the run's own worker
    busy it is about 1; more means other work shares the cores and the latencies are contended."""
    try:
        return [os.getloadavg()[0]]
    except (AttributeError, OSError):
        return []


class OtherCpu:
    """How busy the host is with work that is not the run's: CPU time spent outside this process
    and its descendants (the workers, their compiler threads and children), in cores, over the
    interval since the last sample. The load average cannot tell the two apart: a compiled run's own
    compiler threads pushed it to 6.7 on an otherwise idle host, and it lags by a minute. Linux only
    (/proc); elsewhere every sample is None. Intervals shorter than `min_interval_s` are merged into
    the next (the kernel counts CPU time in ticks of 10 ms: a short interval says little)."""

    def __init__(self, min_interval_s: float = 1.0) -> None:
        self.min_interval_s = min_interval_s
        self.last = _cpu_snapshot()

    def sample(self) -> float | None:
        """Cores' worth of other work since the last sample taken; None where /proc cannot tell or
        the interval is still too short."""
        if self.last is not None and time.monotonic() - self.last[0] < self.min_interval_s:
            return None  # checked before reading /proc: a census run ends hundreds of short cases
        now = _cpu_snapshot()
        if now is None or self.last is None:
            self.last = now
            return None
        seconds = now[0] - self.last[0]
        other_ticks = (now[1] - self.last[1]) - (now[2] - self.last[2])
        self.last = now
        return round(max(other_ticks, 0) / _TICKS_PER_S / seconds, 3)


_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_snapshot() -> tuple[float, int, int] | None:
    """(monotonic seconds, the host's busy CPU ticks, this process tree's CPU ticks), or None."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
        # user nice system idle iowait irq softirq steal: busy is all but idle and iowait
        values = [int(v) for v in fields[1:9]]
        busy = sum(values) - values[3] - values[4]
        return time.monotonic(), busy, _tree_ticks(os.getpid())
    except (OSError, ValueError, IndexError):
        return None


def _process_table() -> tuple[dict[int, list[int]], dict[int, int]]:
    """(parent pid -> child pids, pid -> CPU ticks with its reaped children's) of every live process,
    from /proc/<pid>/stat (utime, stime, cutime, cstime); empty where there is no /proc."""
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:  # gone since the listing
            continue
        after = text.rsplit(")", 1)[1].split()  # the command name may hold spaces and parentheses
        children.setdefault(int(after[1]), []).append(int(entry.name))
        ticks[int(entry.name)] = sum(int(v) for v in after[11:15])
    return children, ticks


def descendants(root: int) -> list[int]:
    """The live descendants of `root`, its workers in sessions of their own included (a process
    group kill does not reach those)."""
    children, _ = _process_table()
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def _tree_ticks(root: int) -> int:
    """CPU ticks of `root` and its live descendants, each with its reaped children's: a worker that
    exited is counted in its parent."""
    _, ticks = _process_table()
    return ticks.get(root, 0) + sum(ticks.get(pid, 0) for pid in descendants(root))


# The code that decides how a case runs and is timed: the shared core, in every setting's digest,
# and the device path's module (runner/devices/<path>.py, with the path modules it imports), in its
# own settings' only (issue 50). Before the paths were records the harness was one set of files
# for every setting (LEGACY_HARNESS_FILE_SETS, newest first: the harness was one file until it was
# split into harness, backends and timing), so submissions made by older commits still match.
CORE_FILES = ("harness.py", "backends.py", "timing.py", "worker.py", "devices/__init__.py")
DEVICES_FOLDER = "devices"
LEGACY_HARNESS_FILE_SETS = (
    ("harness.py", "backends.py", "timing.py", "worker.py"),
    ("harness.py", "worker.py"),
)
# The census's judge (not the harness: curated cases do not use it), in every census case's digest.
ORACLE_FILE = Path(__file__).resolve().parent / "oracle.py"
# Runner modules that make a census module's inputs (the shared generator), judge them (the device
# judge: reference and host CPU) or say what its rows hold of them (result dtypes): in the digest of
# each census case whose test file imports them. Not yet census_rows.py (sample caps, the
# not-in-wheel skip), which every census module imports: adding it re-measures every census setting
# (~2.5 h here), so it waits for the next full census re-measure.
CENSUS_INPUT_FILES = tuple(
    ORACLE_FILE.parent / name
    for name in ("generator.py", "promotion.py", "device_oracle.py", "nn_samples.py")
)
# The runner package's own dotted path, as the harness files name it. It is written as the package
# root before hashing, so the digest is of the code, not of where the package lives: the move of
# the flat modules into runner/ (issue 17) is not a harness change, and every other byte is.
RUNNER_PACKAGE = re.compile(rb"\bportability_data\.runner\b")
# A path module's import of another path module (tpu.py builds on xla.py's torch_xla backend).
PATH_IMPORT = re.compile(rb"\bportability_data\.runner\.devices\.(\w+)\b")


def sha256_of_parts(*parts: bytes) -> str:
    """sha256 over the sha256 of each part (so parts cannot run into each other)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def relocatable(source: bytes) -> bytes:
    """A harness file as hashed: its bytes with the runner package's dotted path made neutral."""
    return RUNNER_PACKAGE.sub(b"portability_data", source)


def harness_digest_of(harness_files: list[bytes], conftest: bytes) -> str:
    """The harness digest of the harness files' bytes (in order: the core's, then the path's) and
    the cases' conftest."""
    return sha256_of_parts(*(relocatable(part) for part in [*harness_files, conftest]))


def path_files(modules: dict[str, bytes], name: str) -> list[str]:
    """The module file names of device path `name`'s digest: its own, then each path module it
    imports (transitively), in name order; `modules` maps devices/ file names to their bytes."""
    own = f"{name}.py"
    found, stack = {own}, [own]
    while stack:
        for imported in PATH_IMPORT.findall(modules.get(stack.pop(), b"")):
            file = f"{imported.decode()}.py"
            if file in modules and file not in found:
                found.add(file)
                stack.append(file)
    return [own, *sorted(found - {own})]


def path_harness_digest(core: list[bytes], modules: dict[str, bytes], name: str, conftest: bytes) -> str:
    """The harness digest of path `name` from the core's bytes (CORE_FILES order) and the devices/
    modules' bytes by file name (how a commit's digests are computed from git objects too)."""
    return harness_digest_of([*core, *(modules[file] for file in path_files(modules, name))], conftest)


def device_modules(devices_dir: Path) -> dict[str, bytes]:
    """file name -> bytes of every path module in runner/devices/ (the registry's own file apart)."""
    return {p.name: p.read_bytes() for p in sorted(devices_dir.glob("*.py")) if p.name != "__init__.py"}


def harness_digest(cases_dir: Path, device: str) -> str:
    """sha256 over the harness's shared core, the device path's module and the cases' conftest
    (which loads the harness): the digest of every setting on that path."""
    from portability_data.runner.devices import path_named

    here = Path(__file__).resolve().parent
    conftest = cases_dir / "conftest.py"
    module = path_named(device).module.removesuffix(".py")
    return path_harness_digest(
        [(here / name).read_bytes() for name in CORE_FILES],
        device_modules(here / DEVICES_FOLDER),
        module,
        conftest.read_bytes() if conftest.exists() else b"",
    )


# Harness digests of the layout before device paths were records (one digest for every setting),
# carried over the move (issue 50), which changed no behaviour: a run measured with `legacy` counts
# as measured with its path's digest at `commit` (the move), so it stays current exactly while its
# path's module and the shared core are as they were then. tests/test_device_paths.py recomputes
# both sides from git objects: `legacy` from the commit before the move, the paths' from the move.
CARRIED_HARNESS: tuple[dict[str, Any], ...] = (
    {
        "legacy": "fcc1ca6bf8bc288bf641b55cd65caee284d3fbd1d4c81291b3299b6ec2dab6db",
        "commit": "33c3f1332ab6e96e45e682953acedc60b7122e8e",
        "paths": {
            "cpu": "d14ef6342dc2d1bb78a43d9614851526a213184a340954e337a136fb9f2c805b",
            "gpu": "000889c26cf5fbbd4e0005991096189d4b4caea1084f75132e76b9921cb65591",
            "mps": "bebbd4e78a960fea7aa9d84d3b813907c2ed9066ccbef6f65c889719fc0edb3b",
            "tpu": "0a9e4f37be59f5a6a9f1472ab5e538fe559f08b6beffc34e17714bee21208aa2",
            "xla": "ab8ea0ec9dde10aba78d651a0f806d779e90c95df1184f3ca1715f6ab06931d8",
        },
    },
)


def carried_digests(device: str, today: str) -> tuple[str, ...]:
    """The legacy harness digests that count as today's harness `today` of path `device`."""
    return tuple(c["legacy"] for c in CARRIED_HARNESS if c["paths"].get(device) == today)


def case_digests(paths: Paths, case_ids: Any, framework: str) -> dict[str, str]:
    """case_id -> sha256 of its row file and test file, as they are on disk now."""
    rows = {r["case_id"]: r for r in load_rows(paths.cases_dir, paths.repo_root, (framework,))}
    rows.update((r["case_id"], r) for r in census_rows(paths.cases_dir, paths.repo_root, framework))
    found = {}
    for case_id in sorted(case_ids):
        row = rows.get(case_id)
        if row is None:
            continue
        parts = [(paths.repo_root / row["_row_file"]).read_bytes()]
        test_source = (paths.repo_root / row["test_file"]).read_bytes() if row.get("test_file") else b""
        if row.get("test_file"):
            parts.append(test_source)
        if row.get("origin"):  # a census entry: its samples are judged by the shared oracle
            parts.append(ORACLE_FILE.read_bytes())
            parts.extend(path.read_bytes() for path in census_inputs_of(test_source))
        found[case_id] = sha256_of_parts(*parts)
    return found


def census_inputs_of(test_source: bytes) -> list[Path]:
    """The CENSUS_INPUT_FILES a census test file imports (`portability_data.runner.generator`)."""
    return [
        path
        for path in CENSUS_INPUT_FILES
        if re.search(rb"\bportability_data\.runner\.%s\b" % path.stem.encode(), test_source)
    ]


def listed_cases_digest(digests: dict[str, str]) -> str:
    """The runs row's cases_digest: sha256 over its case digests (case_id=digest, sorted)."""
    return sha256_of_parts(*(f"{k}={v}".encode() for k, v in sorted(digests.items())))


def selected_case_digests(paths: Paths, spec: RunSpec) -> dict[str, str]:
    """case_id -> digest of every case the spec selects, as the files are on disk now."""
    return case_digests(paths, [r["case_id"] for r in select_cases(spec, paths)], spec.framework)


def code_digests(paths: Paths, spec: RunSpec) -> dict[str, Any]:
    """The runs row's digests: what code ran the cases, and which version of each case ran."""
    digests = selected_case_digests(paths, spec)
    return {
        "harness_digest": harness_digest(paths.cases_dir, spec.device),
        "cases_digest": listed_cases_digest(digests),
        "case_digests": json.dumps(digests, sort_keys=True),
    }


def package_versions(framework: str) -> dict[str, str]:
    """Versions of Python, the framework's packages, NumPy, pytest and this package (those found)."""
    from importlib import metadata

    names = {"torch": ["torch"], "tensorflow": ["tensorflow", "tensorflow-cpu"], "jax": ["jax", "jaxlib"]}
    found = {"python": platform.python_version()}
    for name in [*names[framework], "numpy", "pytest", "portability-data"]:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


PACKAGE_DIR = Path(__file__).resolve().parents[1]  # src/portability_data: the code running now


def code_modified(repo_root: Path, package_dir: Path = PACKAGE_DIR) -> bool | None:
    """Whether the package's code (src/) differs from HEAD: tracked files changed or files added.
    None where that says nothing of the code that ran: outside git, without git, or where the
    running package is not this checkout's (installed elsewhere, another worktree's). A run from a
    checkout with such changes ran code that git_commit does not name; the harness and case digests
    cover only their own files."""
    if Path(package_dir).resolve() != (Path(repo_root) / "src" / "portability_data").resolve():
        return None
    out = _git(repo_root, ["status", "--porcelain", "--", "src"], timeout_s=30)
    return None if out is None or out.returncode != 0 else bool(out.stdout.strip())


def code_state(repo_root: Path, package_dir: Path = PACKAGE_DIR) -> dict[str, Any]:
    """{git_commit, code_modified} of the checkout now: taken when a run starts (journaled) and
    again when it finishes, for code_as_run."""
    return {
        "git_commit": git_commit(repo_root),
        "code_modified": code_modified(repo_root, package_dir),
        "src_tree": src_tree(repo_root),
    }


def src_tree(repo_root: Path) -> str | None:
    """The git tree object of HEAD's src/: equal in two commits exactly when their code is, so a
    commit of data made while a run measures is not a change of the code that ran."""
    out = _git(repo_root, ["rev-parse", "HEAD:src"], timeout_s=10)
    return None if out is None or out.returncode != 0 else out.stdout.strip() or None


def code_as_run(at_start: dict[str, Any] | None, at_finish: dict[str, Any]) -> tuple[str | None, bool | None]:
    """(git_commit, code_modified) for the runs row: the commit the run started from, and whether
    code beside it ran. Workers import the code when they start, and a run replaces them as it goes
    (a crash, a timeout, a resume), so a commit or a change to src/ made while it ran is code that
    ran too: modified, unless the two commits hold the same src/ tree (data committed while it ran;
    a journal without src_tree, from before it was recorded, counts any commit as a change). A
    journal from before the start was recorded gives the finish's state."""
    if at_start is None:
        return at_finish["git_commit"], at_finish["code_modified"]
    if at_start["git_commit"] != at_finish["git_commit"] and (
        at_start.get("src_tree") is None or at_start.get("src_tree") != at_finish.get("src_tree")
    ):
        return at_start["git_commit"], True
    readings = (at_start["code_modified"], at_finish["code_modified"])
    if True in readings:
        return at_start["git_commit"], True
    return at_start["git_commit"], None if None in readings else False


def git_commit(repo_root: Path) -> str | None:
    """The checkout's HEAD commit (None outside git or where git is absent)."""
    out = _git(repo_root, ["rev-parse", "HEAD"], timeout_s=10)
    return None if out is None else out.stdout.strip() or None


def _git(repo_root: Path, args: list[str], timeout_s: float) -> subprocess.CompletedProcess[str] | None:
    """git run in the checkout, its output as text; None where git is absent or hangs."""
    try:
        return subprocess.run(
            ["git", "-C", str(repo_root), *args],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
