"""The offline explorer (reports/explorer/) in a real headless Chromium, every host unresolvable: a
search for a known function shows its row and its matrix, a known failing cell shows its error and
run from the support matrix, and nothing is fetched from the network. The committed page and data are
what the explorer stage writes from the committed tables. Skipped only where no Chromium is found
(CI sets PORTABILITY_REQUIRE_BROWSER or waits on its install: tests/browser.py then refuses to skip);
PORTABILITY_SCREENSHOT_DIR=folder keeps the screenshots there."""

from __future__ import annotations

import json
import os
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from portability_data.report.explorer import DATA_GLOBAL, write_explorer
from tests.browser import browser
from tests.conftest import REPO_ROOT
from tests.test_report_browser import EXTERNAL

pytestmark = pytest.mark.usefixtures("chromium")  # skipped or required: tests/browser.py

DATA = REPO_ROOT / "data"
COMMITTED = REPO_ROOT / "reports" / "explorer"
FUNCTION = "torch.linalg.svd"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("explorer")
    write_explorer(DATA, out)
    return out


def chromium(page: Path, fragment: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--window-size=1280,1000",
        "--virtual-time-budget=10000",
        *args,
        f"{page.as_uri()}#{fragment}",
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


class Dom(HTMLParser):
    """The rendered page: result rows (data-function), the matrix title, the evidence box's text and
    its error blocks, every URL it names."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[str] = []
        self.title = ""
        self.evidence = ""
        self.errors: list[str] = []
        self.urls: list[str] = []
        self.stack: list[str] = []
        self.evidence_hidden = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.urls.extend(v for k, v in attrs if k in ("src", "href") and v)
        if found.get("data-function"):
            self.rows.append(found["data-function"])
        if found.get("id") == "evidence":
            self.evidence_hidden = "hidden" in found
        mark = found.get("id") or found.get("class") or ""
        self.stack.append(mark if tag not in ("br", "meta", "input", "link") else "")
        if tag in ("br", "meta", "input", "link"):
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if "matrix-title" in self.stack:
            self.title += data
        if "evidence" in self.stack:
            self.evidence += data
        if "error" in self.stack:
            self.errors.append(data)


def rendered(page: Path, fragment: str, tmp_path: Path) -> Dom:
    done = chromium(page, fragment, tmp_path / "profile", "--dump-dom")
    assert done.returncode == 0 and "<html" in done.stdout.lower(), done.stderr[-2000:]
    dom = Dom()
    dom.feed(done.stdout)
    assert not [u for u in dom.urls if EXTERNAL.match(u)], dom.urls
    return dom


def test_the_committed_explorer_is_what_the_stage_writes(built: Path) -> None:
    for name in ("index.html", "data.js"):
        assert (COMMITTED / name).read_bytes() == (built / name).read_bytes(), (
            f"reports/explorer/{name} is stale: run `dvc repro -s explorer`"
        )


def test_a_search_shows_the_function_and_its_matrix(built: Path, tmp_path: Path) -> None:
    dom = rendered(built / "index.html", f"q={FUNCTION}", tmp_path)
    assert FUNCTION in dom.rows
    assert all(FUNCTION in row for row in dom.rows)  # a search is a filter
    assert dom.title == FUNCTION
    assert dom.evidence_hidden


def test_a_failing_cell_shows_its_error_and_run(built: Path, tmp_path: Path) -> None:
    matrix = pd.read_parquet(DATA / "census" / "support_matrix.parquet")
    failing = matrix[
        (matrix["function"] == FUNCTION) & (matrix["status"] == "fails") & matrix["error_message"].notna()
    ]
    row = failing.sort_values(["device", "mode", "dtype"]).iloc[0]
    data = json.loads(
        (built / "data.js").read_text(encoding="utf-8").removeprefix(f"window.{DATA_GLOBAL} = ").rstrip(";\n")
    )
    setting = next(
        i
        for i, s in enumerate(data["settings"])
        if (s["source"], s["path"], s["device_model"], s["mode"], s["framework_version"])
        == ("census", row["device"], row["device_model"], row["mode"], row["framework_version"])
    )
    dom = rendered(built / "index.html", f"fn={FUNCTION}&cell={setting}:{row['dtype']}", tmp_path)
    assert not dom.evidence_hidden
    assert row["run_id"] in dom.evidence and row["entry"] in dom.evidence
    assert "fails" in dom.evidence and f"{int(row['samples'])} run" in dom.evidence
    first_line = row["error_message"].strip().splitlines()[0][:80]
    assert any(first_line in error for error in dom.errors), (first_line, dom.errors)


def test_the_screenshots_are_drawn(built: Path, tmp_path: Path) -> None:
    """A search and a failing cell's evidence, drawn (not one colour)."""
    from PIL import Image

    folder = Path(os.environ.get("PORTABILITY_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    for name, fragment in (("search", f"q={FUNCTION}"), ("summary", "")):
        shot = folder / f"explorer_{name}.png"
        done = chromium(built / "index.html", fragment, tmp_path / f"profile-{name}", f"--screenshot={shot}")
        assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
        with Image.open(shot) as image:
            colours = image.convert("L").getcolors(maxcolors=1 << 16)
        assert colours is None or len(colours) > 16, f"{shot} is (nearly) one colour"
