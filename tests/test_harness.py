"""The harness pins and checks placement: an op placed on the wrong device is caught, not passed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from portability_data.runner.backends import (
    DevicePlacementError,
    HostPlacementError,
    JaxBackend,
    TensorFlowBackend,
    TorchBackend,
)
from portability_data.runner.timing import Timer, subtest_execution


def test_torch_output_on_another_device_is_caught() -> None:
    import torch

    timer = Timer(TorchBackend("cpu"), "eager", warmup=0)
    assert timer(torch.add, torch.ones(2), 1).tolist() == [2.0, 2.0]
    with pytest.raises(DevicePlacementError, match="meta"):
        timer(lambda: torch.ones(2, device="meta"))


def test_an_output_on_the_host_is_host_placement_only_off_the_host() -> None:
    """Under test on an accelerator, an output on the host is a host fallback (HostPlacementError);
    under test on the host, an output elsewhere is a plain placement error. The accelerator is a
    stand-in device object here (the rule reads only its platform); the outputs are real."""
    import jax
    import jax.numpy as jnp
    import tensorflow as tf

    jax_backend = JaxBackend("cpu")
    jax_backend._device = type("Accelerator", (), {"platform": "tpu", "__repr__": lambda s: "TPU_0"})()
    with pytest.raises(HostPlacementError, match="TPU_0"):
        jax_backend.check_placement(jnp.ones(2))
    on_host = JaxBackend("cpu")
    on_host.check_placement(jax.device_put(jnp.ones(2), jax.devices("cpu")[0]))

    tf_backend = TensorFlowBackend("cpu")
    tf_backend.device_type = "GPU"  # under test: /device:GPU:0
    with pytest.raises(HostPlacementError, match="CPU:0"):
        tf_backend.check_placement(tf.ones(2))
    with pytest.raises(DevicePlacementError) as plain:
        TorchBackend("cpu").check_placement(__import__("torch").ones(2, device="meta"))
    assert not isinstance(plain.value, HostPlacementError)


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
        from portability_data.runner.backends import DevicePlacementError, JaxBackend
        from portability_data.runner.timing import Timer
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
        from portability_data.runner.backends import DevicePlacementError, TensorFlowBackend
        from portability_data.runner.timing import Timer
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

    from portability_data.runner.spec import Paths, RunSpec
    from portability_data.runner.supervisor import run

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


def test_compiled_mode_never_mixes_targets_and_really_compiles() -> None:
    """Each target compiles apart, through dynamo as one graph (fullgraph): execution 'compiled'."""
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
    assert set(timer.executions) == {"compiled"}
    assert sum(timer.graph_breaks.values()) == 0
    assert subtest_execution("compiled", timer.executions) == "compiled"


def _prints_between(x):  # a graph break dynamo cannot trace through
    y = x.sin()
    print("side effect")
    return y.cos()


def test_graph_break_is_detected_and_counted_not_called_compiled() -> None:
    import torch

    backend = TorchBackend("cpu")
    backend.start_test("compiled")
    timer = Timer(backend, "compiled", warmup=1)
    out = timer(_prints_between, torch.ones(3))
    assert torch.allclose(out, torch.ones(3).sin().cos())
    assert timer.executions == ["graph_breaks"]
    assert sum(timer.graph_breaks.values()) >= 1
    assert subtest_execution("compiled", [*timer.executions, "compiled"]) == "graph_breaks"


def test_eager_fallback_is_detected() -> None:
    """dynamo makes no graph for sparse tensors and runs them eagerly, saying nothing."""
    import torch

    backend = TorchBackend("cpu")
    backend.start_test("compiled")
    timer = Timer(backend, "compiled", warmup=1)
    out = timer(torch.log1p, torch.eye(3).to_sparse())
    assert out.is_sparse
    assert timer.executions == ["eager_fallback"]


def test_region_is_not_routed_in_compiled_mode_and_no_timed_call_is_not_routed() -> None:
    import torch

    timer = Timer(TorchBackend("cpu"), "compiled", warmup=0)
    with timer.region() as region:
        region.result = torch.zeros(3)
    assert timer.executions == ["not_routed"]
    assert subtest_execution("compiled", []) == "not_routed"
    assert subtest_execution("eager", []) == "eager"
    eager = Timer(TorchBackend("cpu"), "eager", warmup=0)
    with eager.region() as region:
        region.result = torch.zeros(3)
    eager(torch.neg, torch.ones(2))
    assert eager.executions == ["eager", "eager"]


@pytest.mark.parametrize(
    ("function", "args", "kwargs"),
    [
        ("binary_cross_entropy_with_logits", ((3,), (4,)), {}),  # target and input sizes differ
        ("dropout", ((3,),), {"p": 1.5}),  # probability outside [0, 1]
        ("batch_norm", ((1, 3), (4,), (4,)), {"training": False}),  # running stats of another size
    ],
)
def test_a_documented_rejection_is_the_functions_exception_in_compiled_mode(function, args, kwargs) -> None:
    """dynamo wraps what the op raised on fake tensors in TorchRuntimeError; the case must see
    the op's own ValueError/RuntimeError, as in eager mode, and the call still counts as compiled."""
    import torch
    import torch.nn.functional as F

    fn = getattr(F, function)
    tensors = [torch.ones(shape) for shape in args]
    with pytest.raises(Exception) as eager_error:
        fn(*tensors, **kwargs)
    backend = TorchBackend("cpu")
    backend.start_test("compiled")
    timer = Timer(backend, "compiled", warmup=1)
    with pytest.raises(eager_error.type) as compiled_error:
        timer(fn, *tensors, **kwargs)
    assert type(compiled_error.value).__module__ == "builtins"
    assert timer.executions == ["compiled"]


