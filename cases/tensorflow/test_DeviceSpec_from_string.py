"""tf.DeviceSpec.from_string: parsed fields, canonical to_string, refusals, against hand-written values."""

import pytest
import tensorflow as tf

CASES = [
    ("", (None, None, None, None, None), ""),
    ("/job:foo/replica:0", ("foo", 0, None, None, None), "/job:foo/replica:0"),
    ("/replica:1/task:0/cpu:0", (None, 1, 0, "CPU", 0), "/replica:1/task:0/device:CPU:0"),
    ("/job:muu/device:GPU:2", ("muu", None, None, "GPU", 2), "/job:muu/device:GPU:2"),
    ("/device:CPU:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
    ("/gpu:1", (None, None, None, "GPU", 1), "/device:GPU:1"),
    ("/device:TPU:*", (None, None, None, "TPU", None), "/device:TPU:*"),
    ("/job:worker/replica:3/task:7/device:XLA_CPU:4", ("worker", 3, 7, "XLA_CPU", 4),
     "/job:worker/replica:3/task:7/device:XLA_CPU:4"),
    ("/job:localhost/replica:0/task:0/device:CPU:0", ("localhost", 0, 0, "CPU", 0),
     "/job:localhost/replica:0/task:0/device:CPU:0"),
    ("/device:MyFunnyDevice:2", (None, None, None, "MyFunnyDevice", 2), "/device:MyFunnyDevice:2"),
    ("job:foo/task:1", ("foo", None, 1, None, None), "/job:foo/task:1"),  # leading slash optional
]  # fmt: skip


def _fields(spec: tf.DeviceSpec) -> tuple:
    return (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index)


@pytest.mark.parametrize("text,fields,canonical", CASES, ids=[c[0] or "empty" for c in CASES])
def test_from_string_fields(device, timed, text, fields, canonical):
    with timed.region() as region:
        region.result = tf.DeviceSpec.from_string(text)
    spec = region.result
    assert isinstance(spec, tf.DeviceSpec)
    assert _fields(spec) == fields
    assert spec.to_string() == canonical
    # Parsing the canonical form gives the same (hashable, comparable) spec back.
    again = tf.DeviceSpec.from_string(canonical)
    assert again == spec and hash(again) == hash(spec)


def test_from_string_matches_the_harness_device(device, timed):
    with timed.region() as region:
        region.result = tf.DeviceSpec.from_string(device)
    spec = region.result
    assert spec.to_string() == device
    # Placing an op with the parsed spec lands it where the string says.
    with tf.device(spec):
        x = tf.constant([1.0, 2.0]) * 2.0
    assert x.device.endswith(device.removeprefix("/"))
    assert spec.device_type == device.split(":")[1]


def test_from_string_merges(device, timed):
    with timed.region() as region:
        base = tf.DeviceSpec.from_string("/job:foo/replica:0")
        region.result = base.make_merged_spec(tf.DeviceSpec.from_string("/task:1/device:GPU:2"))
    assert region.result.to_string() == "/job:foo/replica:0/task:1/device:GPU:2"
    assert base.to_string() == "/job:foo/replica:0"  # DeviceSpec (v2) is immutable
    replaced = region.result.replace(device_type="CPU", device_index=0)
    assert replaced.to_string() == "/job:foo/replica:0/task:1/device:CPU:0"


def test_from_string_lowercase_device_type(device, timed):
    # The legacy short forms are upper-cased; an explicit device: type is kept as written.
    with timed.region() as region:
        region.result = (tf.DeviceSpec.from_string("/cpu:0"), tf.DeviceSpec.from_string("/device:cpu:0"))
    short, explicit = region.result
    assert short.device_type == "CPU"
    assert explicit.device_type == "CPU"


@pytest.mark.parametrize(
    "text",
    [
        "/job:muu/device:GPU:2/cpu:0",  # two device types
        "/foo:bar",
        "/task:x",
        "/replica:1.5",
        "/device:GPU:two",
        "/job:a/b/c/d/e/f",
    ],
)
def test_from_string_refuses(device, timed, text):
    with pytest.raises(ValueError), timed.region() as region:
        region.result = tf.DeviceSpec.from_string(text)
