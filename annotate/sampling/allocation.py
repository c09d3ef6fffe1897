"""Sample specs and allocation: how many traces each stratum gets. Pure arithmetic, no SQL.

Allocation (proportional, equal, Neyman, explicit) respects a minimum per stratum
and the stratum's size, and its rounding keeps the total exactly n (largest
remainder, ties to the earlier stratum). The seeded draw itself is in
annotate.store.samples: traces are taken in order of sha256("<seed>:<trace_id>").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from annotate.errors import UsageError, counted
from annotate.store.samples import STRATUM_COLUMNS, Filters

ALLOCATIONS = ("proportional", "equal", "neyman", "explicit")
DEFAULT_BY = ("feature", "risk_category")
HASH_RULE = "sha256(seed || ':' || trace_id), hex, ascending; ties by trace_id"
NO_VALUE = "(none)"
# Judge labels that mean "nothing wrong"; any other verdict label counts as flagged.


class SampleError(UsageError):
    """A sample that cannot be planned or drawn as asked; the message says what to change."""


@dataclass(frozen=True)
class SampleSpec:
    name: str
    n: int | None
    by: tuple[str, ...] = DEFAULT_BY
    allocation: str = "proportional"
    min_per_stratum: int = 1
    seed: int = 0
    filters: Filters = field(default_factory=Filters)
    sizes: Mapping[tuple[str | None, ...], int] = field(default_factory=dict)


@dataclass(frozen=True)
class StratumPlan:
    values: tuple[str | None, ...]
    population: int
    sample: int
    judge_rate: float | None

    @property
    def inclusion_probability(self) -> float:
        return self.sample / self.population

    def as_json(self, by: Sequence[str]) -> dict[str, Any]:
        return {
            "stratum": dict(zip(by, self.values, strict=True)),
            "population": self.population,
            "sample": self.sample,
            "inclusion_probability": self.inclusion_probability,
        }


def parse_where(clauses: Sequence[str]) -> Filters:
    """`feature=billing_qa,hr_policy`, `since=2026-03-01`, `judge=unsupported`, `chunking=1000-200`."""
    columns: dict[str, tuple[str, ...]] = {}
    attributes: dict[str, tuple[str, ...]] = {}
    since = until = None
    judge: tuple[str, ...] = ()
    for clause in clauses:
        key, sep, raw = clause.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key or not raw:
            raise SampleError(
                f"--where {clause!r} must look like NAME=VALUE[,VALUE...], e.g. feature=billing_qa"
            )
        values = tuple(v.strip() for v in raw.split(",") if v.strip())
        if key in ("since", "until"):
            moment = _parse_moment(key, raw)
            since, until = (moment, until) if key == "since" else (since, moment)
        elif key == "judge":
            judge = values
        elif key in STRATUM_COLUMNS:
            columns[key] = values
        else:
            attributes[key.removeprefix("attr.")] = values
    return Filters(since, until, columns, attributes, judge)


def _parse_moment(key: str, raw: str) -> datetime:
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise SampleError(f"--where {key}={raw!r} must be an ISO date such as 2026-03-01") from None
    # Trace times are stored as naive UTC (traces/limits.py); an offset given here is converted
    # to UTC, never to the machine's local zone.
    return (
        moment.replace(tzinfo=None)
        if moment.tzinfo is None
        else moment.astimezone(UTC).replace(tzinfo=None)
    )


def neyman_weight(population: int, judge_rate: float | None) -> float:
    """N_h * S_h with S_h = sqrt(p(1-p)) from the judge's rate; 0.5 where there is no verdict."""
    spread = 0.5 if judge_rate is None else math.sqrt(judge_rate * (1 - judge_rate))
    return population * spread


def allocation_weights(
    allocation: str, populations: Sequence[int], rates: Sequence[float | None]
) -> list[float]:
    if allocation == "proportional":
        return [float(p) for p in populations]
    if allocation == "equal":
        return [1.0 for _ in populations]
    if allocation == "neyman":
        return [neyman_weight(p, r) for p, r in zip(populations, rates, strict=True)]
    raise SampleError(f"unknown allocation {allocation!r}; use one of: {', '.join(ALLOCATIONS)}")


def allocate(
    n: int,
    populations: Sequence[int],
    weights: Sequence[float],
    minimum: int = 1,
    floor: Sequence[int] | None = None,
) -> list[int]:
    """Integer sizes summing to n, each within [max(minimum, floor_h), N_h], near n * w_h / sum w."""
    floors = floor or [0] * len(populations)
    lower = [min(max(minimum, 1, floors[h]), size) for h, size in enumerate(populations)]
    _check_total(n, populations, lower)
    shares = bounded_shares(n, populations, weights, lower)
    sizes = [
        min(max(math.floor(share + 1e-9), lower[h]), populations[h])
        for h, share in enumerate(shares)
    ]
    by_remainder = sorted(range(len(shares)), key=lambda h: (-(shares[h] - sizes[h]), h))
    while sum(sizes) < n:
        h = next(h for h in by_remainder if sizes[h] < populations[h])
        sizes[h] += 1
        by_remainder.remove(h)
        by_remainder.append(h)
    while sum(sizes) > n:  # only from floating error in the shares
        h = next(h for h in reversed(by_remainder) if sizes[h] > lower[h])
        sizes[h] -= 1
    return sizes


