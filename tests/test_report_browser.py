"""reports/report.html in a real headless browser, offline: it loads with no external request (every
figure embedded or local), and a reader sees the title and the findings first (issue 49). Skipped
only where no Chromium binary is found and none is required (tests/browser.py);
PORTABILITY_SCREENSHOT=path keeps the screenshot there."""

from __future__ import annotations

import os
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.browser import browser
from tests.conftest import REPO_ROOT

REPORT = REPO_ROOT / "reports" / "report.html"

pytestmark = pytest.mark.usefixtures("chromium")  # skipped or required: tests/browser.py

EXTERNAL = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
CSS_URL = re.compile(r"url\(\s*['\"]?\s*((?:https?:)?//[^)'\"]*)", re.IGNORECASE)


def headless(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Chromium headless on the report, with every host name unresolvable: nothing can be fetched."""
    command = [
        browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--window-size=1280,1000",
        *args,
        REPORT.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


class Page(HTMLParser):
    """What the rendered DOM holds: the first heading, the list right after it, every URL it loads."""

    def __init__(self) -> None:
        super().__init__()
        self.first_heading: str | None = None
        self.in_heading = False
        self.heading_text = ""
        self.findings: list[str] | None = None  # the items of the first list after the first heading
        self.list_depth = 0
        self.item: str | None = None
        self.urls: list[str] = []
        self.in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "srcset", "poster", "data") and value:
                self.urls.append(value)
            if name == "style" and value:
                self.urls.extend(CSS_URL.findall(value))
        self.in_style = tag == "style"
        if tag == "h1" and self.first_heading is None:
            self.in_heading = True
        if tag == "ul" and self.first_heading is not None and self.findings is None:
            self.findings, self.list_depth = [], 1
        elif tag == "ul" and self.list_depth:
            self.list_depth += 1
        if tag == "li" and self.list_depth == 1:
            self.item = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "h1" and self.in_heading:
            self.in_heading, self.first_heading = False, self.heading_text.strip()
        if tag == "li" and self.item is not None and self.list_depth == 1 and self.findings is not None:
            self.findings.append(" ".join(self.item.split()))
            self.item = None
        if tag == "ul" and self.list_depth:
            self.list_depth -= 1
        if tag == "style":
            self.in_style = False

    def handle_data(self, data: str) -> None:
        if self.in_heading:
            self.heading_text += data
        if self.item is not None:
            self.item += data
        if self.in_style:
            self.urls.extend(CSS_URL.findall(data))


def test_the_report_renders_offline_with_its_findings_first(tmp_path: Path) -> None:
    dumped = headless(tmp_path, "--dump-dom")
    assert dumped.returncode == 0 and "<html" in dumped.stdout.lower(), dumped.stderr[-2000:]
    page = Page()
    page.feed(dumped.stdout)
    external = [url for url in page.urls if EXTERNAL.match(url)]
    assert not external, f"the report loads from the network: {external[:5]}"
    images = [url for url in page.urls if url.startswith("data:image/")]
    assert images, "no embedded figure in the rendered page"
    assert page.first_heading == "Portability report"
    assert page.findings is not None and len(page.findings) >= 3, page.findings
    starts = [item.split(":")[0] for item in page.findings]
    assert starts[:2] == ["Then (2023, the study)", "Now (newer runs)"], starts
    assert any(item.startswith("The census") for item in page.findings), starts
    assert all(re.search(r"\d", item) for item in page.findings), "a finding without a number"


def test_the_top_of_the_report_is_drawn(tmp_path: Path) -> None:
    """The screenshot is not blank: headless Chromium drew text and figures, not an empty page."""
    from PIL import Image

    shot = Path(os.environ.get("PORTABILITY_SCREENSHOT") or tmp_path / "report_top.png")
    done = headless(tmp_path, f"--screenshot={shot}")
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    with Image.open(shot) as image:
        assert image.size == (1280, 1000)
        colours = image.convert("L").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 16, "the screenshot is (nearly) one colour"
