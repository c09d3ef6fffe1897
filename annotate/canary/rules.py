"""The rules that turn a context's facts into fictive ones: halve, scale:F, shift:D for numbers,
a seeded shift for dates and years, and (optionally) fictive names for listed first names.

Only values change: units, currency signs, ids, URLs, paths, e-mail addresses and clock times
are left as they were. Pure: text in, text and the map of changes out.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from annotate.canary.values import (
    Span,
    currency_before,
    format_date,
    parse_date,
    parse_number,
    scan,
    unit_after,
)
from annotate.errors import UsageError

FICTIVE_FIRST = [
    "Orlen",
    "Tavia",
    "Quillon",
    "Brisa",
    "Maelor",
    "Zephyne",
    "Castor",
    "Ilvy",
    "Doran",
    "Senna",
    "Varro",
    "Ysolde",
]
FICTIVE_LAST = [
    "Vantrigg",
    "Oskerby",
    "Pellowan",
    "Draycott",
    "Quennel",
    "Marrowby",
    "Tillinghast",
    "Evenwood",
]


@dataclass(frozen=True)
class Rule:
    """How numbers change: halve, scale by a factor, or shift by an amount."""

    kind: str  # halve | scale | shift
    amount: Decimal

    def __str__(self) -> str:
        return "halve" if self.kind == "halve" else f"{self.kind}:{self.amount}"

    def apply(self, value: Decimal) -> Decimal:
        if self.kind == "shift":
            return value + self.amount
        return value * self.amount


def parse_rule(text: str) -> Rule:
    """`halve`, `scale:F` (F not 1) or `shift:D` (D not 0)."""
    kind, _, raw = text.strip().partition(":")
    if kind == "halve" and not raw:
        return Rule("halve", Decimal("0.5"))
    try:
        amount = Decimal(raw)
    except InvalidOperation:
        amount = Decimal("NaN")
    # Bounded so that a changed number can still be written with the digits it had.
    if (
        kind == "scale"
        and amount.is_finite()
        and amount not in (0, 1)
        and 1e-3 <= abs(amount) <= 1e3
    ):
        return Rule("scale", amount)
    if kind == "shift" and amount.is_finite() and amount != 0 and abs(amount) <= 1e9:
        return Rule("shift", amount)
    raise UsageError(
        f"--rule {text!r} is not a rule: use halve, scale:F (a factor other than 0 and 1, of "
        "0.001 to 1000 in size, for example scale:1.5) or shift:D (an amount other than 0, "
        "at most 1,000,000,000 in size, for example shift:7)"
    )


@dataclass(frozen=True)
class Change:
    """One value replaced: where (context item, offsets in the fictive text) and how."""

    kind: str  # number | year | date | name
    original: str
    fictive: str
    position: int
    start: int
    end: int
    unit: str | None = None
    currency: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "original": self.original,
            "fictive": self.fictive,
            "unit": self.unit,
            "currency": self.currency,
            "context": self.position,
        }


@dataclass
class Rewriter:
    """Rewrites the texts of one trace; the same original always gets the same fictive value."""

    rule: Rule
    days: int  # the date shift, seeded per suite
    rng: random.Random
    swap_names: bool = False

    def __post_init__(self) -> None:
        self.names: dict[str, str] = {}

    def rewrite(self, text: str, position: int) -> tuple[str, list[Change]]:
        out, changes, cursor = [], [], 0
        for span in scan(text):
            fictive = self._fictive(span) if span.is_value else None
            if fictive is None or fictive == span.text:
                continue
            out.append(text[cursor : span.start])
            start = sum(len(part) for part in out)
            out.append(fictive)
            unit = unit_after(text, span.end) if span.kind == "number" else None
            currency = currency_before(text, span.start) if span.kind == "number" else None
            changes.append(
                Change(
                    span.kind,
                    span.text,
                    fictive,
                    position,
                    start,
                    start + len(fictive),
                    unit,
                    currency,
                )
            )
            cursor = span.end
        out.append(text[cursor:])
        return "".join(out), changes

    def _fictive(self, span: Span) -> str | None:
        if span.kind == "number":
            return format_number(self.rule.apply(parse_number(span.text)), span.text)
        if span.kind == "year":
            return str(int(span.text) + self.years)
        if span.kind == "date":
            day = parse_date(span)
            return format_date(day + timedelta(days=self.days), span) if day else None
        if span.kind == "name" and self.swap_names:
            return self._name(span.text)
        return None

    @property
    def years(self) -> int:
        step = round(self.days / 365) or 1
        return step if self.days > 0 else -abs(step)

    def _name(self, original: str) -> str:
        if original not in self.names:
            taken = set(self.names.values())
            free = [
                f"{first} {last}"
                for first in FICTIVE_FIRST
                for last in FICTIVE_LAST
                if f"{first} {last}" not in taken
            ]
            self.names[original] = self.rng.choice(free)
        return self.names[original]


def format_number(value: Decimal, original: str) -> str:
    """The new value written like the old one: its decimals (when that still changes it) and
    its thousands separators; an integer's half keeps the decimals it needs (13 -> 6.5)."""
    decimals = len(original.split(".")[1]) if "." in original else 0
    old = parse_number(original)
    rounded = value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    if rounded == old or (decimals == 0 and rounded != value):
        rounded = value.normalize()
    text = f"{rounded:,f}" if "," in original else f"{rounded:f}"
    return text
