"""A worker's last words: where a subtest was when its worker went down (a timeout, the memory
cap, a crash), read from the Python stack the worker dumped to the run's log.

pytest's faulthandler plugin, on in every case worker, writes each thread's Python stack to the
worker's stderr (the run's log) when the worker gets SIGSEGV, SIGABRT, SIGBUS, SIGFPE or SIGILL. A
crash leaves that dump already; a worker that hangs or passes the memory cap is sent SIGABRT before
it is killed (worker_process.Worker.last_words), so that it writes one too. The row's message then
says where it was, not only that it stopped: "no result after 900 s; at the timeout: in
iree/compiler/tools/binaries.py:198 invoke_immediate, from runner/devices/iree.py:250 build, from
cases/torch/census/test_opinfo.py:83 run_one; running iree-compile". Frames of the framework, of
the device path and of the case are named where the stack holds them, innermost first. A log that
holds no dump, or two (another worker sharing the log died at the same time), says nothing: a
place is named only where it is the subtest's own.
"""

from __future__ import annotations

import re

FATAL = re.compile(r"^(?:.*?)Fatal Python error: ", re.MULTILINE)
# faulthandler's frame line: `  File "/path/x.py", line 12 in function`
FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)')
# the header of the thread that got the signal (several threads), or of the only one
CURRENT = re.compile(r"^(Current thread 0x[0-9a-f]+|Stack) \(most recent call first\):", re.MULTILINE)
STDLIB = re.compile(r"/lib/python\d+\.\d+/")


def frames_of(log_text: str) -> list[tuple[str, int, str]] | None:
    """(file, line, function) of the signalled thread, innermost first, from the one faulthandler
    dump in `log_text`; None where it holds none or several."""
    dumps = list(FATAL.finditer(log_text))
    if len(dumps) != 1:
        return None
    current = CURRENT.search(log_text, dumps[0].end())
    if current is None:
        return None
    frames = []
    for line in log_text[current.end() :].splitlines()[1:]:
        match = FRAME.match(line)
        if match is None:
            break
        frames.append((match["file"], int(match["line"]), match["function"]))
    return frames or None


def short_path(path: str) -> str:
    """A frame's file as a reader finds it: from the package (site-packages), from this package's
    runner/ or the repository's cases/, from the standard library, else as written."""
    if "site-packages/" in path:
        return path.rsplit("site-packages/", 1)[1]
    if "/portability_data/" in path:
        return path.rsplit("/portability_data/", 1)[1]
    if "/cases/" in path:
        return "cases/" + path.rsplit("/cases/", 1)[1]
    found = STDLIB.search(path)
    return path[found.end() :] if found else path


def where(frames: list[tuple[str, int, str]]) -> str:
    """The innermost frame, then the innermost of the device path's module and of the case file
    (each once): what ran, which stage of the path, and which line of the case."""
    picked = [frames[0]]
    for mark in ("/runner/devices/", "/cases/"):
        ours = next((frame for frame in frames if mark in frame[0]), None)
        if ours is not None and ours not in picked:
            picked.append(ours)
    return ", from ".join(f"{short_path(file)}:{line} {function}" for file, line, function in picked)


def last_words(log_text: str, moment: str, running: list[str] | None = None) -> str | None:
    """`at the <moment>: in <where>[; running <child processes>]`, or None without a dump of its
    own. `moment`: timeout, memory cap or crash."""
    frames = frames_of(log_text)
    if frames is None:
        return None
    said = f"at the {moment}: in {where(frames)}"
    if running:
        said += f"; running {', '.join(sorted(set(running)))}"
    return said
