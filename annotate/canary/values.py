"""The patterns of values in text (numbers, dates, years, names) and the ones left alone.

One scanner serves both sides: the rules rewrite what it finds in a context, and the matcher
reads what it finds in a response. URLs, e-mail addresses, paths, ids and clock times are
found first so that no digit inside them is ever taken for a value. No store, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_MONTH_NAMES = "|".join(MONTHS + [m[:3] for m in MONTHS] + ["Sept"])
# First names a name must begin with to be swapped ("listed names"): common given names.
FIRST_NAMES = [
    "Adam",
    "Alice",
    "Amara",
    "Ana",
    "Anika",
    "Anna",
    "Ben",
    "Carlos",
    "Chen",
    "Chloe",
    "David",
    "Diego",
    "Elena",
    "Emma",
    "Fatima",
    "Grace",
    "Hannah",
    "Ingrid",
    "James",
    "Jane",
    "John",
    "Kenji",
    "Laura",
    "Leila",
    "Liam",
    "Lucas",
    "Maria",
    "Mateo",
    "Michael",
    "Noah",
    "Olivia",
    "Omar",
    "Paul",
    "Peter",
    "Priya",
    "Rafael",
    "Sarah",
    "Sofia",
    "Thomas",
    "Tomasz",
    "Yuki",
    "Zanele",
]
UNITS = {
    "%": "%", "percent": "%", "per cent": "%", "pct": "%",
    "ms": "ms", "s": "s", "sec": "s", "second": "s", "seconds": "s",
    "minute": "minute", "minutes": "minute", "min": "minute", "mins": "minute",
    "hour": "hour", "hours": "hour", "h": "hour", "hrs": "hour",
    "day": "day", "days": "day", "week": "week", "weeks": "week",
    "month": "month", "months": "month", "year": "year", "years": "year",
    "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb", "km": "km", "kg": "kg", "mg": "mg",
    "ml": "ml", "seat": "seat", "seats": "seat", "user": "user", "users": "user",
}  # fmt: skip
CURRENCIES = {
    "$": "$", "usd": "$", "dollar": "$", "dollars": "$",
    "£": "£", "gbp": "£", "pound": "£", "pounds": "£",
    "€": "€", "eur": "€", "euro": "€", "euros": "€",
}  # fmt: skip
MULTIPLIERS = {
    "k": 1000, "thousand": 1000, "m": 10**6, "mn": 10**6, "million": 10**6,
    "bn": 10**9, "billion": 10**9,
}  # fmt: skip

_PATTERN = re.compile(
    r"(?P<url>https?://\S+|www\.\S+)"
    r"|(?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?P<path>(?<![\w])/[\w{}.~/-]+)"
    r"|(?P<iso>\b(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})(?!\d))"
    rf"|(?P<dmy>\b(?P<dd>\d{{1,2}})\s+(?P<dm>{_MONTH_NAMES})\.?\s+(?P<dy>\d{{4}})\b)"
    rf"|(?P<mdy>\b(?P<mm>{_MONTH_NAMES})\.?\s+(?P<md>\d{{1,2}}),?\s+(?P<my>\d{{4}})\b)"
    r"|(?P<time>(?<![\w:])\d{1,2}:\d{2}(?::\d{2})?)"
    rf"|(?P<name>\b(?:{'|'.join(FIRST_NAMES)})\s+[A-Z][a-z]+(?:-[A-Z][a-z]+)?\b)"
    r"|(?P<ident>\b[A-Za-z][\w#/-]*\d[\w#/-]*)"
    r"|(?P<year>(?<![\w.:/,$£€-])(?:19|20)\d{2}(?!\w|,\d|\.\d))"
    r"|(?P<number>(?<![\w.:/])(?<![A-Za-z]-)(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\d|,\d{3}|\.\d))"
)
_AFTER = re.compile(r"\s?(%|per cent|[A-Za-z]+)")
_BEFORE_CURRENCY = re.compile(r"([$£€])\s?$|\b(USD|EUR|GBP)\s$", re.IGNORECASE)


@dataclass(frozen=True)
class Span:
    """One value found in a text: where it is, what kind, and how it was written."""

    kind: str  # number | year | date | name | url | email | path | time | ident
    start: int
    end: int
    text: str
    date_style: str | None = None  # iso | dmy | mdy, for dates

    @property
    def is_value(self) -> bool:
        return self.kind in ("number", "year", "date", "name")


def scan(text: str) -> list[Span]:
    """Every value and every protected token in the text, left to right."""
    spans = []
    for match in _PATTERN.finditer(text):
        kind = match.lastgroup or ""
        kind = (
            next(k for k in ("iso", "dmy", "mdy") if match.group(k))
            if kind in _DATE_PARTS
            else kind
        )
        style = kind if kind in ("iso", "dmy", "mdy") else None
        if kind == "year" and (
            unit_after(text, match.end()) or currency_before(text, match.start())
        ):
            kind = "number"  # 2000 users, $1999: amounts, not years
        spans.append(
            Span("date" if style else kind, match.start(), match.end(), match.group(), style)
        )
    return spans


_DATE_PARTS = {"iy", "im", "id", "dd", "dm", "dy", "mm", "md", "my", "iso", "dmy", "mdy"}


def parse_number(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def parse_date(span: Span) -> date | None:
    """The calendar date a date span names; None for an impossible one (31 February)."""
    groups = _PATTERN.fullmatch(span.text)
    if groups is None:
        return None
    try:
        if span.date_style == "iso":
            return date(int(groups["iy"]), int(groups["im"]), int(groups["id"]))
        if span.date_style == "dmy":
            return date(int(groups["dy"]), month_number(groups["dm"]), int(groups["dd"]))
        return date(int(groups["my"]), month_number(groups["mm"]), int(groups["md"]))
    except ValueError:
        return None


def month_number(name: str) -> int:
    return [m[:3].lower() for m in MONTHS].index(name[:3].lower()) + 1


def format_date(day: date, span: Span) -> str:
    """A date written in the style of the span it replaces (abbreviated month kept)."""
    if span.date_style == "iso":
        return day.isoformat()
    month = MONTHS[day.month - 1]
    if not any(m in span.text for m in MONTHS):
        month = month[:3]
    if span.date_style == "dmy":
        return f"{day.day} {month} {day.year}"
    comma = "," if "," in span.text else ""
    return f"{month} {day.day}{comma} {day.year}"


def unit_after(text: str, end: int) -> str | None:
    """The canonical unit written right after a number, if it is one we know."""
    match = _AFTER.match(text, end)
    if not match:
        return None
    word = match.group(1).lower()
    return UNITS.get(word) or CURRENCIES.get(word)


def currency_before(text: str, start: int) -> str | None:
    match = _BEFORE_CURRENCY.search(text[max(0, start - 4) : start])
    if not match:
        return None
    return CURRENCIES[(match.group(1) or match.group(2)).lower()]
