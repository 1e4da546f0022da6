"""tf.io.parse_single_sequence_example: context and feature_lists of a serialized SequenceExample."""

import numpy as np
import pytest
import tensorflow as tf


def _feature(values, kind):
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    if kind == "int":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def _serialize(context, feature_lists):
    example = tf.train.SequenceExample(
        context=tf.train.Features(feature={k: _feature(v, kind) for k, (v, kind) in context.items()}),
        feature_lists=tf.train.FeatureLists(
            feature_list={
                k: tf.train.FeatureList(feature=[_feature(step, kind) for step in steps])
                for k, (steps, kind) in feature_lists.items()
            }
        ),
    )
    return tf.constant(example.SerializeToString())


@pytest.mark.parametrize(
    "kind,dtype",
    [("float", tf.float32), ("int", tf.int64), ("bytes", tf.string)],
    ids=["float", "int", "bytes"],
)
@pytest.mark.parametrize("steps,width", [(0, 2), (1, 1), (5, 3), (512, 512)], ids=str)
def test_fixed_len_sequence(device, timed, kind, dtype, steps, width):
    rng = np.random.default_rng(0)
    data = rng.integers(0, 100, (steps, width))
    rows = [
        [float(v) for v in row]
        if kind == "float"
        else [int(v) for v in row]
        if kind == "int"
        else [str(v).encode() for v in row]
        for row in data
    ]
    serialized = _serialize({"id": ([7], "int")}, {"seq": (rows, kind)})
    context, sequences = timed(
        tf.io.parse_single_sequence_example,
        serialized,
        context_features={"id": tf.io.FixedLenFeature([], tf.int64)},
        sequence_features={"seq": tf.io.FixedLenSequenceFeature([width], dtype)},
    )
    assert context["id"].numpy() == 7
    seq = sequences["seq"]
    assert seq.dtype == dtype and tuple(seq.shape) == (steps, width)
    expected = np.array(rows, dtype=object if kind == "bytes" else None).reshape(steps, width)
    np.testing.assert_array_equal(seq.numpy(), expected.astype(np.float32) if kind == "float" else expected)


def test_var_len_and_defaults(device, timed):
    serialized = _serialize({"label": ([b"cat"], "bytes")}, {"tok": ([[1, 2], [], [3]], "int")})
    context, sequences = timed(
        tf.io.parse_single_sequence_example,
        serialized,
        context_features={
            "label": tf.io.FixedLenFeature([], tf.string),
            "weight": tf.io.FixedLenFeature([], tf.float32, default_value=0.5),
        },
        sequence_features={"tok": tf.io.VarLenFeature(tf.int64)},
    )
    assert context["label"].numpy() == b"cat" and context["weight"].numpy() == 0.5
    tok = sequences["tok"]
    assert isinstance(tok, tf.SparseTensor)
    np.testing.assert_array_equal(tok.indices.numpy(), [[0, 0], [0, 1], [2, 0]])
    np.testing.assert_array_equal(tok.values.numpy(), [1, 2, 3])
    np.testing.assert_array_equal(tok.dense_shape.numpy(), [3, 2])


def test_ragged_feature(device, timed):
    serialized = _serialize({}, {"f": ([[1.5], [2.5, 3.5, 4.5], []], "float")})
    _, sequences = timed(
        tf.io.parse_single_sequence_example,
        serialized,
        sequence_features={"f": tf.io.RaggedFeature(tf.float32)},
    )
    assert sequences["f"].to_list() == [[1.5], [2.5, 3.5, 4.5], []]


def test_missing_required_feature_raises(device, timed):
    serialized = _serialize({}, {})
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(
            tf.io.parse_single_sequence_example,
            serialized,
            context_features={"id": tf.io.FixedLenFeature([], tf.int64)},
        )


def test_wrong_width_raises(device, timed):
    serialized = _serialize({}, {"seq": ([[1.0, 2.0], [3.0]], "float")})
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(
            tf.io.parse_single_sequence_example,
            serialized,
            sequence_features={"seq": tf.io.FixedLenSequenceFeature([2], tf.float32)},
        )
