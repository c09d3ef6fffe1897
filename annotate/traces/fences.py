"""Untrusted text fenced for an LLM prompt: each block inside its <tag>...</tag>, and in it every
spelling of a prompt's tag that a model may still read as the tag defused. Owns no prompt.

A model reads through escapes and look-alikes, so tags are looked for in the text as a model
may read it (`Reading`): JSON escapes undone (`<\\/response>`, `\\u003c`), each character
NFKC-folded (mathematical bold, fullwidth), and each letter of a tag name matched together with
its Unicode TR39 confusables (Cyrillic р, е, с, о ...; the table ships with
confusable-homoglyphs). What is found is defused where it was written: the opening bracket,
as written (one character or an escape), becomes "&lt;".
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence

# "<" and the brackets a model may read as one: fullwidth, small, single angle, math angle
_OPENERS = "<\uff1c\ufe64\u2039\u3008\u27e8"
_SLASHES = "/\uff0f\u2215"
# characters a model reads through but a plain match does not: zero-width space, joiners and
# marks, word joiner and invisible operators, byte order mark, soft hyphen
_INVISIBLE = "\u00ad\u200b-\u200f\u2060-\u2064\ufeff"
# C0 and C1 controls but tab and newline, and the bidi overrides that reorder what a reader sees
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# JSON (and JavaScript) escapes, however many backslashes: a model reads `\\/` as "/" too
_ESCAPE = re.compile(
    r"\\+(?:u([dD][89abAB][0-9a-fA-F]{2})\\+u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(/))"
)
_DEFUSED = "&lt;"


def fence(blocks: Sequence[tuple[str, str]], tags: Iterable[str] = ()) -> str:
    """Untrusted texts, each inside its <tag>...</tag>, for every prompt that holds any.

    In every block, every tag the prompt uses (the blocks' tags and `tags`, such as those
    the system prompt names) is defused, in any spelling a model might still read as the
    tag: any case, spaces, "_" or "-" inside, a slash or not, look-alike brackets and
    letters, escapes. Its opening bracket becomes "&lt;", so each block has exactly one
    opening and one closing tag.
    """
    every = {tag for tag, _ in blocks} | set(tags)
    return "\n\n".join(f"<{tag}>\n{defuse(text, every)}\n</{tag}>" for tag, text in blocks)


def defuse(text: str, tags: Iterable[str]) -> str:
    """`text` with no control characters and every spelling of `tags` defused, as inside a
    fence: for text a prompt holds outside one (a rubric's own words)."""
    clean = strip_controls(text)
    if not _may_open(clean):
        return clean
    reading = Reading(clean)
    found = [reading.span(m.start()) for m in _tag_pattern(frozenset(tags)).finditer(reading.text)]
    out, at = [], 0
    for start, end in found:
        out += [clean[at:start], _DEFUSED]
        at = end
    return "".join([*out, clean[at:]])


def strip_controls(text: str) -> str:
    """Untrusted text without control characters (a carriage return becomes a newline)."""
    return _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")


class Reading:
    """`original` as a model may read it (`text`: escapes undone, NFKC per character), and
    where each of its characters was read from (`span`). ASCII runs are read as written."""

    def __init__(self, original: str) -> None:
        self.pieces: list[str] = []
        # (start in text, start in original, end in original or -1 for a run read as written)
        self.marks: list[tuple[int, int, int]] = []
        self.length = 0
        at = 0
        for match in _ESCAPE.finditer(original):
            self._plain(original, at, match.start())
            self._add(_folded(_unescaped(match)), *match.span())
            at = match.end()
        self._plain(original, at, len(original))
        self.text = "".join(self.pieces)
        self.starts = [mark[0] for mark in self.marks]

    def span(self, index: int) -> tuple[int, int]:
        """The part of the original that character `index` of `text` was read from."""
        start, origin, end = self.marks[bisect.bisect_right(self.starts, index) - 1]
        return (origin + index - start, origin + index - start + 1) if end < 0 else (origin, end)

    def _plain(self, original: str, start: int, end: int) -> None:
        for match in _NOT_ASCII.finditer(original, start, end):
            self._add(original[start : match.start()], start, -1)
            self._other(match.group(), match.start())
            start = match.end()
        self._add(original[start:end], start, -1)

    def _other(self, run: str, origin: int) -> None:
        """Non-ASCII characters, folded; read in place when each folds to one character."""
        if unicodedata.is_normalized("NFKC", run):  # most text: nothing to fold
            self._add(run, origin, -1)
            return
        folded = [_folded(char) for char in run]
        if all(len(char) == 1 for char in folded):
            self._add("".join(folded), origin, -1)
            return
        for offset, char in enumerate(folded):
            self._add(char, origin + offset, origin + offset + 1)

    def _add(self, piece: str, origin: int, end: int) -> None:
        if piece:
            self.marks.append((self.length, origin, end))
            self.pieces.append(piece)
            self.length += len(piece)


@functools.lru_cache(maxsize=4096)
def _folded(char: str) -> str:
    return char if char.isascii() else unicodedata.normalize("NFKC", char)


def _unescaped(match: re.Match[str]) -> str:
    high, low, code, byte, slash = match.groups()
    if high:
        pair = chr(int(high, 16)) + chr(int(low, 16))
        return pair.encode("utf-16", "surrogatepass").decode("utf-16")
    return slash or chr(int(code or byte, 16))


def _may_open(text: str) -> bool:
    """Whether any character could be read as an opening bracket: most text has none."""
    return _opening().search(text) is not None


@functools.lru_cache(maxsize=64)
def _tag_pattern(tags: frozenset[str]) -> re.Pattern[str]:
    gap = rf"[\s_\-{_INVISIBLE}]*"
    names = "|".join(gap.join(_letter(ch) for ch in tag) for tag in sorted(tags))
    space = rf"[\s{_INVISIBLE}]*"
    opener, slash = _class("<", _OPENERS), _class("/", _SLASHES)
    return re.compile(rf"{opener}(?={space}{slash}?{space}(?:{names}))", re.I | re.UNICODE)


def _letter(ch: str) -> str:
    """A tag's letter, or any of its look-alikes (a sequence like "rn" for "m" too)."""
    glyphs = _homoglyphs(ch.lower()) | _homoglyphs(ch.upper()) | {ch.lower(), ch.upper()}
    single = "".join(re.escape(g) for g in sorted(glyphs) if len(g) == 1)
    longer = sorted(re.escape(g) for g in glyphs if len(g) > 1)
    return "(?:" + "|".join([f"[{single}]", *longer]) + ")"


def _class(ch: str, also: str) -> str:
    single = {g for g in _homoglyphs(ch) if len(g) == 1} | set(also)
    return "[" + "".join(re.escape(g) for g in sorted(single)) + "]"


def _homoglyphs(ch: str) -> set[str]:
    """Every character (or short sequence) TR39 lists as confusable with `ch`."""
    from confusable_homoglyphs.confusables import confusables_data  # 1 MB: only when needed

    found = confusables_data.get(ch, [])
    return {item["c"].strip("\u200e\u200f") for item in found} - {""}


@functools.lru_cache(maxsize=1)
def _opening() -> re.Pattern[str]:
    """Any character that is, or folds to, an opening bracket, and the backslash of an escape."""
    brackets = {c for c in _homoglyphs("<") if len(c) == 1} | set(_OPENERS)
    folding = "\u2329\ufe3f"  # NFKC reads these as "\u3008", one of _OPENERS
    return re.compile("[" + re.escape("".join(sorted(brackets)) + folding) + r"\\]")
