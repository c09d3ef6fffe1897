"""Inert Markdown: the one escape every Markdown we write (report.md, the rubric export, the
calibration card) puts text from data or from an LLM through. Imports nothing of annotate.

Escaped text renders as itself in any viewer, HTML-enabled ones too: no raw HTML, no
autolink, no image or link, no emphasis, code, list, heading or table cell boundary.
"""

from __future__ import annotations

import html
import re
from typing import Any

_INLINE = re.compile(r"([\\`*_\[\]|~])")
_LEADING = re.compile(r"^([#+=-]|\d+(?=[.)]))")


def inert(text: Any) -> str:
    """One line of inert Markdown: no raw HTML, no emphasis, links, lists or headings."""
    escaped = _INLINE.sub(r"\\\1", html.escape(str(text), quote=False))
    one_line = " ".join(escaped.split())
    return _LEADING.sub(_escape_leading, one_line)


def inert_lines(text: Any) -> str:
    """Text of several lines (instructions, definitions) as inert Markdown: each line through
    `inert`, so a line can start nothing (heading, list, fence, HTML block); blank lines stay
    and separate paragraphs."""
    return "\n".join(inert(line) for line in str(text).splitlines())


def _escape_leading(match: re.Match[str]) -> str:
    """`# x` would be a heading, `- x` a list item, `1. x` a numbered one."""
    mark = match.group(1)
    return mark + "\\" if mark.isdigit() else "\\" + mark
