"""Is a value in a response? Numbers in their formats (1,000 / 1000 / 1k / 1.5 million / one
thousand), with their units and currency; dates in any of the styles we read; names whole.

Number words come from the `num2words` package: the expected value is written out in words
("two thousand five hundred") and looked for, rather than parsing every phrase of the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from num2words import num2words

from annotate.canary.values import (
    MULTIPLIERS,
    UNITS,
    currency_before,
    parse_date,
    parse_number,
    scan,
    unit_after,
)

_SCALED = re.compile(r"\s?(k|thousand|mn|m|million|bn|billion)\b", re.IGNORECASE)
_NUMBER_WORDS = set(
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
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "thousand",
        "million",
        "billion",
        "point",
        "and",
        "a",
    ]
)


@dataclass(frozen=True)
class Found:
    """What a response says: numbers with unit and currency, dates, and its plain words."""

    numbers: list[tuple[Decimal, str | None, str | None]]  # (value, unit, currency)
    dates: set[date]
    text: str
    words: list[str]


def read_response(text: str) -> Found:
    numbers, dates = [], set()
    for span in scan(text):
        if span.kind == "date":
            day = parse_date(span)
            if day:
                dates.add(day)
        elif span.kind in ("number", "year"):
            numbers.append(_number(text, span.text, span.start, span.end))
    return Found(numbers, dates, text, _words(text))


def _number(text: str, raw: str, start: int, end: int) -> tuple[Decimal, str | None, str | None]:
    value = parse_number(raw)
    scaled = _SCALED.match(text, end)
    if scaled and not (scaled.group(1).lower() == "m" and unit_after(text, scaled.end())):
        value *= MULTIPLIERS[scaled.group(1).lower()]
        end = scaled.end()
    return value, unit_after(text, end), currency_before(text, start)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+|%", text.lower().replace("-", " ").replace(",", " "))


def has_value(found: Found, change: dict[str, object], side: str) -> bool:
    """Whether the response holds the change's `original` or `fictive` value (side)."""
    raw = str(change[side])
    kind = change["kind"]
    if kind == "name":
        return re.search(rf"\b{re.escape(raw)}\b", found.text, re.IGNORECASE) is not None
    if kind == "date":
        spans = [s for s in scan(raw) if s.kind == "date"]
        day = parse_date(spans[0]) if spans else None
        return day in found.dates
    value = parse_number(raw)
    unit, currency = change.get("unit"), change.get("currency")
    for number, said_unit, said_currency in found.numbers:
        if number == value and _same(unit, said_unit) and _same(currency, said_currency):
            return True
    return _in_words(found.words, value, unit)


def _same(expected: object, said: str | None) -> bool:
    """A unit must agree when the answer gives one; an answer without one still counts."""
    return expected is None or said is None or expected == said


def _in_words(words: list[str], value: Decimal, unit: object) -> bool:
    if value != value.to_integral_value() and abs(value) >= 1000:
        return False
    spoken = num2words(int(value) if value == value.to_integral_value() else value)
    target = [w for w in _words(spoken) if w != "and"]
    plain = [w for w in words if w != "and"]
    size = len(target)
    for i in range(len(plain) - size + 1):
        if plain[i : i + size] != target:
            continue
        before = plain[i - 1] if i else ""
        after = plain[i + size] if i + size < len(plain) else ""
        if before in _NUMBER_WORDS - {"a", "and"} or after in _NUMBER_WORDS - {"a", "and"}:
            continue
        if _same(unit, UNITS.get(after)):
            return True
    return False
