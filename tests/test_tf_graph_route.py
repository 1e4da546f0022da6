"""TensorFlow functions called inside a TF1 graph on the paths that convert them (runner/devices/
tf_graph_mode.py): real TensorFlow, TFLite's converter and LiteRT, tf2onnx and ONNX Runtime,
OpenVINO. tf.compat.v1 code calls the function with the graph's symbolic tensors and runs the result
with a Session; before 2026-12-07 the harness handed the converters a function traced in that graph
("numpy() is only available when eager execution is enabled") and the runtimes symbolic tensors,
and 250 such subtests were labelled the paths' failures."""

from __future__ import annotations

import pytest

from portability_data.runner import devices

PACKAGES = {
    "litert": ("ai_edge_litert",),
    "litert_flex": ("ai_edge_litert",),
    "onnxruntime": ("onnx", "onnxruntime", "tf2onnx"),
    "openvino": ("openvino",),
    "openvino_f32": ("openvino",),
}
PATHS = sorted(PACKAGES)


def _timer(device: str, monkeypatch):
    pytest.importorskip("tensorflow")
    for name in PACKAGES[device]:
        pytest.importorskip(name, reason=f"{name} is not installed (the {device} path's extra)")
    from portability_data.runner.timing import Timer

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    return Timer(devices.backend_for("tensorflow", device), "compiled", 0)


@pytest.mark.parametrize("device", PATHS)
def test_a_function_called_in_a_tf1_graph_runs_converted_when_the_session_runs(device, monkeypatch) -> None:
    """The function reads the graph's global step (a variable, initialised and changed after the
    call) and closes over a constant of the graph: the session's result is the converted model's,
    on the values the session has when it runs."""
    timer = _timer(device, monkeypatch)
    import numpy as np
    import tensorflow as tf

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        step = v1.train.create_global_step()
        offset = tf.constant([0.5, 0.25], tf.float32)  # an outer graph tensor the function closes over

        def scaled(x):
            return x * tf.cast(v1.train.get_global_step().read_value(), x.dtype) + offset

        out = timer(scaled, tf.constant([1.0, -2.0], tf.float32))
        bump = v1.assign_add(step, 3)
        init = v1.global_variables_initializer()
    assert timer.executions == ["compiled"]
    # the call's place in the graph is the converted model, not TensorFlow's function call
    ops = {op.type for op in graph.get_operations()}
    assert any(op.name.startswith("converted_model") for op in graph.get_operations())
    assert not ops & {"StatefulPartitionedCall", "PartitionedCall"}, ops
    with v1.Session(graph=graph) as session:
        session.run(init)
        np.testing.assert_allclose(session.run(out), [0.5, 0.25])
        session.run(bump)
        np.testing.assert_allclose(session.run(out), [3.5, -5.75])


@pytest.mark.parametrize("device", PATHS)
def test_a_function_writing_a_graph_variable_is_not_measured_and_says_why(device, monkeypatch) -> None:
    """A converted model cannot change a session's variable: the route refuses the function, and the
    row says "not measured" (rule harness_tf1_graph_route), not the path's failure."""
    timer = _timer(device, monkeypatch)
    import tensorflow as tf

    from portability_data.runner import failures
    from portability_data.runner.devices.tf_graph_mode import GraphRouteError

    v1 = tf.compat.v1
    with tf.Graph().as_default():
        counter = v1.get_variable("counter", initializer=tf.constant(1.0), use_resource=True)

        def counts(x):
            return counter.assign_add(x)

        with pytest.raises(GraphRouteError, match=r"not measured: .* graph variable counter") as raised:
            timer(counts, tf.constant(2.0))
    category = failures.classify_failure("tensorflow", "GraphRouteError", str(raised.value))
    assert category == ("harness", "harness_tf1_graph_route")


