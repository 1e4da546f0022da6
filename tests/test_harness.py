"""The harness pins and checks placement: an op placed on the wrong device is caught, not passed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from portability_data.harness import DevicePlacementError, Timer, TorchBackend


def test_torch_output_on_another_device_is_caught() -> None:
    import torch

    timer = Timer(TorchBackend("cpu"), "eager", warmup=0)
    assert timer(torch.add, torch.ones(2), 1).tolist() == [2.0, 2.0]
    with pytest.raises(DevicePlacementError, match="meta"):
        timer(lambda: torch.ones(2, device="meta"))


def test_timer_records_every_call_and_routes_compiled_mode() -> None:
    import torch

    timer = Timer(TorchBackend("cpu"), "compiled", warmup=1)
    x = torch.arange(6.0)
    out = timer(torch.cumsum, x, dim=0)
    assert out.tolist() == [0.0, 1.0, 3.0, 6.0, 10.0, 15.0]
    assert len(timer.timings_ms) == 1 and timer.timings_ms[0] > 0
    assert len(timer._compiled) == 1  # a compiled function, with dim bound as a constant
    timer.once(torch.cumsum, x, dim=0)
    assert len(timer.timings_ms) == 2


def _run_isolated(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
        timeout=300,
    )


def test_jax_array_on_another_device_is_caught() -> None:
    out = _run_isolated(
        """
        import jax, jax.numpy as jnp
        from portability_data.harness import JaxBackend, Timer, DevicePlacementError
        timer = Timer(JaxBackend("cpu"), "eager", warmup=0)
        assert float(timer(jnp.sum, jnp.ones(3))) == 3.0
        other = jax.devices("cpu")[1]
        try:
            timer(lambda: jax.device_put(jnp.ones(3), other))
        except DevicePlacementError as exc:
            print("caught:", exc)
    """,
        {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
    )
    assert "caught: output array on {CpuDevice(id=1)}" in out.stdout, out.stderr[-2000:]


def test_tensorflow_op_on_another_device_is_caught_and_soft_placement_is_off() -> None:
    out = _run_isolated(
        """
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        from portability_data.harness import TensorFlowBackend, Timer, DevicePlacementError
        backend = TensorFlowBackend("cpu")
        timer = Timer(backend, "eager", warmup=0)
        with backend.pinned("eager"):
            assert timer(tf.add, tf.constant(1.0), 2.0).numpy() == 3.0
        def elsewhere():
            with tf.device("/device:CPU:1"):
                return tf.constant([1.0]) * 2
        try:
            timer(elsewhere)
        except DevicePlacementError as exc:
            print("caught:", exc)
        try:
            with tf.device("/device:GPU:0"):
                tf.constant([1.0]) + 1
            print("silently fell back")
        except tf.errors.InvalidArgumentError:
            print("no soft placement")
    """,
        {"TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert "caught: output tensor on '/job:localhost/replica:0/task:0/device:CPU:1'" in out.stdout, (
        out.stderr[-2000:]
    )
    assert "no soft placement" in out.stdout


def test_wrong_device_fails_the_subtest_in_a_run(case_repo) -> None:
    import pyarrow.parquet as pq

    from portability_data.runner import Paths, RunSpec, run

    case_repo.add(
        "torch",
        "misplaced",
        """
        import torch

        def test_on_meta(device, timed):
            timed(lambda: torch.zeros(3, device="meta"))

        def test_on_device(device, timed):
            assert timed(torch.zeros, 3).device.type == "cpu"
        """,
    )
    paths = Paths.under(case_repo.root)
    run_id = run(RunSpec(framework="torch", device="cpu", repeats=1), paths, log=lambda m: None)
    rows = {
        r["subtest"]: r
        for r in pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
    }
    assert rows["test_on_meta"]["outcome"] == "failed"
    assert rows["test_on_meta"]["error_type"] == "DevicePlacementError"
    assert (
        rows["test_on_device"]["outcome"] == "passed" and len(rows["test_on_device"]["op_latencies_ms"]) == 1
    )


def test_compiled_mode_never_mixes_targets_and_never_falls_back_silently() -> None:
    import torch

    backend = TorchBackend("cpu")
    backend.start_test("compiled")
    timer = Timer(backend, "compiled", warmup=1)
    m = torch.tensor([[2.0, 1.0], [1.0, 3.0]])
    sign, logabs = timer(torch.Tensor.slogdet, m)
    logdet = timer(torch.Tensor.logdet, m)  # same input kind, another function: compiled apart
    assert float(sign) == 1.0 and abs(float(logdet) - float(logabs)) < 1e-6
    assert logdet.dim() == 0
    for dtype in (
        torch.float32,
        torch.float64,
        torch.float16,
        torch.int32,
        torch.int64,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bfloat16,
        torch.complex64,
    ):
        timer(torch.neg, torch.ones(3, dtype=dtype))  # more dtypes than the default recompile limit
    assert torch._dynamo.config.fail_on_recompile_limit_hit