def test_a_dynamo_limit_is_not_unwrapped() -> None:
    """A graph break is dynamo's own limit: no inner exception of the function to re-raise."""
    import torch
    from torch._dynamo import exc as dynamo_exc

    with pytest.raises(dynamo_exc.Unsupported):
        torch.compile(_prints_between, fullgraph=True)(torch.ones(2))


def test_jax_jit_cannot_fall_back() -> None:
    """jax.jit traces the whole function or raises: Python control flow on a traced value raises."""
    out = _run_isolated(
        """
        import jax, jax.numpy as jnp
        from portability_data.runner.backends import JaxBackend
        from portability_data.runner.timing import Timer
        timer = Timer(JaxBackend("cpu"), "compiled", warmup=1)
        assert float(timer(jnp.sum, jnp.ones(3))) == 3.0
        def branchy(x):
            return x if x.sum() > 0 else -x
        try:
            timer(branchy, jnp.ones(3))
            print("ran")
        except jax.errors.TracerBoolConversionError:
            print("raised", timer.executions)
    """,
        {},
    )
    assert "raised ['compiled', 'compiled']" in out.stdout, out.stdout + out.stderr


def test_tensorflow_jit_compile_cannot_fall_back() -> None:
    """tf.function(jit_compile=True) compiles with XLA or raises: an op without an XLA kernel
    (tf.strings.as_string) raises instead of running on the host."""
    out = _run_isolated(
        """
        import tensorflow as tf
        from portability_data.runner.backends import TensorFlowBackend
        from portability_data.runner.timing import Timer
        timer = Timer(TensorFlowBackend("cpu"), "compiled", warmup=1)
        assert float(timer(tf.reduce_sum, tf.ones(3))) == 3.0
        try:
            timer(tf.strings.as_string, tf.ones(3))
            print("ran")
        except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError) as exc:
            print("raised", type(exc).__name__, timer.executions)
    """,
        {"TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert "raised" in out.stdout and "['compiled', 'compiled']" in out.stdout, (
        out.stdout + out.stderr[-2000:]
    )


def test_execution_is_recorded_per_subtest_in_a_run(case_repo) -> None:
    """End to end: the shard says how each subtest ran, the label taken from the framework."""
    import pyarrow.parquet as pq

    from portability_data.runner.spec import Paths, RunSpec
    from portability_data.runner.supervisor import run

    case_repo.add(
        "torch",
        "executions",
        """
        import torch

        def _breaks(x):
            y = x.sin()
            print("break")
            return y.cos()

        def test_whole(device, timed):
            assert timed(torch.sin, torch.ones(3)).shape == (3,)

        def test_breaks(device, timed):
            assert timed(_breaks, torch.ones(3)).shape == (3,)

        def test_region(device, timed):
            with timed.region() as r:
                r.result = torch.zeros(3)

        def test_untimed(device):
            assert torch.zeros(2).sum() == 0
        """,
    )
    paths = Paths.under(case_repo.root)
    for mode, expected in (
        (
            "compiled",
            {
                "test_whole": "compiled",
                "test_breaks": "graph_breaks",
                "test_region": "not_routed",
                "test_untimed": "not_routed",
            },
        ),
        ("eager", dict.fromkeys(("test_whole", "test_breaks", "test_region", "test_untimed"), "eager")),
    ):
        run_id = run(
            RunSpec(framework="torch", device="cpu", mode=mode, repeats=1), paths, log=lambda m: None
        )
        rows = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
        assert {r["subtest"]: r["execution"] for r in rows} == expected
        breaks = {r["subtest"]: r["graph_breaks"] for r in rows}
        assert (breaks["test_breaks"] or 0) >= (1 if mode == "compiled" else 0)


def test_different_constants_with_the_same_repr_get_different_compiled_targets() -> None:
    """NumPy abbreviates large arrays in its repr: a cache keyed on the repr would run the target
    compiled for the first constant on the second."""
    import numpy as np
    import torch

    first, second = np.zeros(5000), np.zeros(5000)
    second[2500] = 1.0
    assert repr(first) == repr(second)

    def plus_total(x, constant):
        return x + float(constant.sum())

    timer = Timer(TorchBackend("cpu"), "compiled", warmup=0)
    assert timer(plus_total, torch.zeros(2), first).tolist() == [0.0, 0.0]
    assert timer(plus_total, torch.zeros(2), second).tolist() == [1.0, 1.0]
    assert len(timer._compiled) == 2
    timer(torch.add, torch.zeros(2), 3)  # plain constants are keyed by value
    timer(torch.add, torch.ones(2), 3)
    assert len(timer._compiled) == 3


def test_a_case_framework_is_the_folder_under_cases_even_from_a_subfolder() -> None:
    """Generated census modules live in cases/<framework>/census/: still that framework's cases."""
    from portability_data.runner.harness import framework_of

    assert framework_of(Path("/repo/cases/torch/test_addr.py")) == "torch"
    assert framework_of(Path("/repo/cases/torch/census/test_opinfo.py")) == "torch"
    assert framework_of(Path("/repo/cases/jax/census/deeper/test_x.py")) == "jax"
    with pytest.raises(pytest.UsageError, match="cases/<framework>/"):
        framework_of(Path("/repo/cases/census/test_opinfo.py"))
