"""tf.distribute.InputContext.get_per_replica_batch_size: global batch // replicas, error if not divisible.

The timed function splits a global batch into per-replica batches with the size it returns (in compiled
mode inside tf.function(jit_compile=True), where the size is a trace-time constant of the reshape)."""

import numpy as np
import pytest
import tensorflow as tf


def _split(ctx, global_batch, seen):
    """A function of a global batch: (replicas, per-replica batch) rows, sized by the context."""

    def f(x):
        per_replica = ctx.get_per_replica_batch_size(global_batch)
        seen.append(per_replica)
        return tf.reshape(x, (ctx.num_replicas_in_sync, per_replica))

    return f


@pytest.mark.parametrize(
    "global_batch,replicas,expected",
    [(12, 1, 12), (12, 4, 3), (0, 3, 0), (1 << 20, 8, 1 << 17), (7, 7, 1)],
    ids=str,
)
def test_divides_batch(device, timed, global_batch, replicas, expected):
    ctx = tf.distribute.InputContext(
        num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=replicas
    )
    seen = []
    data = np.arange(global_batch, dtype=np.float32)
    out = timed(_split(ctx, global_batch, seen), tf.constant(data))
    got = seen[-1]
    assert got == expected and isinstance(got, int)
    np.testing.assert_array_equal(out.numpy(), data.reshape(replicas, expected))


@pytest.mark.parametrize("global_batch,replicas", [(12, 5), (3, 4)], ids=str)
def test_not_divisible_raises(device, timed, global_batch, replicas):
    ctx = tf.distribute.InputContext(num_replicas_in_sync=replicas)
    with pytest.raises(ValueError, match="divisible"):
        timed(_split(ctx, global_batch, []), tf.zeros((global_batch,)))


def test_default_context(device, timed):
    ctx = tf.distribute.InputContext()
    assert ctx.num_replicas_in_sync == 1 and ctx.num_input_pipelines == 1 and ctx.input_pipeline_id == 0
    seen = []
    out = timed(_split(ctx, 5, seen), tf.range(5))
    assert seen[-1] == 5
    np.testing.assert_array_equal(out.numpy(), [[0, 1, 2, 3, 4]])


def test_inside_strategy_input_fn(device, timed):
    """The context a OneDeviceStrategy on the device under test hands to the dataset function."""
    strategy = tf.distribute.OneDeviceStrategy(device)
    seen = {}

    def dataset_fn(ctx):
        seen["ctx"] = ctx
        seen["batch"] = ctx.get_per_replica_batch_size(8)
        return tf.data.Dataset.range(32).batch(seen["batch"])

    dist = strategy.distribute_datasets_from_function(dataset_fn)
    first = next(iter(dist))
    assert seen["batch"] == 8
    np.testing.assert_array_equal(first.numpy(), np.arange(8))
    sizes = []
    out = timed(_split(seen["ctx"], 8, sizes), first)
    assert sizes[-1] == 8
    np.testing.assert_array_equal(out.numpy(), np.arange(8).reshape(1, 8))
