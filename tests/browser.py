"""The Chromium the browser tests drive, found when a test first needs it rather than at collection:
CI installs it beside the environment's install instead of before it (issue 57: ~50 s of apt on a
fresh machine, off CI's critical path), so the tests wait for that install to end (the file named by
PORTABILITY_BROWSER_PENDING, holding apt's exit status) before they look.

Where no Chromium is found the tests skip with the reason, except where CI says one must be there
(PORTABILITY_REQUIRE_BROWSER, or a pending install that succeeded): then they fail, never skip."""

from __future__ import annotations

import functools
import os
import shutil
import time
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome", "headless_shell")
MISSING = f"no Chromium binary on the PATH (looked for {', '.join(BROWSERS)})"
PENDING_WAIT_S = 900.0  # CI's apt install beside the environment's: about a minute where it runs


def on_path() -> str | None:
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def pending_install(status_file: Path, wait_s: float = PENDING_WAIT_S) -> int:
    """apt's exit status of CI's Chromium install, once it has ended (waiting up to `wait_s`)."""
    deadline = time.monotonic() + wait_s
    while not status_file.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"CI's Chromium install did not end within {wait_s:.0f} s (no {status_file})")
        time.sleep(1.0)
    text = status_file.read_text().strip()
    if not text.lstrip("-").isdigit():
        raise RuntimeError(f"{status_file} should hold apt's exit status, not {text!r}")
    return int(text)


@functools.cache
def located() -> tuple[str | None, str]:
    """(the browser's path or None, why none): raises where CI requires one and there is none."""
    pending = os.environ.get("PORTABILITY_BROWSER_PENDING")
    required = bool(os.environ.get("PORTABILITY_REQUIRE_BROWSER"))
    why = MISSING
    if pending:
        status = pending_install(Path(pending))
        log = Path(pending).with_name(".ci-chromium.log")
        if status == 0:
            required = True  # CI installed one: never skip
        else:
            why = f"CI could not install Chromium (apt exit status {status}; see {log})"
    found = on_path()
    if found is None and required:
        raise RuntimeError(f"CI installed or promised Chromium but there is {MISSING}")
    return found, why


def browser() -> str:
    """The browser's path, or the calling test skipped with why there is none."""
    found, why = located()
    if found is None:
        pytest.skip(why)
    return found
