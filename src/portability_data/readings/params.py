"""The error for a malformed params.yaml: raised by the pipeline's parameter checks and by the
readings that take a threshold from params.yaml (quiet.quiet_load_max).
"""

from __future__ import annotations


class ParamsError(ValueError):
    """params.yaml is malformed; the message lists every problem with its key and fix."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"{source}: {len(problems)} problem(s):\n" + "\n".join(f"  - {p}" for p in problems))
