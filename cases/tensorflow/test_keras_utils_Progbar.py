"""tf.keras.utils.Progbar: the printed step counts and metric averages against hand computations."""

import re

import numpy as np
import pytest
import tensorflow as tf

Progbar = tf.keras.utils.Progbar


def _shown(text: str, name: str) -> list[float]:
    """Every value printed for metric `name`, in order."""
    return [float(v) for v in re.findall(rf"{name}: ([-+0-9.e]+|nan|inf)", text)]


def _run(timed, target, updates, **kwargs):
    """Build a bar and feed it the (current, values, finalize) updates inside one timed region."""
    with timed.region() as region:
        bar = Progbar(target, interval=0.0, **kwargs)  # interval 0: every update prints
        for current, values, finalize in updates:
            bar.update(current, values=values, finalize=finalize)
        region.result = bar
    return region.result


@pytest.mark.parametrize("kind", ["float", "np_float32", "np_float64", "np_0d", "np_1d"])
def test_progbar_python_and_numpy_values(device, timed, capsys, kind):
    make = {
        "float": float,
        "np_float32": np.float32,
        "np_float64": np.float64,
        "np_0d": lambda v: np.array(v),
        "np_1d": lambda v: np.array([v - 1.0, v + 1.0]),  # an array is averaged by np.mean first
    }[kind]
    _run(timed, 4, [(1, [("loss", make(1.5))], False), (2, [("loss", make(2.5))], False)])
    np.testing.assert_allclose(_shown(capsys.readouterr().out, "loss"), [1.5, 2.0], rtol=1e-6)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16], ids=lambda d: d.name)
def test_progbar_tensor_values(device, timed, capsys, dtype):
    # 0-d tensors, as a training loop's logs hold them.
    updates = [
        (1, [("loss", tf.constant(0.5, dtype))], False),
        (3, [("loss", tf.constant(2.0, dtype))], False),
    ]
    _run(timed, 10, updates)
    # Steps are weights: (0.5 * 1 + 2.0 * 2) / 3.
    np.testing.assert_allclose(_shown(capsys.readouterr().out, "loss"), [0.5, 1.5], rtol=1e-3)


def test_progbar_counts_and_bar(device, timed, capsys):
    _run(timed, 20, [(5, None, False), (10, None, False), (20, None, None)])
    out = capsys.readouterr().out
    assert re.findall(r"(\d+)/20", out) == ["5", "10", "20"]
    assert out.endswith("\n")  # the final update ends the line


def test_progbar_final_update_shows_average(device, timed, capsys):
    # The update() docstring: a metric not in stateful_metrics is displayed as an average over time.
    updates = [(1, [("loss", 1.0)], False), (2, [("loss", 3.0)], False), (3, [("loss", 5.0)], None)]
    _run(timed, 3, updates)
    shown = _shown(capsys.readouterr().out, "loss")
    assert shown[:2] == [1.0, 2.0]
    assert shown[-1] == pytest.approx(3.0), f"final display {shown[-1]} is not the average of 1, 3, 5"


@pytest.mark.parametrize("option", ["stateful_metrics", "stateless_metrics"])
def test_progbar_stateful_and_stateless(device, timed, capsys, option):
    updates = [(1, [("acc", 0.5), ("loss", 4.0)], False), (2, [("acc", 0.7), ("loss", 2.0)], False)]
    _run(timed, 5, updates, **{option: ["acc"] if option == "stateful_metrics" else ["loss"]})
    out = capsys.readouterr().out
    assert _shown(out, "acc") == [0.5, 0.7]  # as-is
    assert _shown(out, "loss") == [4.0, 3.0]  # averaged


def test_progbar_verbose_2_prints_once(device, timed, capsys):
    updates = [(1, [("loss", 1.0)], False), (2, [("loss", 2.0)], False), (3, [("loss", 6.0)], False)]
    _run(timed, 3, [*updates, (3, None, True)], verbose=2)
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("3/3")
    assert _shown(out, "loss") == [3.0]


def test_progbar_verbose_0_and_unknown_target(device, timed, capsys):
    _run(timed, 3, [(1, [("loss", 1.0)], False), (3, None, True)], verbose=0)
    assert capsys.readouterr().out == ""
    _run(timed, None, [(7, [("loss", 1.0)], False)])
    assert re.search(r"\s+7/Unknown", capsys.readouterr().out)


def test_progbar_small_values_use_exponent(device, timed, capsys):
    _run(timed, 4, [(1, [("lr", 2.5e-5)], False)])
    assert "lr: 2.5000e-05" in capsys.readouterr().out


def test_progbar_refuses_both_metric_lists(device):
    with pytest.raises(ValueError):
        Progbar(3, stateful_metrics=["a"], stateless_metrics=["b"])
