"""The rule for provided claim offsets: response[start:end] == text, and claims never overlap.

A wrong offset is repaired, with a warning, only where the repair is certain (the claim's
text occurs exactly once in the response); otherwise the row is rejected. Pure functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

import msgspec


class HasOffsets(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def start(self) -> int | None: ...
    @property
    def end(self) -> int | None: ...


C = TypeVar("C", bound=HasOffsets)


@dataclass(frozen=True)
class OffsetProblem(Exception):
    field: str
    message: str


def check_offsets(response: str, claims: Sequence[C]) -> tuple[list[C], list[tuple[str, str]]]:
    """Claims with offsets that hold (some repaired) and (field, warning) pairs for the repairs."""
    fixed: list[C] = []
    warnings: list[tuple[str, str]] = []
    for index, claim in enumerate(claims):
        checked = _checked(response, claim, f"claims[{index}]")
        if checked is not claim:
            warnings.append((f"claims[{index}]", _repaired(claim, checked)))
        fixed.append(checked)
    _check_overlaps(fixed)
    return fixed, warnings


def _checked(response: str, claim: C, name: str) -> C:
    if claim.start is None and claim.end is None:
        return claim
    if (
        claim.start is not None
        and claim.end is not None
        and response[claim.start : claim.end] == claim.text
        and claim.end <= len(response)
    ):
        return claim
    found = _only_place(response, claim.text)
    if found is None:
        raise OffsetProblem(name, _wrong(response, claim))
    moved = msgspec.structs.replace if isinstance(claim, msgspec.Struct) else replace
    return moved(claim, start=found, end=found + len(claim.text))  # type: ignore[type-var,return-value]


def _only_place(response: str, text: str) -> int | None:
    first = response.find(text) if text else -1
    if first < 0 or response.find(text, first + 1) >= 0:
        return None
    return first


def _wrong(response: str, claim: HasOffsets) -> str:
    if claim.start is None or claim.end is None:
        what = "has only one of start and end"
    elif claim.end > len(response):
        what = f"ends at {claim.end}, past the end of the response ({len(response)} characters)"
    else:
        what = f"[{claim.start}:{claim.end}] is {response[claim.start : claim.end][:60]!r}"
    count = response.count(claim.text) if claim.text else 0
    where = "is not in the response" if count == 0 else f"occurs {count} times in the response"
    return (
        f"{what}, not the claim's text {claim.text[:60]!r}, which {where}; "
        "give offsets with response[start:end] == text (or leave both out)"
    )


def _repaired(before: HasOffsets, after: HasOffsets) -> str:
    return (
        f"offsets {before.start}:{before.end} did not hold the claim's text; it occurs once "
        f"in the response, so they were set to {after.start}:{after.end}"
    )


def _check_overlaps(claims: Sequence[HasOffsets]) -> None:
    placed = sorted(
        (c.start, c.end, i)
        for i, c in enumerate(claims)
        if c.start is not None and c.end is not None
    )
    for (_, end_a, a), (start_b, end_b, b) in zip(placed, placed[1:], strict=False):
        if start_b < end_a:
            raise OffsetProblem(
                f"claims[{b}]",
                f"[{start_b}:{end_b}] overlaps claims[{a}], which ends at {end_a}; claims must "
                "not overlap: make them separate parts of the response, or leave the offsets out",
            )
