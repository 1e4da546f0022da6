"""tf.distribute.InputContext.get_per_replica_batch_size: global batch // replicas, error if not divisible."""

import numpy as np
import pytest
import tensorflow as tf


@pytest.mark.parametrize(
    "global_batch,replicas,expected",
    [(12, 1, 12), (12, 4, 3), (0, 3, 0), (1 << 20, 8, 1 << 17), (7, 7, 1)],
    ids=str,
)
def test_divides_batch(device, timed, global_batch, replicas, expected):
    ctx = tf.distribute.InputContext(
        num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=replicas
    )
    with timed.region() as region:
        region.result = got = ctx.get_per_replica_batch_size(global_batch)
    assert got == expected and isinstance(got, int)


@pytest.mark.parametrize("global_batch,replicas", [(12, 5), (3, 4)], ids=str)
def test_not_divisible_raises(device, timed, global_batch, replicas):
    ctx = tf.distribute.InputContext(num_replicas_in_sync=replicas)
    with pytest.raises(ValueError, match="divisible"), timed.region():
        ctx.get_per_replica_batch_size(global_batch)


def test_default_context(device, timed):
    ctx = tf.distribute.InputContext()
    assert ctx.num_replicas_in_sync == 1 and ctx.num_input_pipelines == 1 and ctx.input_pipeline_id == 0
    with timed.region() as region:
        region.result = got = ctx.get_per_replica_batch_size(5)
    assert got == 5


def test_inside_strategy_input_fn(device, timed):
    """The context a OneDeviceStrategy on the device under test hands to the dataset function."""
    strategy = tf.distribute.OneDeviceStrategy(device)
    seen = {}

    def dataset_fn(ctx):
        with timed.region() as region:
            region.result = seen["batch"] = ctx.get_per_replica_batch_size(8)
        return tf.data.Dataset.range(32).batch(seen["batch"])

    dist = strategy.distribute_datasets_from_function(dataset_fn)
    first = next(iter(dist))
    assert seen["batch"] == 8
    np.testing.assert_array_equal(first.numpy(), np.arange(8))
