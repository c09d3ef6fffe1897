"""Claims split by sentence, offline: the `sentences` extractor of `annotate claims` and the
runtime check's (annotate.check) split of a production answer. Pure text; no store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A dot after one of these never ends a sentence; after _MAY_END only before a capital letter.
_NEVER_END = """e.g i.e cf vs viz approx ca dept est fig vol pp dr mr mrs ms prof st mt sgt gen col lt
rev u.s u.k u.n ph.d jan feb mar apr jun jul aug sep sept oct nov dec al"""
_ABBREVIATIONS = frozenset(_NEVER_END.split())
_MAY_END = frozenset(["etc", "inc", "ltd", "corp", "co", "jr", "sr", "no", "a.m", "p.m"])
# a sentence ends at . ! ? (plus closing quotes/brackets) before whitespace, or at a line break
_END = re.compile(r"[.!?]+[\"')\]»”’]*(?=\s)|\n+")
_WORD_BEFORE_DOT = re.compile(r"([A-Za-z](?:\.?[A-Za-z])*)$")
_NEXT_CHAR = re.compile(r"\s*(\S)")
_CODE_BLOCK = re.compile(r"^[ \t]*```.*?(?:^[ \t]*```[^\n]*$|\Z)", re.S | re.M)
_LINE_MARKER = re.compile(r"[ \t]*(?:[-*+•]|\d+[.)]|#{1,6}|>)\s+")  # bullet, number, heading, quote


@dataclass(frozen=True)
class ClaimSpan:
    text: str
    start: int | None
    end: int | None


def split_sentences(text: str) -> list[ClaimSpan]:
    """Sentences with offsets. Fenced code blocks are skipped (code is not a claim to check
    against documents); each line and list item is its own sentence, its marker left out."""
    spans: list[ClaimSpan] = []
    cursor = 0
    for block in _CODE_BLOCK.finditer(text):
        spans += _split_prose(text, cursor, block.start())
        cursor = block.end()
    return spans + _split_prose(text, cursor, len(text))


def _split_prose(text: str, begin: int, stop: int) -> list[ClaimSpan]:
    spans, start = [], begin
    for match in _END.finditer(text, begin, stop):
        if match.group()[0] == "." and _is_inside_sentence(text, start, match):
            continue
        end = match.start() if match.group()[0] == "\n" else match.end()
        spans += _span(text, start, end)
        start = match.end()
    return spans + _span(text, start, stop)


def _is_inside_sentence(text: str, start: int, match: re.Match[str]) -> bool:
    """An abbreviation (Dr., e.g., U.S.), an initial (J.) or a list number (1.) is no end."""
    dot = match.start()
    line_start = max(text.rfind("\n", 0, dot) + 1, start)
    if re.fullmatch(r"\s*\d+", text[line_start:dot]):
        return True
    word = _WORD_BEFORE_DOT.search(text, max(start, dot - 24), dot)  # abbreviations are short
    if word is None or match.end() - dot > 1:  # "..." or ".)" ends a sentence
        return False
    name = word.group(1)
    if name.lower() in _ABBREVIATIONS or (len(name) == 1 and name.isupper()):
        return True
    following = _NEXT_CHAR.match(text, match.end())
    return name.lower() in _MAY_END and not (following and following.group(1).isupper())


def _span(text: str, start: int, end: int) -> list[ClaimSpan]:
    at_line_start = not text[text.rfind("\n", 0, start) + 1 : start].strip()
    marker = _LINE_MARKER.match(text, start, end) if at_line_start else None
    if marker:
        start = marker.end()
    piece = text[start:end]
    stripped = piece.strip()
    if not any(c.isalnum() for c in stripped):
        return []
    first = start + piece.index(stripped)
    return [ClaimSpan(stripped, first, first + len(stripped))]
