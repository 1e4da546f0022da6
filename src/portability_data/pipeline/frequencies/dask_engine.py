"""Counting a corpus on a Dask cluster (``frequencies.engine: dask``, issue 26): the same counter as the
local process pool, past one machine.

The driver streams the records in batches of ``partition_files``, scatters each batch to a worker
(straight there, not through the scheduler), submits one task on it, and keeps a bounded number of
batches in flight (``2 * threads`` of the cluster), so the corpus is never held whole. A task counts
its batch with ``count_chunk``, the function the local pool's workers call (``count_record`` per
file, folded into a ``CorpusCounts``), and sends back the partial sums; the driver merges them as
they complete. The sums are order-free (``Counter`` additions and the table is built from the api
frame's order), so the table is the local engine's, row for row.

The ``CountConfig`` (the ApiIndex, a few MB) is scattered to every worker once (``broadcast=True``)
and the tasks name it by its future: each worker holds one copy, it is never pickled per batch.

``scheduler_address: null`` starts a ``distributed.LocalCluster`` of ``num_proc`` single-threaded
worker processes on this machine (closed at the end); an address (``tcp://host:8786``) connects to
a running scheduler and leaves its cluster up. Records that name a ``path`` instead of carrying
their ``text`` (source ``path`` with a folder, ``installed``) are read by the worker, so a
multi-machine cluster needs that folder on every machine; the ``pinned`` and ``codeparrot`` sources
send the text.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from typing import Any

from portability_data.pipeline.corpus import Record
from portability_data.pipeline.frequencies.calls import parser
from portability_data.pipeline.frequencies.counting import CorpusCounts, CountConfig, count_chunk

log = logging.getLogger(__name__)

DEFAULT_PARTITION_FILES = 500
DASK_KEYS = frozenset({"scheduler_address", "partition_files"})


def _batches(records: Iterable[Record], size: int) -> Iterator[list[Record]]:
    it = iter(records)
    while batch := list(islice(it, size)):
        yield batch


def _count_batch(records: list[Record], config: CountConfig) -> CorpusCounts:
    """One task: a batch's partial sums, with the worker's own parser (built once per process)."""
    parser()
    return count_chunk(records, config)


def count_corpus_dask(
    records: Iterable[Record],
    config: CountConfig,
    *,
    num_proc: int = 1,
    progress: bool = False,
    options: Mapping[str, Any] | None = None,
) -> CorpusCounts:
    """Count ``records`` on a Dask cluster; the same ``CorpusCounts`` as ``count_corpus``.

    ``options`` is params.yaml's ``frequencies.dask``: ``scheduler_address`` (None starts a local
    cluster of ``num_proc`` worker processes with one thread each; otherwise the client connects to
    that scheduler and ``num_proc`` is unused) and ``partition_files`` (files per task).
    """
    from distributed import Client, LocalCluster, as_completed
    from tqdm import tqdm

    options = dict(options or {})
    unknown = sorted(set(options) - DASK_KEYS)
    if unknown:
        raise ValueError(f"unknown frequencies.dask key(s) {unknown}; known: {sorted(DASK_KEYS)}")
    scheduler_address = options.get("scheduler_address")
    partition_files = options.get("partition_files") or DEFAULT_PARTITION_FILES
    if int(partition_files) < 1:
        raise ValueError(f"frequencies.dask.partition_files must be at least 1, not {partition_files!r}")
    cluster = None
    if scheduler_address is None:
        cluster = LocalCluster(
            n_workers=max(1, int(num_proc)),
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",  # its HTTP server (health, dashboard) on a free port, not 8787
        )
        scheduler_address = cluster.scheduler_address
    total = CorpusCounts()
    try:
        with Client(scheduler_address) as client:
            threads = sum(client.nthreads().values()) or 1
            log.info("dask: %s, %d worker thread(s)", scheduler_address, threads)
            shared = client.scatter(config, broadcast=True)  # one copy per worker, named by its future
            batches = _batches(records, int(partition_files))
            bar = tqdm(desc="counting (dask)", unit="file", disable=not progress, mininterval=1.0)

            inputs = {}  # task key -> its scattered batch, held until the task is done

            def submit(batch: list[Record]):
                # The batch goes to a worker directly (scatter), not through the scheduler in the
                # task graph: 500 files of text are megabytes.
                [data] = client.scatter([batch], hash=False)
                future = client.submit(_count_batch, data, shared, pure=False)
                inputs[future.key] = data
                return future

            pending = as_completed()
            for batch in batches:
                pending.add(submit(batch))
                if pending.count() >= 2 * threads:
                    break
            for future in pending:
                partial = future.result()
                future.release()
                inputs.pop(future.key).release()
                total.merge(partial)
                bar.update(partial.counted)
                batch = next(batches, None)
                if batch is not None:
                    pending.add(submit(batch))
            bar.close()
    finally:
        if cluster is not None:
            cluster.close()
    return total