def _check_total(n: int, populations: Sequence[int], lower: Sequence[int]) -> None:
    if n > sum(populations):
        raise SampleError(
            f"n={n} is larger than the frame ({sum(populations)} judgeable traces match); "
            "lower --n or widen the filters"
        )
    if sum(lower) > n:
        raise SampleError(
            f"n={n} cannot give each of the {len(populations)} strata its minimum "
            f"({sum(lower)} traces in all); raise n to {sum(lower)}, lower the minimum, "
            "or stratify by fewer columns"
        )


def bounded_shares(
    n: int, populations: Sequence[int], weights: Sequence[float], lower: Sequence[int]
) -> list[float]:
    """x_h = clip(lambda * w_h, lower_h, N_h) with lambda found so that the x_h sum to n.

    Strata with zero weight (Neyman with a judge rate of 0 or 1) stay at their
    minimum unless the weighted strata are all full; then they share the rest in
    proportion to their size.
    """
    top = max(weights, default=0.0)
    # relative weights; a weight under 1e-12 of the largest counts as zero (and no subnormals)
    weights = [w / top if top > 0 and w / top > 1e-12 else 0.0 for w in weights]
    weighted = [h for h, w in enumerate(weights) if w > 0]
    most = sum(populations[h] for h in weighted) + sum(
        lower[h] for h in range(len(weights)) if weights[h] <= 0
    )
    if most >= n and weighted:
        return _solve_lambda(n, populations, weights, lower)
    rest = [h for h in range(len(weights)) if weights[h] <= 0]
    target = n - sum(populations[h] for h in weighted)
    sub = _solve_lambda(
        target,
        [populations[h] for h in rest],
        [float(populations[h]) for h in rest],
        [lower[h] for h in rest],
    )
    shares = [float(populations[h]) for h in range(len(weights))]
    for h, share in zip(rest, sub, strict=True):
        shares[h] = share
    return shares


def _solve_lambda(
    n: int, upper: Sequence[int], weights: Sequence[float], lower: Sequence[int]
) -> list[float]:
    """Exact: sum_h clip(lambda * w_h, l_h, u_h) is piecewise linear in lambda between breakpoints."""
    top = max(weights, default=0.0)
    scaled = [w / top if top > 0 else 0.0 for w in weights]  # also tames subnormal weights

    def shares(scale: float) -> list[float]:
        return [min(max(scale * w, lo), up) for w, lo, up in zip(scaled, lower, upper, strict=True)]

    points = sorted(
        {b / w for w, lo, up in zip(scaled, lower, upper, strict=True) if w > 0 for b in (lo, up)}
    )
    previous = 0.0
    for point in points:
        if sum(shares(point)) >= n:
            base = sum(shares(previous))
            # strata between their bounds on the whole interval: test them at its middle, not at
            # `previous` (= lo / w for some stratum, where lo / w * w < lo loses it to rounding)
            middle = (previous + point) / 2
            slope = sum(
                w
                for w, lo, up in zip(scaled, lower, upper, strict=True)
                if w > 0 and lo <= middle * w <= up
            )
            return shares(previous + (n - base) / slope if slope > 0 else point)
        previous = point
    return shares(previous)


def explicit_sizes(
    keys: Sequence[tuple[str | None, ...]],
    populations: Sequence[int],
    sizes: Mapping[tuple[str | None, ...], int],
) -> list[int]:
    """Per-stratum sizes given by the lead; every stratum must be named and fit."""
    unknown = [k for k in sizes if k not in set(keys)]
    if unknown:
        raise SampleError(
            f"no stratum {_label(unknown[0])} in the frame; strata are: {', '.join(_label(k) for k in keys)}"
        )
    missing = [k for k in keys if k not in sizes]
    if missing:
        raise SampleError(
            f"give a size for every stratum (0 leaves one out); missing: {', '.join(_label(k) for k in missing)}"
        )
    result = [int(sizes[k]) for k in keys]
    for key, size, population in zip(keys, result, populations, strict=True):
        if not 0 <= size <= population:
            raise SampleError(
                f"stratum {_label(key)} has {counted(population, 'trace')}; its size must be "
                f"0..{population}, got {size}"
            )
    return result


def _label(key: Sequence[str | None]) -> str:
    return "|".join(NO_VALUE if v is None else v for v in key)


def parse_sizes(text: Mapping[str, int]) -> dict[tuple[str | None, ...], int]:
    """{"billing_qa|financial": 20} -> {("billing_qa", "financial"): 20}; "(none)" is a missing value."""
    return {
        tuple(None if part == NO_VALUE else part for part in key.split("|")): int(size)
        for key, size in text.items()
    }
