"""Slot values of the sample data: drawing them from specs, writing them per locale, altering one.

Every draw takes the caller's random.Random, so annotate.demo.generator stays deterministic; no
global random, no clock. Knows nothing about traces, claims or judges.
"""

from __future__ import annotations

import random
import string
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from annotate.demo.content import DRUGS, FIRST_NAMES, LAST_NAMES, POOLS, SlotSpec

# What kind of error a changed value makes; kinds missing here ("fixed") are never changed.
ERROR_OF_KIND = {
    "money": "number",
    "count": "number",
    "pct": "number",
    "dur": "temporal",
    "date": "temporal",
    "isodate": "temporal",
    "person": "entity",
    "pick": "entity",
}
CURRENCY = {"en-US": "$", "en-GB": "£", "de-DE": "€", "en-IE": "€"}
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
DATE_SHIFTS = (-14, -7, -3, -2, -1, 1, 2, 3, 7, 14, 30)
SCALES = (0.5, 0.75, 1.5, 2.0)
SMALL_SHIFTS = (-3, -2, -1, 1, 2, 3, 4)


@dataclass(frozen=True)
class Slot:
    kind: str
    value: Any
    pool: str = ""
    steps: tuple[Any, ...] = ()


Slots = Mapping[str, Slot]


def draw_slots(rng: random.Random, specs: Mapping[str, SlotSpec], day: date) -> dict[str, Slot]:
    """One value per spec, in spec order; people and pool picks are distinct within the draw."""
    slots: dict[str, Slot] = {}
    for name, spec in specs.items():
        if spec[0] == "drug":
            slots.update(_drug_slots(rng.choice(DRUGS)))
        else:
            slots[name] = _draw_slot(rng, spec, day, slots)
    return slots


def _draw_slot(rng: random.Random, spec: SlotSpec, day: date, taken: Slots) -> Slot:
    kind = spec[0]
    if kind == "money":
        return Slot("money", rng.randint(spec[1] * 100, spec[2] * 100) / 100)
    if kind == "money0":
        return Slot("money", rng.randint(spec[1], spec[2]))
    if kind in ("count", "pct", "dur"):
        return Slot(kind, rng.randint(spec[1], spec[2]))
    if kind == "step":
        return Slot(spec[2] if len(spec) > 2 else "count", rng.choice(spec[1]), steps=spec[1])
    if kind in ("date", "isodate"):
        return Slot(kind, day + timedelta(days=rng.randint(spec[1], spec[2])))
    if kind == "id":
        return Slot("fixed", rng.randint(spec[1], spec[2]))
    if kind == "among":
        return Slot("fixed", rng.choice(POOLS[spec[1]]))
    if kind == "person":
        return Slot("person", _new_person(rng, taken))
    return Slot("pick", _new_pick(rng, spec[1], taken), pool=spec[1])


def _drug_slots(row: tuple[Any, ...]) -> dict[str, Slot]:
    name, dose, interval, max_daily, avoid = row
    return {
        "drug": Slot("pick", name, pool="drug"),
        "dose": Slot("count", dose),
        "interval": Slot("dur", interval),
        "max_daily": Slot("count", max_daily),
        "avoid": Slot("fixed", avoid),
    }


def _taken_values(taken: Slots) -> list[Any]:
    return [slot.value for slot in taken.values()]


def _new_person(rng: random.Random, taken: Slots) -> str:
    used = _taken_values(taken)
    while True:
        name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        if name not in used:
            return name


def _new_pick(rng: random.Random, pool: str, taken: Slots) -> str:
    used = _taken_values(taken)
    return rng.choice([value for value in POOLS[pool] if value not in used])


def format_slots(slots: Slots, locale: str) -> dict[str, str]:
    return {name: format_slot(slot, locale) for name, slot in slots.items()}


def format_slot(slot: Slot, locale: str) -> str:
    """The value as the text of a document or response in this locale would write it."""
    value = slot.value
    if slot.kind == "money":
        amount = f"{value:,.2f}" if isinstance(value, float) else f"{value:,}"
        return f"{CURRENCY.get(locale, '$')}{amount}"
    if slot.kind == "pct":
        return f"{value}%"
    if slot.kind == "count":
        return f"{value:,}"
    if slot.kind == "date":
        month = MONTHS[value.month - 1]
        return (
            f"{month} {value.day}, {value.year}"
            if locale == "en-US"
            else f"{value.day} {month} {value.year}"
        )
    if slot.kind == "isodate":
        return value.isoformat()
    return str(value)


def fields_of(template: str) -> list[str]:
    """Slot names a template uses, in order of first use."""
    names = [name for _, name, _, _ in string.Formatter().parse(template) if name]
    return list(dict.fromkeys(names))


def is_alterable(slot: Slot) -> bool:
    return slot.kind in ERROR_OF_KIND


def alter_slot(rng: random.Random, slot: Slot, taken: Slots) -> Slot:
    """A different value of the same kind: the wrong number, date, name or pick."""
    if slot.kind in ("date", "isodate"):
        return replace(slot, value=slot.value + timedelta(days=rng.choice(DATE_SHIFTS)))
    if slot.kind == "person":
        return replace(slot, value=_new_person(rng, taken))
    if slot.kind == "pick":
        return replace(slot, value=_new_pick(rng, slot.pool, taken))
    if slot.steps:
        return replace(slot, value=rng.choice([v for v in slot.steps if v != slot.value]))
    return replace(slot, value=_other_number(rng, slot.value))


def _other_number(rng: random.Random, value: int | float) -> int | float:
    while True:
        if isinstance(value, float):
            other: int | float = round(value * rng.choice(SCALES), 2)
        elif value >= 20:
            unit = 10 ** max(0, len(str(value)) - 2)
            other = max(unit, round(value * rng.choice(SCALES) / unit) * unit)
        else:
            other = max(1, value + rng.choice(SMALL_SHIFTS))
        if other != value:
            return other
