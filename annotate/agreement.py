"""Inter-rater statistics on a units x raters table of nominal labels (None = not rated).

Pure functions: no store, no streamlit. An undefined statistic (one category only, too
few units) is returned as Stat(value=None, reason=...), never as a crash or a number.
Intervals: Wilson for a proportion; a seeded bootstrap over groups of units (the claims
of one trace move together) for everything else.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

Label = Hashable | None
Table = Sequence[Sequence[Label]]  # one row per unit, one column per rater


@dataclass(frozen=True)
class Stat:
    value: float | None
    units: int
    low: float | None = None
    high: float | None = None
    reason: str | None = None
    method: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "units": self.units,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.method:
            out["method"] = self.method
        return out


def _rated(row: Sequence[Label]) -> list[Hashable]:
    return [label for label in row if label is not None]


def _pairable(table: Table) -> list[list[Hashable]]:
    return [rated for rated in (_rated(row) for row in table) if len(rated) >= 2]


def percent_agreement(table: Table) -> Stat:
    """Share of agreeing rater pairs within units, averaged over units with 2+ ratings."""
    units = _pairable(table)
    if not units:
        return Stat(None, 0, reason="no unit has two ratings")
    shares = []
    for rated in units:
        counts = Counter(rated)
        m = len(rated)
        shares.append(sum(c * (c - 1) for c in counts.values()) / (m * (m - 1)))
    return Stat(sum(shares) / len(shares), len(units))


def cohen_kappa(a: Sequence[Label], b: Sequence[Label]) -> Stat:
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if not pairs:
        return Stat(None, 0, reason="the two raters share no units")
    n = len(pairs)
    observed = sum(x == y for x, y in pairs) / n
    left, right = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    expected = sum(left[c] * right[c] for c in set(left) | set(right)) / (n * n)
    if expected == 1:
        return Stat(None, n, reason="only one category was used: kappa is undefined")
    return Stat((observed - expected) / (1 - expected), n)


def fleiss_kappa(table: Table) -> Stat:
    """Fleiss (1971) on the units rated by the modal number of raters."""
    units = [_rated(row) for row in table if _rated(row)]
    if not units:
        return Stat(None, 0, reason="no ratings")
    modal = Counter(len(u) for u in units).most_common(1)[0][0]
    units = [u for u in units if len(u) == modal]
    if modal < 2:
        return Stat(None, len(units), reason="fewer than two ratings per unit")
    categories = sorted({label for u in units for label in u}, key=repr)
    counts = [[Counter(u)[c] for c in categories] for u in units]
    n, m = len(units), modal
    p_bar = sum(sum(x * (x - 1) for x in row) / (m * (m - 1)) for row in counts) / n
    shares = [sum(row[j] for row in counts) / (n * m) for j in range(len(categories))]
    p_e = sum(p * p for p in shares)
    if p_e == 1:
        return Stat(None, n, reason="only one category was used: kappa is undefined")
    return Stat((p_bar - p_e) / (1 - p_e), n, method=f"units with {m} ratings")


def krippendorff_alpha(table: Table) -> Stat:
    """Nominal alpha via the `krippendorff` package; missing ratings allowed."""
    import krippendorff
    import numpy as np

    units = _pairable(table)
    categories = sorted({label for row in table for label in _rated(row)}, key=repr)
    if len(categories) < 2:
        return Stat(None, len(units), reason="only one category was used: alpha is undefined")
    code = {c: i for i, c in enumerate(categories)}
    data = np.array(
        [[np.nan if label is None else code[label] for label in row] for row in table], dtype=float
    ).T  # raters x units
    value = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    return Stat(float(value), len(units))


def gwet_ac1(table: Table) -> Stat:
    """Gwet's AC1 for several raters and missing ratings (Gwet, Handbook of Inter-Rater Reliability)."""
    units = _pairable(table)
    categories = sorted({label for row in table for label in _rated(row)}, key=repr)
    if not units:
        return Stat(None, 0, reason="no unit has two ratings")
    if len(categories) < 2:
        return Stat(None, len(units), reason="only one category was used: AC1 is undefined")
    observed = percent_agreement(table).value or 0.0
    rated_units = [_rated(row) for row in table if _rated(row)]
    q = len(categories)
    pi = [sum(Counter(u)[c] / len(u) for u in rated_units) / len(rated_units) for c in categories]
    expected = sum(p * (1 - p) for p in pi) / (q - 1)
    return Stat((observed - expected) / (1 - expected), len(units))


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for a proportion (Wilson 1927; Newcombe 1998, method 3)."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def bootstrap(
    statistic: Callable[[Table], Stat],
    table: Table,
    groups: Sequence[Hashable],
    repetitions: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Stat:
    """Percentile interval resampling groups of units (e.g. the claims of one trace) together."""
    point = statistic(table)
    if point.value is None:
        return point
    members: dict[Hashable, list[int]] = {}
    for index, group in enumerate(groups):
        members.setdefault(group, []).append(index)
    keys = list(members)
    rng = random.Random(seed)
    values = []
    for _ in range(repetitions):
        chosen = [i for key in rng.choices(keys, k=len(keys)) for i in members[key]]
        value = statistic([table[i] for i in chosen]).value
        if value is not None:
            values.append(value)
    if len(values) < repetitions // 2:
        return Stat(
            point.value,
            point.units,
            reason="too few resamples defined the statistic for an interval",
        )
    values.sort()
    tail = (1 - level) / 2
    low = values[int(tail * (len(values) - 1))]
    high = values[int((1 - tail) * (len(values) - 1))]
    method = f"bootstrap over {len(keys)} groups, {repetitions} resamples, seed {seed}"
    return Stat(point.value, point.units, low, high, method=method)
