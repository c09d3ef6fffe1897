"""A judge verdict's fields checked apart from parse.py: the claims it refers to against the
row's, and `ratings` (of a verdict or of the row itself): {"relevance": 4, ...}, each
criterion's score a finite number (the scale is the rubric's, not checked here). Pure: no I/O.
Errors are parse.py's own (field, message), so the row's report names `ratings.relevance`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotate.errors import counted
from annotate.traces.limits import check_finite, check_name
from annotate.traces.rows import Claim, FieldInvalid, JudgeVerdict, describe_type

Ratings = tuple[tuple[str, float], ...]


def _invalid(field: str, message: str) -> Exception:
    return FieldInvalid(field, message)


def _checked(field: str, check: Any, value: Any) -> Any:
    try:
        return check(value)
    except ValueError as exc:
        raise _invalid(field, str(exc)) from None


def parse_ratings(value: Any, name: str) -> Ratings:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise _invalid(
            name,
            'must be an object of criterion: score, such as {"relevance": 4}, got '
            + describe_type(value),
        )
    found = []
    for criterion, score in value.items():
        where = f"{name}.{str(criterion)[:60]}"
        _checked(where, check_name, str(criterion))
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise _invalid(
                where,
                f"must be a number (the score on the criterion's scale), got {describe_type(score)}",
            )
        found.append((str(criterion), _checked(where, check_finite, score)))
    return tuple(found)


def rated_label(item: Mapping[str, Any], name: str) -> tuple[Ratings, Any]:
    """A verdict's ratings and its label: "" for a verdict that only rates (a G-Eval judge:
    no label); ratings rate the whole response, so they need level response."""
    ratings = parse_ratings(item.get("ratings"), f"{name}.ratings")
    level = item.get("level") or ("claim" if item.get("claim") is not None else "response")
    if ratings and level != "response":
        raise _invalid(f"{name}.ratings", "rates the whole response: give it level response")
    label = item.get("label")
    return ratings, "" if ratings and label is None else label


def trace_ratings(value: Any) -> tuple[JudgeVerdict, ...]:
    """A row's own `ratings`: the response's scores by the judge named imported."""
    ratings = parse_ratings(value, "ratings")
    return (JudgeVerdict("imported", "response", "", ratings=ratings),) if ratings else ()


def check_claim_references(claims: tuple[Claim, ...], judge: tuple[JudgeVerdict, ...]) -> None:
    for index, verdict in enumerate(judge):
        if verdict.claim is not None and not claims:  # paired later with claims it never saw
            raise _invalid(
                f"judge[{index}].claim",
                f"refers to claim {verdict.claim} but the row has no claims; add the claims "
                "the judge scored (claims: [...]), or drop `claim` to make it response-level",
            )
        if verdict.claim is not None and verdict.claim >= len(claims):
            raise _invalid(
                f"judge[{index}].claim",
                f"refers to claim {verdict.claim} but the row has {counted(len(claims), 'claim')} (0-based)",
            )
