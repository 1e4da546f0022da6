"""tf.compat.v1.reset_default_graph: a fresh global default graph for the calling thread, refused when nested.

The tf_graph fixture's test body runs inside its as_default(), where a reset is refused; the resets run in
fresh threads (the default graph stack is thread-local), so no other test's graph changes."""

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1


def in_thread(fn: Callable[[], Any]) -> Any:
    """Runs fn in a new thread and returns its result, re-raising its exception here."""
    box: dict[str, Any] = {}

    def body() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # handed back to the test's thread
            box["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


@pytest.mark.parametrize("count", [0, 1, 7, 2000], ids=lambda n: f"ops{n}")
def test_reset_gives_a_new_empty_graph(device, timed, count):
    def body() -> tuple:
        old = v1.get_default_graph()
        with old.as_default():
            for i in range(count):
                tf.constant(float(i), name=f"c{i}")
            v1.add_to_collection("things", 1)
        with timed.region() as region:
            region.result = v1.reset_default_graph()
        new = v1.get_default_graph()
        return old, new, region.result

    old, new, result = in_thread(body)
    assert result is None
    assert new is not old and isinstance(new, tf.Graph)
    assert new.get_operations() == [] and new.get_collection("things") == []
    # The old graph itself is left as it was.
    assert len(old.get_operations()) == count and old.get_collection("things") == [1]


def test_reset_graph_is_usable(device, timed):
    def body() -> np.ndarray:
        with timed.region():
            v1.reset_default_graph()
        graph = v1.get_default_graph()
        with graph.as_default(), graph.device(device):
            x = v1.placeholder(tf.float32, shape=(3,))
            y = x * 2.0 + 1.0
        config = v1.ConfigProto(allow_soft_placement=False)
        with v1.Session(graph=graph, config=config) as session:
            return session.run(y, {x: np.array([1.0, -0.5, 3.0], np.float32)})

    np.testing.assert_array_equal(in_thread(body), [3.0, 0.0, 7.0])


def test_reset_twice_gives_distinct_graphs(device, timed):
    def body() -> list:
        graphs = []
        for _ in range(3):
            with timed.region():
                v1.reset_default_graph()
            graphs.append(v1.get_default_graph())
            assert v1.get_default_graph() is graphs[-1]  # stable until the next reset
        return graphs

    graphs = in_thread(body)
    assert len({id(g) for g in graphs}) == 3


def test_reset_is_per_thread(device, timed):
    ready, done = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def other() -> None:
        seen["before"] = v1.get_default_graph()
        ready.set()
        done.wait(60)
        seen["after"] = v1.get_default_graph()

    thread = threading.Thread(target=other)
    thread.start()
    ready.wait(60)

    def reset() -> None:
        with timed.region():
            v1.reset_default_graph()

    in_thread(reset)
    done.set()
    thread.join()
    assert seen["after"] is seen["before"]  # the other thread's default graph is untouched


def test_reset_refused_inside_a_graph(device, timed, tf_graph):
    # The test body runs inside tf_graph.as_default(): a nested default graph, so the reset is refused.
    assert v1.get_default_graph() is tf_graph
    with pytest.raises(AssertionError, match="nested"), timed.region():
        v1.reset_default_graph()
    assert v1.get_default_graph() is tf_graph
