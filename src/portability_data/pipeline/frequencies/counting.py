"""Counting a corpus: one record to one `FileResult` (read, decode, skip or count), and a stream of
records counted in `num_proc` worker processes with a bounded number of files in flight, each worker
sending back partial sums (`CorpusCounts`) rather than one result per file.

Apart from the scan (calls.py, what one file holds) and the table (build.py, what the
stage writes): this is the parallel driver between them.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from portability_data.pipeline.corpus import Record, contains_framework
from portability_data.pipeline.frequencies.calls import count_source, parser
from portability_data.pipeline.frequencies.index import ApiIndex

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 1_000_000


@dataclass
class FileResult:
    """The counts of one file, or the reason it was skipped."""

    key: str
    frameworks: tuple[str, ...] = ()
    bare: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    size: int = 0
    skipped: str | None = None
    flags: tuple[str, ...] = ()


def decode_source(data: bytes | str, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes | None, str | None]:
    """The file's UTF-8 bytes, or why it is skipped: binary, huge, encoding, empty is not a skip."""
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates in a decoded string
            return None, "encoding"
    if len(data) > max_bytes:
        return None, "huge"
    if b"\x00" in data:
        return None, "binary"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "encoding"
    return data, None


@dataclass(frozen=True)
class CountConfig:
    """Everything a worker needs, sent once per process."""

    api: ApiIndex
    frameworks: tuple[str, ...]
    max_bytes: int = DEFAULT_MAX_BYTES
    syntax_errors: str = "count"  # count | skip (the study dropped files with syntax errors)


def count_record(record: Record, config: CountConfig) -> FileResult:
    """Count one corpus record; never raises (a failure is a counted skip reason)."""
    result = FileResult(record.key)
    try:
        if record.text is not None:
            data: bytes | str = record.text
        elif record.path is not None:
            with open(record.path, "rb") as handle:
                data = handle.read(config.max_bytes + 1)
        else:
            result.skipped = "empty_record"
            return result
    except OSError:
        result.skipped = "unreadable"
        return result
    source, reason = decode_source(data, config.max_bytes)
    if source is None:
        result.skipped = reason
        return result
    result.size = len(source)
    text = record.text if record.text is not None else source.decode("utf-8")
    frameworks = record.frameworks
    if frameworks is None:
        frameworks = tuple(fw for fw in config.frameworks if contains_framework(fw, text))
    result.frameworks = frameworks
    if not frameworks:
        result.skipped = "no_framework_import"
        return result
    try:
        bare, calls, flags = count_source(source, config.api)
    except Exception as exc:  # a parser or recursion failure on a pathological file
        log.debug("failed on %s: %r", record.key, exc)
        result.skipped = "parse_failure"
        return result
    result.flags = flags
    if "syntax_error" in flags and config.syntax_errors == "skip":
        result.skipped = "syntax_error"
        return result
    result.bare, result.calls = bare, calls
    return result


_WORKER_CONFIG: CountConfig | None = None


def _init_worker(config: CountConfig) -> None:
    global _WORKER_CONFIG
    _WORKER_CONFIG = config
    parser()


def _work(record: Record) -> FileResult:
    assert _WORKER_CONFIG is not None
    return count_record(record, _WORKER_CONFIG)


def _bounded(items: Iterable, slots: threading.Semaphore) -> Iterator:
    for item in items:
        slots.acquire()
        yield item


def _pool(num_proc: int, config: CountConfig):
    import multiprocessing

    # Forking a process that has loaded TensorFlow (or another threaded runtime) can crash the child.
    threaded = any(name in sys.modules for name in ("tensorflow", "torch", "jax"))
    context = multiprocessing.get_context("fork" if os.name == "posix" and not threaded else "spawn")
    return context.Pool(num_proc, initializer=_init_worker, initargs=(config,))


def count_files(
    records: Iterable[Record], config: CountConfig, *, num_proc: int = 1, progress: bool = False
) -> Iterator[FileResult]:
    """Count records one by one in ``num_proc`` processes; a few hundred files at most in flight.

    For per-file results (tests, inspection); a corpus is counted by ``count_corpus``, which sends
    the main process partial sums instead of one result per file.
    """
    from tqdm import tqdm

    bar = tqdm(desc="counting", unit="file", disable=not progress, mininterval=1.0)
    if num_proc <= 1:
        _init_worker(config)
        for record in records:
            result = _work(record)
            bar.update()
            yield result
        bar.close()
        return
    slots = threading.Semaphore(num_proc * 64)
    with _pool(num_proc, config) as pool:
        for result in pool.imap_unordered(_work, _bounded(records, slots), chunksize=8):
            slots.release()
            bar.update()
            yield result
    bar.close()