@pytest.mark.parametrize("device", PATHS)
def test_the_graph_s_order_and_a_gradient_that_is_none_are_kept(device, monkeypatch) -> None:
    """A body that runs after an initializer of the graph (its control dependency) reads the
    variables after it, as tf.function in the graph does; an output that is None (an unconnected
    gradient) stays None beside the model's outputs; a placeholder of unknown rank is a signature
    like any other (the path's converter, not the harness, answers for it)."""
    timer = _timer(device, monkeypatch)
    import numpy as np
    import tensorflow as tf

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        weights = v1.get_variable("w", initializer=tf.constant([2.0, 3.0]))

        def initialised_then_read():
            with tf.control_dependencies([v1.global_variables_initializer()]):
                return weights.read_value() * 2.0

        doubled = timer(initialised_then_read)

        def initialised_then_passed_on():  # OpenVINO folds the output into the input it passes on
            with tf.control_dependencies([v1.global_variables_initializer()]):
                return [weights.read_value(), weights.read_value()]

        passed_on = timer(initialised_then_passed_on)

        def gradients(x, unused):
            return v1.gradients(tf.reduce_sum(x * x), [x, unused])

        grad_x, grad_unused = timer(gradients, tf.constant([1.0, -1.5]), tf.constant(4.0))
        unknown = v1.placeholder(tf.float32, shape=None)
        try:
            timer(lambda t: t + 1.0, unknown)
        except Exception as error:  # the converter's answer; never the harness's signature
            assert "Cannot iterate over a shape" not in str(error), error
    assert grad_unused is None
    with v1.Session(graph=graph) as session:  # no initializer run here: the body runs it first
        np.testing.assert_allclose(session.run(doubled), [4.0, 6.0])
        np.testing.assert_allclose(session.run(passed_on), [[2.0, 3.0], [2.0, 3.0]])
        np.testing.assert_allclose(session.run(grad_x), [2.0, -3.0])


@pytest.mark.parametrize("device", PATHS)
def test_a_function_of_no_input_in_a_tf1_graph_is_converted_too(device, monkeypatch) -> None:
    """A body with no input at all (it reads a constant of its own): tf2onnx's from_graph_def
    refuses a graph without input names ("input_names needs to be provided"), so such a body goes
    to tf2onnx as a function; every path gives its value when the session runs."""
    timer = _timer(device, monkeypatch)
    import numpy as np
    import tensorflow as tf

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        out = timer(lambda: tf.constant([1.5, 2.5]) * 2.0)
    with v1.Session(graph=graph) as session:
        np.testing.assert_allclose(session.run(out), [3.0, 5.0])


@pytest.mark.parametrize("device", PATHS)
def test_a_gradient_through_a_converted_model_says_the_path_has_none(device, monkeypatch) -> None:
    """A runtime returns values, not a graph TensorFlow can differentiate: a gradient asked through
    the converted call (eager's GradientTape on a variable, a TF1 graph's tf.gradients) raises the
    path's NoGradientError (rule export_no_gradient), where it was None and the test failed on its
    own `None.numpy()` (36 TensorFlow openvino subtests unclassified). The values are the model's,
    and a gradient that does not pass through the call is TensorFlow's as before."""
    timer = _timer(device, monkeypatch)
    import numpy as np
    import tensorflow as tf

    from portability_data.runner import failures
    from portability_data.runner.devices.tf_graph_mode import NoGradientError

    x = tf.Variable([1.0, -2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        y = timer(lambda t: t * t, x)
        beside = x * 3.0  # not through the converted call
    np.testing.assert_allclose(y.numpy(), [1.0, 4.0, 9.0])
    np.testing.assert_allclose(tape.gradient(beside, x).numpy(), [3.0, 3.0, 3.0])
    with pytest.raises(NoGradientError, match=r"no gradient through the converted model \(") as raised:
        tape.gradient(y, x)
    category = failures.classify_failure("tensorflow", "NoGradientError", str(raised.value))
    assert category == ("not_implemented", "export_no_gradient")

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        feed = tf.constant([0.5, 1.5])
        out = timer(lambda t: t + 1.0, feed)
        with pytest.raises(NoGradientError, match="no gradient through the converted model"):
            v1.gradients(tf.reduce_sum(out), [feed])
    with v1.Session(graph=graph) as session:
        np.testing.assert_allclose(session.run(out), [1.5, 2.5])
