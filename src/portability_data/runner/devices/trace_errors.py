"""The cause of a tf.function trace error, shared by the paths that trace TensorFlow functions
(LiteRT's converter, tf2onnx for ONNX Runtime, OpenVINO's TensorFlow frontend): the exception reads
"in user code:", the user's frames, then the cause (`ValueError: ...`), which TF may follow with the
frames where a variable was "Originally defined at:". A row's message is the cause, not the frames.
Kept out of the path modules so that each path's digest holds it once (runner/provenance.py hashes
a path's module with the path modules it imports).
"""

from __future__ import annotations

import re

# A line that opens with an exception's name (`ValueError: ...`, `tf.errors.InvalidArgumentError: ...`)
EXCEPTION_LINE = re.compile(r"\s*[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b:")


def trace_error_cause(text: str) -> str | None:
    """The cause of a tf.function trace error on one line; None for a text that is not one."""
    if not text.startswith("in user code:"):
        return None
    blocks = [block for block in re.split(r"\n\s*\n", text.strip()) if block.strip()]
    causes = [block for block in blocks if EXCEPTION_LINE.match(block)]
    cause = (causes or blocks)[-1].split("Originally defined at:")[0]
    return " ".join(line.strip() for line in cause.splitlines() if line.strip())
