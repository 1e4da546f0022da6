"""What the installed TensorFlow wheel declares per device type and dtype, as rows of the `declared`
table beside PyTorch's and JAX's (issue 21): its kernel registry, read per census entry (tnp and
mapped, cases/tensorflow/census/) through the ops its traced graph holds (tf_declared_rows).
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.pipeline.frameworks.tensorflow.census import (
    CENSUS_FOLDER,
    FRAMEWORK,
    load_mapped_module,
    public_tf_names,
)
from portability_data.readings.frames import plain_frame
from portability_data.runner.census_rows import read_manifest
from portability_data.tables.contracts import arrow_schema
from portability_data.tables.tableio import to_arrow

# TensorFlow's kernel device types -> the declared table's device types: CPU kernels run eager and
# graph mode on the host (cpu); XLA_CPU_JIT kernels are what tf.function(jit_compile=True) lowers
# to on the host (xla_cpu, the compiled mode). GPU and XLA_GPU_JIT are not read: a wheel without
# CUDA (tf.test.is_built_with_cuda() false) registers only a hundred host-memory GPU kernels and no
# XLA_GPU_JIT ones, so its registry says nothing about what a CUDA build runs on a GPU.
DECLARED_DEVICE_TYPES = {"CPU": "cpu", "XLA_CPU_JIT": "xla_cpu"}
ANY_DEVICE = "DEFAULT"  # kernels registered for every device type
GRAPH_INPUTS = frozenset({"Placeholder", "NoOp"})  # the traced function's inputs, no computation
KERNEL_SOURCE = "tensorflow.python.framework.kernels.get_all_registered_kernels"
# How TensorFlow's op definitions (the OpDef's type attrs, checked while a node is made) say that
# a dtype is not one the op takes: before any kernel is looked up, on every device alike.
OP_DEFINITION_REFUSALS = ("allowed values", "does not match expected type")


def kernel_registry() -> dict[str, list[tuple[str, dict[str, set[int]]]]]:
    """op -> [(device type, attr -> allowed dtype enums)] of the installed wheel's registered
    kernels. XLA registers its JIT kernels when it first compiles, so one tiny function is compiled
    first."""
    import tensorflow as tf
    from tensorflow.python.framework import kernels

    tf.function(lambda x: x + 1, jit_compile=True, autograph=False)(tf.constant(1.0))
    registry: dict[str, list[tuple[str, dict[str, set[int]]]]] = collections.defaultdict(list)
    for kernel in kernels.get_all_registered_kernels().kernel:
        constraints = {c.name: set(c.allowed_values.list.type) for c in kernel.constraint}
        registry[kernel.op].append((kernel.device_type, constraints))
    return registry


def _admits(node: Any, constraints: dict[str, set[int]]) -> bool:
    """Whether a kernel's type constraints admit the node's type attributes (TensorFlow's own
    kernel lookup for a node: every constrained attr's type in the allowed list)."""
    for name, allowed in constraints.items():
        if name not in node.attr or not allowed:
            continue
        value = node.attr[name]
        types = list(value.list.type) if value.HasField("list") else [value.type]
        if any(t not in allowed for t in types):
            return False
    return True


def missing_kernels(graph_def: Any, registry: dict[str, Any], device_type: str) -> list[str]:
    """The op types of a traced graph (and of the functions it calls) with no kernel for the
    device type that admits the node's dtypes, e.g. ['Sin[T=int32]']."""
    import tensorflow as tf

    nodes = list(graph_def.node) + [n for f in graph_def.library.function for n in f.node_def]
    missing = set()
    for node in nodes:
        if node.op in GRAPH_INPUTS:
            continue
        kernels = [c for device, c in registry.get(node.op, []) if device in (device_type, ANY_DEVICE)]
        if not any(_admits(node, constraints) for constraints in kernels):
            typed = sorted(
                f"{name}={tf.dtypes.as_dtype(value.type).name}"
                for name, value in node.attr.items()
                if value.type and not value.HasField("list")
            )
            missing.add(f"{node.op}[{','.join(typed)}]" if typed else node.op)
    return sorted(missing)


def tf_declared_rows(api: pd.DataFrame, folder: Path = CENSUS_FOLDER) -> pd.DataFrame:
    """What the installed wheel's kernel registry declares for each census entry and dtype, as rows
    of the declared table, typed by its contract but not validated (origin tnp or mapped, the
    manifest's entry and public function: the contract's origins do not hold those yet).

    The registry is per raw op, the census per public function: the honest link is the function
    itself. Each entry is traced (tf.function, no XLA) on its first accepted input kind of the dtype,
    through its module's adapter, and the graph's ops are looked up as TensorFlow places a node: a
    kernel of the device type whose type constraints admit the node's attrs. Per device type
    (DECLARED_DEVICE_TYPES): `supported_dtype` when every op has one; `unsupported_dtype` when some
    op has none (the reason names them), or when an op definition refuses the dtype while tracing
    (OP_DEFINITION_REFUSALS, the same on every device); `unknown` when the function cannot be traced
    otherwise (Python control flow on tensor values, a wrapper's own check: the reason says how).
    Eager mode runs the same Python wrapper op by op, so the ops are the same but for wrappers that
    branch on eager execution. Enables NumPy behaviour (tnp needs it)."""
    import numpy as np
    import tensorflow as tf
    import tensorflow.experimental.numpy as tnp

    version = str(tf.__version__)
    public_tf_names(api, version)  # refuses an api table of another version
    registry = kernel_registry()
    mapped_module = load_mapped_module(Path(folder) / "test_mapped.py")
    tnp.experimental_enable_numpy_behavior()
    rows: list[dict[str, Any]] = []
    for origin in ("tnp", "mapped"):
        manifest = read_manifest(Path(folder) / f"{origin}.yaml")  # a malformed one is named (the CLI)
        for entry in manifest["entries"]:
            if origin == "tnp":
                function = mapped_module.resolve(entry["function"])
                arity, prepare = entry["arity"], None
            else:
                adapter = mapped_module.ADAPTERS[entry["adapter"]]
                function, arity, prepare = mapped_module.resolve(entry["function"]), adapter.arity, adapter
            base = {
                "framework": FRAMEWORK,
                "framework_version": version,
                "function": entry["function"],
                "unmapped_reason": None,
                "origin": origin,
                "entry": entry["entry"],
                "variant": None,
                "aspect": "forward",
                "test_class": None,
                "test_name": None,
                "active": True,
            }
            for dtype in entry["dtypes"]:
                kind = entry["kinds"][dtype][0]
                given = _generated(entry["entry"], dtype, kind, arity)
                source = f"{KERNEL_SOURCE}: ops of {entry['function']} traced on {kind} {dtype}"
                with np.errstate(all="ignore"):
                    verdicts = _declared_for(function, prepare, entry, given, registry)
                for device_type, (declared, reason) in verdicts.items():
                    rows.append(
                        {
                            **base,
                            "device_type": device_type,
                            "dtype": dtype,
                            "declared": declared,
                            "reason": reason,
                            "source": source,
                        }
                    )
    frame = pd.DataFrame(rows, columns=arrow_schema("declared").names)
    return to_arrow("declared", frame).to_pandas(types_mapper=pd.ArrowDtype)


def _generated(entry: str, dtype: str, kind: str, arity: int) -> tuple[Any, ...]:
    from portability_data.runner.generator import sample

    return sample(entry, dtype, kind, arity).args


def _declared_for(
    function: Any, adapter: Any, entry: dict[str, Any], arrays: tuple[Any, ...], registry: dict[str, Any]
) -> dict[str, tuple[str, str | None]]:
    """device type -> (declared, reason) for one entry on one input."""
    import tensorflow as tf

    try:
        host = adapter.prepare(arrays) if adapter is not None else arrays
        tensors = [tf.constant(a) for a in host]
        if adapter is None:
            traced = tf.function(lambda *xs: function(*xs), autograph=False)
        else:

            def traced_call(*xs: Any) -> Any:
                return adapter.call(lambda f, *a, **k: f(*a, **k), function, list(xs), entry)

            traced = tf.function(traced_call, autograph=False)
        graph_def = traced.get_concrete_function(*tensors).graph.as_graph_def()
    except Exception as error:
        message = f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"
        if any(words in str(error) for words in OP_DEFINITION_REFUSALS):
            verdict = ("unsupported_dtype", f"the op definition refuses the dtype while tracing: {message}")
        else:
            verdict = ("unknown", f"cannot be traced into a graph, no kernel looked up: {message}")
        return dict.fromkeys(DECLARED_DEVICE_TYPES.values(), verdict)
    verdicts = {}
    for kernel_device, device_type in DECLARED_DEVICE_TYPES.items():
        missing = missing_kernels(graph_def, registry, kernel_device)
        verdicts[device_type] = (
            ("unsupported_dtype", f"no {kernel_device} kernel for {', '.join(missing)}")
            if missing
            else ("supported_dtype", None)
        )
    return verdicts


def declared_rows(api: pd.DataFrame) -> pd.DataFrame:
    """tf_declared_rows with plain column types, as the other frameworks' rows stand beside them."""
    return plain_frame(tf_declared_rows(api))
