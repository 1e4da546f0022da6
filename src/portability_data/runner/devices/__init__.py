"""The device paths: each a way a framework's function under test reaches hardware (a device, and
the compiler or runtime that carries it there), as one record in one module of this package.

A path's module holds its `PATH` (a `DevicePath`: its name, what it needs installed, the compiler of
compiled mode per framework) and, per framework it serves, a subclass of that framework's backend
(runner/backends.py) that says how the path finds its device, places inputs (its handle), syncs
before the clock stops, what it counts (host fallbacks, compilations), and how it names its
hardware and driver. The registry below finds the modules itself: adding a path edits no other file.
The CLI's `--device` values, the runs row's device fields, the dry run's advice and each setting's
harness digest come from here.

The harness digest of a setting is the shared core (runner/provenance.py CORE_FILES: the harness,
the framework backends, the timer, the worker and this file) and its path's module (with any path
module it imports): editing one path re-measures that path's settings only.

How to add a path (the recipe; tests/test_device_paths.py adds a skeleton this way):
1. Write `runner/devices/<name>.py` with a backend subclass per framework it serves, e.g.
   `class TorchFoo(TorchBackend)` setting `device_type`, and overriding `find_device` (raise
   DeviceUnavailableError with what to do), `sync`, `describe`, `driver`, and, where the device can
   tell, `counts_device_events = True` with `observe`.
2. End the module with `PATH = DevicePath(name=..., summary=..., backends={...}, needs=...,
   what_to_do=...)`; `needs` names the extra or venv that provides its packages.
3. Add the name to `tables.contracts.DEVICES` (the tables' vocabulary; a test keeps both equal), a
   row to docs/DEVICE_PATHS.md, and run `portability run --device <name> --dry-run`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from portability_data.runner.backends import Backend, DeviceUnavailableError


class UnknownDevicePathError(ValueError):
    """A device or compiler that no registered path provides (the message lists the registered)."""


@dataclass(frozen=True)
class DevicePath:
    """One device path: where the function under test runs and through what, for each framework."""

    name: str  # the runs and results tables' `device`, and `--device` of the CLI
    summary: str  # one line for `--help` and the dry run
    backends: Mapping[str, type[Backend]]  # framework -> its backend on this path
    what_to_do: str  # the next step for a person whose worker could not reach the device
    needs: str | None = None  # what it needs installed beyond the pinned frameworks, and how
    not_served: Mapping[str, str] = field(default_factory=dict)  # framework -> why not on this path
    runtime: str | None = None  # the runtime that executes it, where not the framework's own
    module: str = ""  # its module's file name (set by the registry)

    def compiler(self, framework: str, mode: str) -> str | None:
        """The compiler of the framework's compiled mode on this path (runs.compiler); None in eager."""
        if mode != "compiled" or framework not in self.backends:
            return None
        return self.backends[framework].compiler or None

    def compilers(self, framework: str) -> tuple[str, ...]:
        """The compilers `--compiler` accepts for the framework on this path."""
        found = self.compiler(framework, "compiled")
        return (found,) if found else ()


_REGISTRY: dict[str, DevicePath] = {}


def registry() -> dict[str, DevicePath]:
    """name -> path, of every module of this package that defines `PATH` (imported once, in name
    order; importing a path module imports no framework)."""
    if not _REGISTRY:
        found = {}
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
            module = importlib.import_module(f"{__name__}.{info.name}")
            path = getattr(module, "PATH", None)
            if not isinstance(path, DevicePath):
                continue
            if path.name in found:
                raise RuntimeError(f"device path {path.name!r} is defined twice ({info.name}.py)")
            found[path.name] = replace(path, module=f"{info.name}.py")
        _REGISTRY.update(found)
    return _REGISTRY


def path_names() -> tuple[str, ...]:
    return tuple(registry())


def path_named(name: str) -> DevicePath:
    """The registered path `name`; an unknown name is an error that lists the registered ones."""
    try:
        return registry()[name]
    except KeyError:
        raise UnknownDevicePathError(
            f"unknown device {name!r}; the registered device paths are {', '.join(registry())} "
            "(runner/devices/: one module per path)"
        ) from None


def check_compiler(framework: str, device: str, mode: str, compiler: str | None) -> str | None:
    """The compiler a setting runs with: `compiler` if the path offers it for the framework (None:
    the path's own); an unknown one is an error that names those the path has."""
    path = path_named(device)
    default = path.compiler(framework, mode)
    if compiler is None or compiler == default:
        return default
    offered = path.compilers(framework)
    where = f"{framework} on {device}"
    if mode != "compiled":
        raise UnknownDevicePathError(f"--compiler {compiler!r}: a compiler needs --mode compiled ({where})")
    raise UnknownDevicePathError(
        f"unknown compiler {compiler!r} for {where}; registered: {', '.join(offered) or 'none'}"
    )


def backend_for(framework: str, device: str) -> Backend:
    """The framework's backend on the path `device`, created (finding its device: may raise
    DeviceUnavailableError with what the path says of it)."""
    path = path_named(device)
    if framework not in path.backends:
        reason = path.not_served.get(framework, f"the {device} path serves {', '.join(path.backends)} only")
        raise DeviceUnavailableError(f"device {device}: {reason}")
    return path.backends[framework](device)


def compiler_of(framework: str, device: str, mode: str) -> str | None:
    """The compiler a setting of the path's own ran with: what a null `compiler` of a row written
    before schema 10 (or by the study) reads as on a registered path; None for eager or unknown."""
    path = registry().get(device)
    return path.compiler(framework, mode) if path is not None else None
