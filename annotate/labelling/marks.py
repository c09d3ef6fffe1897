"""Evidence marks for a reviewer: the claim's checkable details (numbers, amounts, dates,
names and ids), whether each occurs in the context, and the context passages that share the
most with the claim. Pure text in, spans out: no store, no judge, nothing rendered here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import cast

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
WORD_NUMBERS = {
    word: float(value)
    for value, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_MONTH = r"(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DATES = [
    ("ymd", re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")),
    ("mdy", re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.I)),
    (
        "dmy",
        re.compile(
            rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})(?:,?\s+(\d{{4}}))?\b", re.I
        ),
    ),
]
_AMOUNT = re.compile(
    r"[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:%|percent\b|USD\b|EUR\b|GBP\b|dollars?\b|euros?\b)",
    re.I,
)
_NUMBER = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])|\b(?:" + "|".join(WORD_NUMBERS) + r")\b", re.I
)
# ids (INV-1042, SKU12) and names: capitalised words, one or several in a row
_ID = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z][\w]*(?:-[\w]+)+\b|\b[A-Z]{2,}\d*\b")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)$")
_WORD = re.compile(r"[A-Za-z0-9]+")
# a sentence ends at . ! ? followed by a space or the end ("$43.00" does not end one)
_PASSAGE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+(?:[.!?]+|$)")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "their",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "we",
        "our",
        "you",
        "your",
        "i",
        "not",
        "no",
        "yes",
        "do",
        "does",
        "did",
        "done",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "have",
        "has",
        "had",
        "than",
        "then",
        "so",
        "if",
        "into",
        "out",
        "up",
        "down",
        "over",
        "under",
        "about",
        "after",
        "before",
        "within",
        "per",
        "each",
        "any",
        "all",
        "some",
    ]
)


DateKey = tuple[int, int, int | None]  # month, day, year (None: not given)


@dataclass(frozen=True)
class Detail:
    """One checkable detail of the claim: where it is in the claim, and where in the context."""

    text: str
    kind: str  # date | amount | number | id | name
    start: int
    end: int
    found: list[tuple[int, int, int]] = field(default_factory=list)  # (context item, start, end)

    @property
    def in_context(self) -> bool:
        return bool(self.found)


def _date_key(kind: str, groups: tuple[str | None, ...]) -> tuple[int, int, int | None] | None:
    try:
        if kind == "ymd":
            year, month, day = int(groups[0] or 0), int(groups[1] or 0), int(groups[2] or 0)
        elif kind == "mdy":
            month, day = MONTHS[(groups[0] or "").lower().rstrip(".")], int(groups[1] or 0)
            year = int(groups[2]) if groups[2] else 0
        else:
            day, month = int(groups[0] or 0), MONTHS[(groups[1] or "").lower().rstrip(".")]
            year = int(groups[2]) if groups[2] else 0
    except (KeyError, ValueError):
        return None
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return (month, day, year or None)


def _number_value(text: str) -> float | None:
    word = text.strip().lower()
    if word in WORD_NUMBERS:
        return WORD_NUMBERS[word]
    digits = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    try:
        return float(digits.group(0).replace(",", "")) if digits else None
    except ValueError:
        return None


def _free(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    return all(end <= a or start >= b for a, b in taken)


def _find(text: str) -> list[tuple[str, int, int, object]]:
    """(kind, start, end, key) of every detail in `text`, dates first, no overlaps."""
    found: list[tuple[str, int, int, object]] = []
    taken: list[tuple[int, int]] = []

    def add(kind: str, start: int, end: int, key: object) -> None:
        if key is not None and _free(taken, start, end):
            found.append((kind, start, end, key))
            taken.append((start, end))

    for kind, pattern in _DATES:
        for m in pattern.finditer(text):
            add("date", m.start(), m.end(), _date_key(kind, m.groups()))
    for m in _ID.finditer(text):
        add("id", m.start(), m.end(), m.group(0).lower())
    for m in _AMOUNT.finditer(text):
        add("amount", m.start(), m.end(), _number_value(m.group(0)))
    for m in _NUMBER.finditer(text):
        add("number", m.start(), m.end(), _number_value(m.group(0)))
    for m in _NAME.finditer(text):
        start, name = m.start(), m.group(0)
        if _SENTENCE_START.search(text[:start]):  # "Returns" opening a sentence is no name
            first = re.match(r"[A-Z][a-z]+[ -]?", name)
            start += first.end() if first else 0
            name = text[start : m.end()]
            if not name:
                continue
        add("name", start, m.end(), name.lower())
    return sorted(found, key=lambda item: item[1])


def _same(kind: str, key: object, other_kind: str, other_key: object) -> bool:
    numeric = {"amount", "number"}
    if kind in numeric:
        return other_kind in numeric and other_key == key
    if kind == "date":
        if other_kind != "date":
            return False
        mine, theirs = cast(DateKey, key), cast(DateKey, other_key)
        return mine[:2] == theirs[:2] and (
            mine[2] is None or theirs[2] is None or mine[2] == theirs[2]
        )
    return other_kind == kind and other_key == key


def _name_spans(text: str, name: str) -> list[tuple[int, int]]:
    pattern = re.compile(r"(?<!\w)" + re.escape(name) + r"(?!\w)", re.I)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def claim_details(claim: str, contexts: list[str]) -> list[Detail]:
    """The claim's numbers, amounts, dates, ids and names, each with where the context has it
    (a number by value: "$1,200" matches "1200"; a date by day: "2026-03-01" matches
    "March 1, 2026"; a name or id as a whole word, any case)."""
    in_context = [_find(text) for text in contexts]
    details = []
    for kind, start, end, key in _find(claim):
        spans = []
        for item, found in enumerate(in_context):
            spans += [(item, s, e) for k, s, e, o in found if _same(kind, key, k, o)]
            if kind == "name":  # a name also counts where it is not capitalised
                spans += [(item, s, e) for s, e in _name_spans(contexts[item], claim[start:end])]
        details.append(Detail(claim[start:end], kind, start, end, sorted(set(spans))))
    return details


def missing_details(details: list[Detail]) -> list[Detail]:
    return [d for d in details if not d.in_context]


def _content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in STOPWORDS}


def best_passages(
    claim: str, contexts: list[str], top: int = 2
) -> list[tuple[int, int, int, float]]:
    """The context sentences sharing the most content words with the claim: (context item,
    start, end, share of the claim's content words found there), best first, at most `top`,
    none that shares nothing."""
    words = _content_words(claim)
    if not words:
        return []
    scored = []
    for item, text in enumerate(contexts):
        for m in _PASSAGE.finditer(text):
            share = len(words & _content_words(m.group(0))) / len(words)
            if share > 0:
                start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
                scored.append((item, start, m.end(), round(share, 3)))
    scored.sort(key=lambda p: (-p[3], p[0], p[1]))
    return scored[:top]
