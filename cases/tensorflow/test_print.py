"""tf.print: formats tensors and Python values like NumPy's summarised printing, writes them to a stream."""

import numpy as np
import pytest
import tensorflow as tf


def _printed(path):
    return path.read_text()


@pytest.mark.parametrize(
    "dtype,expected",
    [
        (tf.float32, "[0 1.5 3]"),
        (tf.float64, "[0 1.5 3]"),
        (tf.float16, "[0 1.5 3]"),
        (tf.bfloat16, "[0 1.5 3]"),
        (tf.int32, "[0 1 3]"),
        (tf.int64, "[0 1 3]"),
    ],
    ids=lambda v: v.name if isinstance(v, tf.DType) else "",
)
def test_print_values(device, timed, tmp_path, dtype, expected):
    out_file = tmp_path / "out.txt"
    x = tf.cast(tf.constant([0.0, 1.5, 3.0]), dtype)
    timed(tf.print, x, output_stream=f"file://{out_file}")
    lines = _printed(out_file).splitlines()
    assert lines[-1] == expected and len(lines) == 2  # warm-up call + timed call


def test_print_bool_string_and_python_values(device, timed, tmp_path):
    out_file = tmp_path / "out.txt"
    timed.once(
        tf.print,
        "flag:",
        tf.constant([True, False]),
        tf.constant("hi"),
        7,
        output_stream=f"file://{out_file}",
    )
    assert _printed(out_file) == 'flag: [1 0] "hi" 7\n'


@pytest.mark.parametrize(
    "summarize,expected", [(3, "[0 1 2 ... 299997 299998 299999]"), (1, "[0 ... 299999]")], ids=str
)
def test_print_summarize_large(device, timed, tmp_path, summarize, expected):
    out_file = tmp_path / "out.txt"
    x = tf.range(300000, dtype=tf.int32)  # 1.2 MB
    timed.once(tf.print, x, summarize=summarize, output_stream=f"file://{out_file}")
    assert _printed(out_file) == expected + "\n"


def test_print_matrix_empty_and_sep_end(device, timed, tmp_path):
    out_file = tmp_path / "out.txt"
    matrix = tf.constant(np.arange(6).reshape(2, 3), tf.int64)
    timed.once(tf.print, matrix, tf.zeros((0,)), sep="|", end="#", output_stream=f"file://{out_file}")
    assert _printed(out_file) == "[[0 1 2]\n [3 4 5]]|[]#"


def test_print_nested_structure(device, timed, tmp_path):
    out_file = tmp_path / "out.txt"
    timed.once(
        tf.print, {"a": tf.constant(1), "b": [tf.constant(2.5), "c"]}, output_stream=f"file://{out_file}"
    )
    assert _printed(out_file) == "{'a': 1, 'b': [2.5, 'c']}\n"


def test_print_returns_none_in_eager(device, timed, tmp_path):
    out_file = tmp_path / "out.txt"
    assert timed.once(tf.print, tf.constant(1.0), output_stream=f"file://{out_file}") is None
    assert _printed(out_file) == "1\n"
