"""The CLI reference, generated from the argparse parsers of `annotate` at build time.

An MkDocs hook: the page docs/cli.md ends with a marker that is replaced by one section per
command (recursively through subcommands), so the reference cannot drift from the code. The
same walk lists what lacks help text (tests/test_docs_cli.py fails on it).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass

MARKER = "<!-- cli-reference -->"


@dataclass(frozen=True)
class Command:
    """One command of the tree: its words after `annotate`, parser and one-line help."""

    words: tuple[str, ...]
    parser: argparse.ArgumentParser
    help: str | None


def root_parser() -> argparse.ArgumentParser:
    from annotate.cli.main import build_parser

    return build_parser()


def walk(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> Iterator[Command]:
    """Every command under `parser`, depth first, in the order `--help` lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, child in action.choices.items():
                command = Command((*words, name), child, helps.get(name))
                yield command
                yield from walk(child, command.words)


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The arguments and flags a user types (not --help, not the subcommand slot)."""
    return [
        action
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
    ]


def names(action: argparse.Action) -> str:
    """How the user writes the argument: `--flag VALUE`, or a positional's name."""
    formatter = argparse.HelpFormatter("annotate")
    if not action.option_strings:  # as --help lists it: its metavar, or {its,choices}
        return formatter._metavar_formatter(action, action.dest)(1)[0]
    shown = ", ".join(action.option_strings)
    if action.nargs == 0:
        return shown
    return f"{shown} {formatter._format_args(action, action.dest.upper())}"


def help_text(action: argparse.Action) -> str | None:
    """The action's help with %(default)s and friends expanded; None when it has none."""
    if not action.help or action.help == argparse.SUPPRESS:
        return None
    return argparse.HelpFormatter("annotate")._expand_help(action)


def missing_help() -> list[str]:
    """`annotate WORDS` and `annotate WORDS --flag` for every command and flag without help."""
    missing = []
    for command in walk(root_parser()):
        prefix = "annotate " + " ".join(command.words)
        if not (command.help or command.parser.description):
            missing.append(prefix)
        missing += [f"{prefix} {names(a)}" for a in options(command.parser) if not help_text(a)]
    return missing


def cell(text: str) -> str:
    """Text in a Markdown table cell: pipes escaped, lines joined."""
    return " ".join(text.replace("|", "\\|").split())


def describe(action: argparse.Action) -> str:
    """The help, then the choices and a default that says something."""
    parts = [help_text(action) or ""]
    if action.choices is not None and not isinstance(action.choices, dict):
        parts.append("one of " + ", ".join(f"`{choice}`" for choice in action.choices))
    if action.required and action.option_strings:
        parts.append("required")
    return "; ".join(part for part in parts if part)


def anchor(words: tuple[str, ...]) -> str:
    return "annotate-" + "-".join(words)


def section(command: Command) -> str:
    """One command's section: heading, what it does, usage, and its table of arguments."""
    title = "annotate " + " ".join(command.words)
    level = "#" * min(2 + len(command.words) - 1, 4)
    lines = [f"{level} `{title}` {{ #{anchor(command.words)} }}", ""]
    if command.help:
        lines += [command.help[0].upper() + command.help[1:] + ".", ""]
    usage = command.parser.format_usage().removeprefix("usage: ").strip()
    lines += ["```text", usage, "```", ""]
    rows = [(names(a), describe(a)) for a in options(command.parser)]
    if rows:
        lines += ["| argument | what it does |", "|---|---|"]
        lines += [f"| `{cell(name)}` | {cell(text)} |" for name, text in rows]
        lines.append("")
    return "\n".join(lines)


def reference() -> str:
    """The whole reference: an index of commands, then a section per command."""
    commands = list(walk(root_parser()))
    index = [
        f"- [`annotate {' '.join(c.words)}`](#{anchor(c.words)}): {cell(c.help or '')}"
        for c in commands
    ]
    return "\n".join(["## Commands", "", *index, ""] + [section(c) for c in commands])


def on_page_markdown(markdown: str, page, **_: object) -> str:  # noqa: ANN001 (mkdocs' Page)
    """MkDocs hook: fill the marker of the CLI page with the generated reference."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())
