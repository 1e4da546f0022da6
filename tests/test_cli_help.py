"""Every option of every `portability` command says what it is for (`--help` is a user's first
documentation), and every help page renders (a stray % in a help text breaks argparse)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from portability_data.cli import build_parser


def _parsers(
    parser: argparse.ArgumentParser, path: str = "portability"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """The parser and every subcommand's parser below it, with the command line that reaches it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, f"{path} {name}")


def _options_without_help(parser: argparse.ArgumentParser) -> list[str]:
    """Options and positionals whose help is missing, empty or suppressed."""
    missing = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
            missing.append("/".join(action.option_strings) or action.dest)
    return missing


def test_every_option_of_every_command_has_help() -> None:
    offenders = [
        f"{path}: {option}"
        for path, parser in _parsers(build_parser())
        for option in _options_without_help(parser)
    ]
    assert not offenders, "options without help:\n" + "\n".join(offenders)


def test_every_help_page_renders() -> None:
    pages = dict(_parsers(build_parser()))
    assert {"portability report", "portability aggregate", "portability dataset build"} <= set(pages)
    for parser in pages.values():
        assert parser.format_help()


def test_report_help_explains_out_and_metrics() -> None:
    text = dict(_parsers(build_parser()))["portability report"].format_help()
    assert "report.md" in text and "figures/" in text  # --out
    assert "dvc metrics diff" in text and "reports/metrics.json" in text  # --metrics and its default


def test_the_check_finds_an_option_without_help() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documented", help="says what it does")
    parser.add_argument("--bare")
    assert _options_without_help(parser) == ["--bare"]
