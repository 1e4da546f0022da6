"""The host's other work, as the runs row records it (runs.host_other_cpu_*): CPU time spent outside
the run's own process tree, so a run's own busy worker does not make it look contended and a
process it did not start does. Asserted on CPU time the processes report themselves, so other work
on the test machine can only add to what is measured, never break the checks."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from portability_data.runner.provenance import _TICKS_PER_S, OtherCpu, _cpu_snapshot, _tree_ticks

# Busy until it has used {seconds} of CPU (not of wall time: on a loaded machine a wall-time loop
# gets a fraction of a core, and the tests' "it did run" floor would fail for the wrong reason).
BUSY = (
    "import time\nwhile time.process_time() < {seconds}: pass\n"
    "open({out!r}, 'w').write(str(time.process_time()))\n"
)

pytestmark = pytest.mark.skipif(_cpu_snapshot() is None, reason="needs Linux /proc")


def test_a_busy_child_of_the_run_counts_as_the_runs_own_work(tmp_path: Path) -> None:
    out = tmp_path / "cpu"
    before = _tree_ticks(os.getpid())
    subprocess.run([sys.executable, "-c", BUSY.format(seconds=1.0, out=str(out))], check=True)
    own_seconds = (_tree_ticks(os.getpid()) - before) / _TICKS_PER_S
    assert own_seconds >= 0.8 * float(out.read_text()) > 0.3  # the child's CPU time is the tree's


def test_a_process_the_run_did_not_start_is_other_work(tmp_path: Path) -> None:
    out = tmp_path / "cpu"
    code = BUSY.format(seconds=1.5, out=str(out))
    sampler = OtherCpu(min_interval_s=0.5)
    before, started = _tree_ticks(os.getpid()), time.monotonic()
    # started by a shell that exits at once: the loop is reparented, outside this process tree
    subprocess.run(["sh", "-c", f'{sys.executable} -c "$0" &', code], check=True)
    while not out.exists() and time.monotonic() - started < 60:
        time.sleep(0.1)
    cores, elapsed = sampler.sample(), time.monotonic() - started
    stranger_seconds = float(out.read_text())
    assert (_tree_ticks(os.getpid()) - before) / _TICKS_PER_S < 0.5 * stranger_seconds
    assert cores is not None and cores >= 0.8 * stranger_seconds / elapsed


def test_an_interval_too_short_is_merged_into_the_next() -> None:
    sampler = OtherCpu(min_interval_s=60.0)
    assert sampler.sample() is None
