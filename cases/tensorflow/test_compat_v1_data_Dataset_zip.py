"""tf.compat.v1.data.Dataset.zip: elements paired in order up to the shortest dataset, against NumPy."""

import collections

import numpy as np
import pytest
import tensorflow as tf

# Dataset.zip builds a host-side input pipeline (a dataset object and its iterator): no
# tf.function(jit_compile=True) can take a Dataset, so every subtest is timed with timed.region().

Dataset = tf.compat.v1.data.Dataset


def _values(ds) -> list:
    return list(ds.as_numpy_iterator())


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int64, tf.string], ids=lambda d: d.name
)
def test_zip_pairs_elements(device, timed, dtype):
    # Halves are exact in every float type; int64 takes the whole part.
    a = np.arange(12, dtype=np.float64).reshape(6, 2) - 3.5
    if dtype == tf.int64:
        a = np.trunc(a)
    b = np.arange(6) * 10
    first = tf.strings.as_string(a) if dtype == tf.string else tf.cast(tf.constant(a), dtype)
    with timed.region() as region:
        ds = Dataset.zip((Dataset.from_tensor_slices(first), Dataset.from_tensor_slices(b)))
        out = _values(ds)
        region.result = out
    assert isinstance(ds, tf.compat.v1.data.Dataset)
    assert ds.element_spec[0].dtype == dtype and ds.element_spec[0].shape == (2,)
    assert len(out) == 6
    for i, (x, y) in enumerate(out):
        if dtype == tf.string:
            np.testing.assert_array_equal(x, tf.strings.as_string(a[i]).numpy())
        else:
            np.testing.assert_array_equal(np.asarray(x, np.float64), a[i])
        assert y == b[i]


@pytest.mark.parametrize("lengths", [(4, 7, 5), (0, 3), (3, 3), (1,)], ids=str)
def test_zip_stops_at_shortest(device, timed, lengths):
    sets = [Dataset.range(10 * k, 10 * k + n) for k, n in enumerate(lengths)]
    with timed.region() as region:
        ds = Dataset.zip(tuple(sets))
        out = _values(ds)
        region.result = out
    n = min(lengths)
    assert int(ds.cardinality()) == n
    assert out == [tuple(10 * k + i for k in range(len(lengths))) for i in range(n)]


def test_zip_nested_structures(device, timed):
    Pair = collections.namedtuple("Pair", ["x", "y"])
    r = Dataset.range(3)
    with timed.region() as region:
        nested = _values(Dataset.zip((r, (r.map(lambda v: v * 2), r.map(lambda v: -v)))))
        named = _values(Dataset.zip(Pair(x=r, y=Dataset.range(5, 8))))
        keyed = _values(Dataset.zip({"a": r, "b": Dataset.from_tensor_slices(["p", "q", "r"])}))
        region.result = (nested, named, keyed)
    assert nested == [(0, (0, 0)), (1, (2, -1)), (2, (4, -2))]
    assert named == [Pair(0, 5), Pair(1, 6), Pair(2, 7)]
    assert keyed == [{"a": 0, "b": b"p"}, {"a": 1, "b": b"q"}, {"a": 2, "b": b"r"}]


def test_zip_large_and_infinite(device, timed):
    """A 1 MB float32 component zipped with an infinite dataset: the finite one sets the length."""
    data = np.random.default_rng(0).standard_normal((256, 1024)).astype(np.float32)
    with timed.region() as region:
        ds = Dataset.zip((Dataset.from_tensor_slices(data), Dataset.range(7).repeat()))
        out = _values(ds.batch(64))
        region.result = out
    assert int(ds.cardinality()) == 256
    np.testing.assert_array_equal(np.concatenate([x for x, _ in out]), data)
    np.testing.assert_array_equal(np.concatenate([y for _, y in out]), np.arange(256) % 7)


def test_zip_special_values(device, timed):
    # Elements pass through unchanged: NaN, infinities, the sign of zero.
    vals = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], np.float32)
    with timed.region() as region:
        out = _values(Dataset.zip((Dataset.from_tensor_slices(vals), Dataset.from_tensor_slices(-vals))))
        region.result = out
    got = np.array(out, np.float32)
    np.testing.assert_array_equal(got[:, 0], vals)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.stack([vals, -vals], 1)))


def test_zip_graph_mode_iterator(device, timed, tf_graph, tf_session):
    # The TF1 way: a one-shot iterator in a graph, run by a session, ends with OutOfRangeError.
    ds = Dataset.zip((Dataset.range(3), Dataset.from_tensor_slices([1.5, 2.5, 3.5, 4.5])))
    nxt = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
    with timed.region() as region:
        out = [tf_session.run(nxt) for _ in range(3)]
        region.result = out
    assert [(int(i), float(x)) for i, x in out] == [(0, 1.5), (1, 2.5), (2, 3.5)]
    with pytest.raises(tf.errors.OutOfRangeError):
        tf_session.run(nxt)


@pytest.mark.parametrize("arg", [(np.arange(3), np.arange(3)), [Dataset.range(2), 5]], ids=["arrays", "int"])
def test_zip_refuses_non_datasets(device, arg):
    with pytest.raises(TypeError):
        Dataset.zip(tuple(arg))
