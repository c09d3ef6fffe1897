"""Rating tables: reviewers' labels as units x reviewers, in one order for every statistic.

Shared by agreement (reliability) and calibration (the judge as one more rater).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import countOf
from typing import Any

Labels = Mapping[str, Mapping[Any, Any]]  # reviewer -> unit -> label


def trace_of(unit: Any) -> str:
    return unit[0] if isinstance(unit, tuple) else unit


def rating_table(
    labels: Labels, min_ratings: int = 1, rank: Mapping[Any, int] | None = None
) -> tuple[list[Any], list[str], list[list]]:
    """Units rated by at least `min_ratings` reviewers x reviewers (None = not rated).

    Statistics take every rated unit (min_ratings=1): single ratings count towards category
    shares, as in the library; only units with 2+ ratings carry agreement. Units are in the
    order of their repr; `rank` (unit -> position in a larger table, see `ranks`) gives that
    order without computing every repr again."""
    reviewers = sorted(labels)
    found = {u for given in labels.values() for u in given}
    in_rank = rank is not None and all(map(rank.__contains__, found))
    units = sorted(found, key=rank.__getitem__ if rank is not None and in_rank else repr)
    columns = [[labels[r].get(u) for u in units] for r in reviewers]
    table = [list(row) for row in zip(*columns, strict=True)] if columns else [[] for _ in units]
    if min_ratings <= 1 and all(len(columns) - row.count(None) for row in table):
        return units, reviewers, table
    kept = [i for i, row in enumerate(table) if len(row) - row.count(None) >= min_ratings]
    return [units[i] for i in kept], reviewers, [table[i] for i in kept]


def ranks(units: Sequence[Any]) -> dict[Any, int]:
    """unit -> its position among `units` as rating_table ordered them (by repr)."""
    return {unit: position for position, unit in enumerate(units)}


def paired_units(table: Sequence[Sequence[Any]]) -> int:
    """Units with two or more ratings."""
    return sum(len(row) - countOf(row, None) >= 2 for row in table)
