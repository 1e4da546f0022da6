"""The report as a document: sections and summary headlines, rendered to Markdown (figures as files)
and to one self-contained HTML page (figures inline, no network), with GitHub's heading anchors in
both so links between sections work in either."""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass, field

import pandas as pd

from portability_data.report.summaries import to_markdown


@dataclass
class Headline:
    """One headline of the summary: a bold title, a line saying how to read it, the section that
    details it (by title, so its anchor is computed at render time) and a small table of text cells."""

    title: str
    note: str
    target: str
    table: pd.DataFrame


@dataclass
class Section:
    """A titled part of the report: why it is there, its tables, its figures (file names); the
    summary has headlines instead (each linking to the section that details it)."""

    title: str
    text: str
    tables: list[tuple[str, pd.DataFrame]]
    figures: list[str]
    headlines: list[Headline] = field(default_factory=list)


def _html_table(frame: pd.DataFrame) -> str:
    if frame is None or frame.empty:
        return "<p><em>(no rows)</em></p>"
    shown = frame.copy()
    for column in shown.columns:
        shown[column] = [
            (
                ""
                if v is None or (isinstance(v, float) and math.isnan(v))
                else f"{v:.4g}"
                if isinstance(v, float)
                else str(v)
            )
            for v in shown[column]
        ]
    return shown.to_html(index=False, border=0, escape=True)


def _markdown_table(frame: pd.DataFrame) -> str:
    """The table in aggregate.to_markdown's format, without its heading."""
    return to_markdown({"t": frame}).split("\n", 1)[1]


def heading_anchor(text: str) -> str:
    """The anchor GitHub gives a Markdown heading (lower case, punctuation dropped, spaces as hyphens),
    so the summary's links work in the rendered report.md and, as ids, in report.html alike."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _heading_anchors(sections: list[Section]) -> dict[tuple[int, int], str]:
    """Each heading's anchor in document order, repeats numbered -1, -2 as GitHub does (a table title
    may repeat a section title). Key: (section index, -1) for a section, (section, table) for a table."""
    seen: dict[str, int] = {}

    def unique(text: str) -> str:
        base = heading_anchor(text)
        count = seen.get(base, 0)
        seen[base] = count + 1
        return base if count == 0 else f"{base}-{count}"

    unique("Portability report")
    anchors: dict[tuple[int, int], str] = {}
    for i, section in enumerate(sections):
        anchors[(i, -1)] = unique(section.title)
        for j, (title, _) in enumerate(section.tables):
            anchors[(i, j)] = unique(title)
    return anchors


def _inline_html(text: str) -> str:
    """The inline Markdown the report writes, as HTML: **bold**, `code`, in-page links [t](#a); any
    other link keeps only its text, so the page stays self-contained."""
    out = html.escape(text, quote=False)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\[([^\]]+)\]\(#([\w-]+)\)", r"<a href='#\2'>\1</a>", out)
    return re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", out)


def _headline_lines(headline: Headline, anchor: str) -> tuple[str, pd.DataFrame | None]:
    """(the headline's Markdown line, its table or None when nothing was measured)."""
    line = f"**{headline.title}**: {headline.note} [Details](#{anchor})"
    table = headline.table
    return line, (table if len(table) and len(table.columns) > 1 else None)


def render(
    sections: list[Section], images: dict[str, bytes], intro: str, findings: list[str] | None = None
) -> tuple[str, str]:
    """(Markdown, HTML): Markdown points at figures/<name>; HTML embeds them as data URIs (offline).
    Headings carry GitHub's anchors in both, so links between sections work in either. `findings`
    (report.findings) open the page as a list, before the intro."""
    anchors = _heading_anchors(sections)
    by_title = {section.title: anchors[(i, -1)] for i, section in reversed(list(enumerate(sections)))}
    opening = [f"- {line}" for line in findings or []]
    md = ["# Portability report\n", *(["\n".join(opening) + "\n"] if opening else []), intro + "\n"]
    page = [
        "<!doctype html>",
        "<html lang='en'><head><meta charset='utf-8'><title>Portability report</title>",
        "<style>body{font-family:sans-serif;max-width:1200px;margin:auto;padding:0 1em;line-height:1.4}"
        "table{border-collapse:collapse;font-size:12px;margin:0.5em 0 1.5em}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}th{background:#f2f2f2}"
        "img{max-width:100%}figure{margin:1em 0}figcaption{font-size:12px;color:#444}"
        "details{margin-bottom:1em}</style></head><body>",
        "<h1>Portability report</h1>",
        *(
            ["<ul>", *(f"<li>{_inline_html(line)}</li>" for line in findings or []), "</ul>"]
            if findings
            else []
        ),
        f"<p>{_inline_html(intro)}</p>",
        "<ul>",
    ]
    page += [
        f"<li><a href='#{anchors[(i, -1)]}'>{html.escape(s.title)}</a></li>" for i, s in enumerate(sections)
    ]
    page.append("</ul>")
    for i, section in enumerate(sections):
        page.append(f"<h2 id='{anchors[(i, -1)]}'>{html.escape(section.title)}</h2>")
        if section.text:
            page.append(f"<p>{_inline_html(section.text)}</p>")
        if section.headlines:  # the summary: compact, so that it fits one screen
            lines = [f"## {section.title}", ""] + ([section.text, ""] if section.text else [])
            for headline in section.headlines:
                line, table = _headline_lines(headline, by_title.get(headline.target, ""))
                lines += [line, "", _markdown_table(table).strip() if table is not None else "(no rows)", ""]
                page += [f"<p>{_inline_html(line)}</p>", _html_table(table)]
            md.append("\n".join(lines))
            continue
        md += [f"\n## {section.title}\n", section.text + "\n"]
        for name in section.figures:
            if name not in images:
                continue
            md.append(f"![{name}](figures/{name})\n")
            encoded = base64.b64encode(images[name]).decode()
            page.append(
                f"<figure><img alt='{html.escape(name)}' src='data:image/png;base64,{encoded}'>"
                f"<figcaption>{html.escape(name)}</figcaption></figure>"
            )
        for j, (title, table) in enumerate(section.tables):
            md += [f"\n### {title}\n", _markdown_table(table)]
            body = _html_table(table)
            if len(table) > 40:
                body = f"<details><summary>{len(table)} rows</summary>{body}</details>"
            page += [f"<h3 id='{anchors[(i, j)]}'>{html.escape(title)}</h3>", body]
    page.append("</body></html>")
    return "\n".join(md), "\n".join(page)
