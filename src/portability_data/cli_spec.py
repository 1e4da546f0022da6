"""How a `portability` command is written: an entry of cli.COMMANDS is a Command with its Args
(argparse's add_argument arguments), made with the helpers below. Kept apart from the command list
itself, which is long by nature (one entry per step of the data flow)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from portability_data.runner import devices


def comma_list(text: str) -> list[str]:
    """A comma-separated option value as a list (empty items dropped)."""
    return [item.strip() for item in text.split(",") if item.strip()]


def device_help() -> str:
    """The registered device paths, one clause each (runner/devices/), for `--device`'s help."""
    listed = "; ".join(f"{name}: {path.summary}" for name, path in devices.registry().items())
    return f"the device path under test (one per run; `portability devices` lists them): {listed}"


@dataclass(frozen=True)
class Arg:
    """One option or positional of a command: the arguments of argparse's `add_argument`."""

    names: tuple[str, ...]
    settings: dict[str, Any]


def arg(*names: str, **settings: Any) -> Arg:
    """Any option or positional, as `add_argument(*names, **settings)` takes it."""
    return Arg(names, settings)


def path_arg(name: str, default: str | Path, help_: str) -> Arg:
    """A path option with a default path."""
    return Arg((name,), {"type": Path, "default": Path(default), "help": help_})


def flag(name: str, help_: str) -> Arg:
    """An on/off option (off by default)."""
    return Arg((name,), {"action": "store_true", "help": help_})


@dataclass(frozen=True)
class Command:
    """A (sub)command: its words after `portability`, the function it runs (None for a group whose
    subcommands follow it), its help (also its description) and its options."""

    words: str
    func: Callable[[argparse.Namespace], None] | None
    help: str
    args: tuple[Arg, ...] = ()


def command(words: str, func: Callable[[argparse.Namespace], None] | None, help_: str, *args: Arg) -> Command:
    """One entry of COMMANDS: `words` such as "case new" put the command under its group."""
    return Command(words, func, help_, args)


def budget_args() -> tuple[Arg, ...]:
    """`bench --device D --budget S --out DIR`: the budgeted bench of one device path (issue 58,
    runner/budget_bench.py), for a machine lent for minutes."""
    from portability_data.runner.spec import RUN_SOURCES

    return (
        arg(
            "--device",
            choices=devices.path_names(),
            help="measure this one device path under a time budget, parts in priority order (curated "
            "torch eager, compiled; JAX eager, jit; then the census), into --out; with --dry-run: the "
            "package check and the plan with each part's estimated seconds",
        ),
        arg("--budget", type=float, default=420.0, help="seconds the bench may take (default: %(default)s)"),
        arg("--out", type=Path, help="--device: folder: data/, bench_journal.json, summary, submission/"),
        arg(
            "--parts",
            type=comma_list,
            help="--device: the parts in order, comma-separated framework/mode[/census] "
            "(default: torch/eager,torch/compiled,jax/eager,jax/compiled, then the census parts)",
        ),
        arg("--timeout", type=float, default=60.0, help="--device: seconds per subtest (%(default)s)"),
        arg("--repeats", type=int, default=1, help="--device: runs of every subtest (default: %(default)s)"),
        arg(
            "--source",
            choices=RUN_SOURCES,
            default="local",
            help="--device: whose runs these are (as `portability run --source`; default: %(default)s)",
        ),
    )