@dataclass
class CorpusStats:
    """Files counted, skipped (by reason) and flagged; bytes read."""

    files: Counter[str] = field(default_factory=Counter)  # per framework
    skipped: Counter[str] = field(default_factory=Counter)
    flags: Counter[str] = field(default_factory=Counter)
    bytes: int = 0

    def summary(self) -> str:
        return (
            f"files per framework {dict(self.files)}, skipped {dict(self.skipped)},"
            f" flagged {dict(self.flags)}, {self.bytes / 1e6:.1f} MB"
        )

    def merge(self, other: CorpusStats) -> None:
        self.files.update(other.files)
        self.skipped.update(other.skipped)
        self.flags.update(other.flags)
        self.bytes += other.bytes


@dataclass
class CorpusCounts:
    """The sums over some files, per framework: bare-name counts, resolved calls, files per call.

    A worker folds a chunk of files into one of these and the main process merges them: a few
    hundred names per chunk cross the process boundary instead of a result per file, so the main
    process stays nearly idle and the workers have the cores.
    """

    bare: dict[str, Counter[str]] = field(default_factory=dict)
    calls: dict[str, Counter[str]] = field(default_factory=dict)
    files: dict[str, Counter[str]] = field(default_factory=dict)
    stats: CorpusStats = field(default_factory=CorpusStats)
    counted: int = 0  # records seen, skipped ones included

    def add(self, result: FileResult, config: CountConfig) -> None:
        """Fold one file in: its calls count for the counted frameworks it imports, by their owner."""
        self.counted += 1
        self.stats.flags.update(result.flags)
        if result.skipped:
            self.stats.skipped[result.skipped] += 1
            return
        self.stats.bytes += result.size
        qualified = config.api.qualified
        for fw in result.frameworks:
            if fw not in config.frameworks:
                continue
            self.stats.files[fw] += 1
            self.bare.setdefault(fw, Counter()).update(result.bare)
            calls, files = self.calls.setdefault(fw, Counter()), self.files.setdefault(fw, Counter())
            for name, n in result.calls.items():
                if qualified.get(name) == fw:
                    calls[name] += n
                    files[name] += 1

    def merge(self, other: CorpusCounts) -> None:
        self.counted += other.counted
        self.stats.merge(other.stats)
        for mine, theirs in ((self.bare, other.bare), (self.calls, other.calls), (self.files, other.files)):
            for fw, counter in theirs.items():
                mine.setdefault(fw, Counter()).update(counter)


def _chunks(records: Iterable[Record], size: int) -> Iterator[list[Record]]:
    chunk: list[Record] = []
    for record in records:
        chunk.append(record)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def count_chunk(records: Iterable[Record], config: CountConfig) -> CorpusCounts:
    """The partial sums of some records: what a local worker or a distributed task sends back."""
    counts = CorpusCounts()
    for record in records:
        counts.add(count_record(record, config), config)
    return counts


def _work_chunk(records: list[Record]) -> CorpusCounts:
    assert _WORKER_CONFIG is not None
    return count_chunk(records, _WORKER_CONFIG)


def count_corpus(
    records: Iterable[Record],
    config: CountConfig,
    *,
    num_proc: int = 1,
    progress: bool = False,
    chunk_files: int = 16,
) -> CorpusCounts:
    """Count a corpus streamed from ``records`` in ``num_proc`` processes, memory bounded.

    Records are sent in chunks of ``chunk_files``; at most ``4 * num_proc`` chunks are in flight (read
    from the stream but not yet counted), so the corpus is never held whole, and each worker sends
    back one ``CorpusCounts`` per chunk.
    """
    from tqdm import tqdm

    total = CorpusCounts()
    if num_proc <= 1:
        for result in count_files(records, config, progress=progress):
            total.add(result, config)
        return total
    bar = tqdm(desc="counting", unit="file", disable=not progress, mininterval=1.0)
    slots = threading.Semaphore(num_proc * 4)
    with _pool(num_proc, config) as pool:
        for partial in pool.imap_unordered(_work_chunk, _bounded(_chunks(records, chunk_files), slots)):
            slots.release()
            total.merge(partial)
            bar.update(partial.counted)
    bar.close()
    return total
