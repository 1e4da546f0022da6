"""torch.distributed.is_torchelastic_launched: True exactly when TORCHELASTIC_RUN_ID is in the environment."""

import os
import subprocess
import sys

import pytest
import torch.distributed as dist


@pytest.mark.parametrize(
    "value,expected",
    [(None, False), ("job-42", True), ("", True), ("none", True)],
    ids=["unset", "run_id", "empty_string", "literal_none"],
)
def test_is_torchelastic_launched_env(timed, monkeypatch, value, expected):
    # Documented proxy: the variable's existence, whatever its value (even empty).
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    if value is not None:
        monkeypatch.setenv("TORCHELASTIC_RUN_ID", value)
    with timed.region() as r:
        r.result = dist.is_torchelastic_launched()
    assert r.result is expected


def test_is_torchelastic_launched_ignores_plain_rank_env(timed, monkeypatch):
    # A launcher that sets only RANK/WORLD_SIZE/MASTER_* (mpirun, a hand-rolled script) is not torchelastic.
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    for key, value in {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "localhost"}.items():
        monkeypatch.setenv(key, value)
    with timed.region() as r:
        r.result = dist.is_torchelastic_launched()
    assert r.result is False


def test_is_torchelastic_launched_reads_live_environment(timed, monkeypatch):
    # No caching: the answer follows the environment as it changes within one process.
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    with timed.region() as r:
        seen = [dist.is_torchelastic_launched()]
        monkeypatch.setenv("TORCHELASTIC_RUN_ID", "abc")
        seen.append(dist.is_torchelastic_launched())
        monkeypatch.delenv("TORCHELASTIC_RUN_ID")
        seen.append(dist.is_torchelastic_launched())
        r.result = seen
    assert r.result == [False, True, False]


def test_is_torchelastic_launched_child_process(timed):
    # A fresh interpreter sees what its parent passed down, as a torchrun worker does.
    env = {k: v for k, v in os.environ.items() if k != "TORCHELASTIC_RUN_ID"}
    env["TORCHELASTIC_RUN_ID"] = "child-run"
    code = "import torch.distributed as d; print(d.is_torchelastic_launched())"
    with timed.region() as r:
        cmd = [sys.executable, "-c", code]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        r.result = out.stdout.strip()
    assert out.returncode == 0, out.stderr
    assert r.result == "True"
