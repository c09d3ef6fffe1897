"""The offline baseline judge: deterministic, no key, clearly a baseline, not a model.

A claim is unsupported when one of its numbers, dates or capitalised names does not occur
in the context; otherwise supported. It lets the loop run and be compared without a key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from annotate.judge.rubrics.prompt import Verdict, context_text
from annotate.judge.rubrics.spec import Rubric

_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
]
_NAME = re.compile(r"\b[A-Z][\w&'-]*[A-Za-z0-9]\b")
_COMMON = frozenset(
    [
        "The",
        "A",
        "An",
        "This",
        "That",
        "These",
        "Those",
        "It",
        "Its",
        "I",
        "We",
        "You",
        "They",
        "He",
        "She",
        "Yes",
        "No",
        "If",
        "In",
        "On",
        "At",
        "For",
        "To",
        "Of",
        "And",
        "Or",
        "But",
        "Your",
        "Our",
        "Their",
        "My",
        "Please",
        "Note",
        "Also",
        "Then",
        "So",
        "As",
        "By",
        "With",
        "From",
        "When",
        "Each",
        "Every",
        "All",
        "Any",
        "There",
        "Here",
        "Most",
        "Some",
    ]
)


def _numbers(text: str) -> set[str]:
    return {m.group().rstrip(".,").replace(",", "") for m in _NUMBER.finditer(text)}


def _names(text: str) -> set[str]:
    found = set()
    for match in _NAME.finditer(text):
        word = match.group()
        if word in _COMMON:
            continue
        found.add(word)
    return found


def missing_facts(claim: str, context: str) -> list[tuple[str, str]]:
    """(kind, text) of each number, date word or capitalised name not in the context."""
    plain_context = context.replace(",", "")
    lowered = context.lower()
    missing = [("number", n) for n in sorted(_numbers(claim)) if n not in plain_context]
    for name in sorted(_names(claim)):
        kind = "temporal" if name.lower() in _MONTHS else "entity"
        if name not in context and name.lower() not in lowered:
            missing.append((kind, name))
    return missing


def _labels(rubric: Rubric) -> tuple[str, str]:
    if rubric.granularity == "question":
        return "yes", "no"
    binary = rubric.binary()
    supported = next(label for label, b in binary.items() if b == "supported")
    unsupported = (
        "not_in_context"
        if binary.get("not_in_context") == "unsupported"
        else next(label for label, b in binary.items() if b == "unsupported")
    )
    return supported, unsupported


def baseline_verdict(rubric: Rubric, material: Mapping[str, Any], claim: str) -> Verdict:
    context = context_text(material)
    supported, unsupported = _labels(rubric)
    missing = missing_facts(claim, context)
    if not missing:
        return Verdict(
            supported, None, "baseline: every number, date and name is in the context", ""
        )
    kind, text = missing[0]
    found = {"number": "number", "temporal": "temporal"}.get(kind, "entity")
    error = found if found in rubric.error_types else None
    listed = ", ".join(t for _, t in missing)
    return Verdict(unsupported, error, f"baseline: not in the context: {listed}", "")
