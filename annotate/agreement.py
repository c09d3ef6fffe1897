"""Inter-rater statistics on a units x raters table of nominal labels (None = not rated).

Pure functions: no store, no streamlit. An undefined statistic (one category only, too
few units) is returned as Stat(value=None, reason=...), never as a crash or a number.

Every statistic here is a function of per-unit sums, so a bootstrap that resamples groups
of units (the claims of one trace move together) needs one matrix product: resample
weights (repetitions x groups) @ per-group sums (groups x features). 1,000 resamples of
10,000 claims take well under a second. Intervals: Wilson for a proportion; the seeded
percentile bootstrap over groups for everything else.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Label = Hashable | None
Table = Sequence[Sequence[Label]]  # one row per unit, one column per rater
Z95 = 1.959963984540054


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


def _categories(table: Table) -> list[Hashable]:
    return sorted({label for row in table for label in _rated(row)}, key=repr)


def _counts(table: Table, categories: Sequence[Hashable]) -> np.ndarray:
    """units x categories: how many raters gave each category to each unit."""
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros((len(table), len(categories)))
    for u, row in enumerate(table):
        for label in _rated(row):
            counts[u, index[label]] += 1
    return counts


def _pair_agreement(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per unit: has 2+ ratings, and the share of agreeing rater pairs (0 where undefined)."""
    m = counts.sum(axis=1)
    pairable = m >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(pairable, (counts * (counts - 1)).sum(axis=1) / (m * (m - 1)), 0.0)
    return pairable.astype(float), share


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _chance_corrected(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected < 1 - 1e-12, (observed - expected) / (1 - expected), np.nan)


@dataclass(frozen=True)
class Measure:
    """A statistic as per-unit features whose column sums determine it."""

    features: np.ndarray  # units x F
    value: Callable[[np.ndarray], np.ndarray]  # sums (..., F) -> (...), NaN where undefined
    units: int
    reason: str | None = None  # why it is undefined on the whole table, if it is
    method: str | None = None

    def point(self) -> Stat:
        if self.reason:
            return Stat(None, self.units, reason=self.reason)
        value = float(self.value(self.features.sum(axis=0)))
        if math.isnan(value):
            return Stat(None, self.units, reason="undefined on these ratings")
        return Stat(value, self.units, method=self.method)


def _one_category(name: str) -> str:
    return f"only one category was used: {name} is undefined"


def _undefined(units: int, categories: int, name: str, no_units: str) -> str | None:
    """Why a chance-corrected statistic is undefined on the whole table, if it is."""
    if not units:
        return no_units
    return _one_category(name) if categories < 2 else None


def percent_agreement_measure(table: Table) -> Measure:
    counts = _counts(table, _categories(table))
    pairable, share = _pair_agreement(counts)
    units = int(pairable.sum())
    features = np.column_stack([pairable, share])
    reason = None if units else "no unit has two ratings"
    return Measure(features, lambda s: ratio(s[..., 1], s[..., 0]), units, reason)


def fleiss_measure(table: Table) -> Measure:
    """Fleiss (1971) on the units rated by the modal number of raters."""
    categories = _categories(table)
    counts = _counts(table, categories)
    m = counts.sum(axis=1)
    if not (m > 0).any():
        return Measure(np.zeros((len(table), 1)), lambda s: s[..., 0] * np.nan, 0, "no ratings")
    # the most common number of ratings; a tie goes to the larger number, whatever the unit order
    modal = max(Counter(m[m > 0].tolist()).items(), key=lambda kv: (kv[1], kv[0]))[0]
    chosen = (m == modal).astype(float)
    units = int(chosen.sum())
    if modal < 2:
        return Measure(
            chosen[:, None], lambda s: s[..., 0] * np.nan, units, "fewer than two ratings per unit"
        )
    _, share = _pair_agreement(counts)
    features = np.column_stack([chosen, chosen * share, chosen[:, None] * counts])

    def value(s: np.ndarray) -> np.ndarray:
        observed = ratio(s[..., 1], s[..., 0])
        with np.errstate(divide="ignore", invalid="ignore"):
            shares = s[..., 2:] / (modal * s[..., :1])
        return _chance_corrected(observed, (shares**2).sum(axis=-1))

    reason = _one_category("kappa") if len(categories) < 2 else None
    return Measure(features, value, units, reason, method=f"units with {int(modal)} ratings")


def gwet_measure(table: Table) -> Measure:
    """Gwet's AC1 for several raters and missing ratings (Gwet, Handbook of Inter-Rater Reliability)."""
    categories = _categories(table)
    counts = _counts(table, categories)
    pairable, share = _pair_agreement(counts)
    m = counts.sum(axis=1)
    rated = (m > 0).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(m[:, None] > 0, counts / np.where(m > 0, m, 1)[:, None], 0.0)
    features = np.column_stack([pairable, share, rated, shares])
    q = len(categories)

    def value(s: np.ndarray) -> np.ndarray:
        observed = ratio(s[..., 1], s[..., 0])
        with np.errstate(divide="ignore", invalid="ignore"):
            pi = s[..., 3:] / s[..., 2:3]
        return _chance_corrected(observed, (pi * (1 - pi)).sum(axis=-1) / (q - 1))

    units = int(pairable.sum())
    return Measure(features, value, units, _undefined(units, q, "AC1", "no unit has two ratings"))


def krippendorff_measure(table: Table) -> Measure:
    """Nominal alpha from the coincidence matrix: 1 - (n-1)(n - sum o_cc) / (n^2 - sum n_c^2)."""
    categories = _categories(table)
    counts = _counts(table, categories)
    pairable, _ = _pair_agreement(counts)
    m = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        diagonal = np.where(m[:, None] >= 2, counts * (counts - 1) / (m - 1)[:, None], 0.0)
    features = np.column_stack([pairable[:, None] * counts, diagonal])
    q = len(categories)

    def value(s: np.ndarray) -> np.ndarray:
        n_c, o_cc = s[..., :q], s[..., q:]
        n = n_c.sum(axis=-1)
        denominator = n**2 - (n_c**2).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = 1 - (n - 1) * (n - o_cc.sum(axis=-1)) / denominator
        return np.where(denominator > 0, alpha, np.nan)

    units = int(pairable.sum())
    reason = (
        _one_category("alpha")
        if q < 2
        else _undefined(units, q, "alpha", "no unit has two ratings")
    )
    return Measure(features, value, units, reason)


def cohen_measure(a: Sequence[Label], b: Sequence[Label]) -> Measure:
    pairs = [(x, y) for x, y in zip(a, b, strict=True)]
    both = [x is not None and y is not None for x, y in pairs]
    categories = sorted(
        {v for (x, y), ok in zip(pairs, both, strict=True) if ok for v in (x, y)}, key=repr
    )
    index = {c: i for i, c in enumerate(categories)}
    q = len(categories)
    features = np.zeros((len(pairs), q * q))
    for u, ((x, y), ok) in enumerate(zip(pairs, both, strict=True)):
        if ok:
            features[u, index[x] * q + index[y]] = 1

    def value(s: np.ndarray) -> np.ndarray:
        joint = s.reshape(*s.shape[:-1], q, q)
        n = joint.sum(axis=(-1, -2))
        with np.errstate(divide="ignore", invalid="ignore"):
            observed = np.trace(joint, axis1=-2, axis2=-1) / n
            expected = (joint.sum(axis=-1) * joint.sum(axis=-2)).sum(axis=-1) / n**2
        return _chance_corrected(observed, expected)

    units = sum(both)
    return Measure(
        features, value, units, _undefined(units, q, "kappa", "the two raters share no units")
    )


def percent_agreement(table: Table) -> Stat:
    """Share of agreeing rater pairs within units, averaged over units with 2+ ratings."""
    return percent_agreement_measure(table).point()


def fleiss_kappa(table: Table) -> Stat:
    return fleiss_measure(table).point()


def gwet_ac1(table: Table) -> Stat:
    return gwet_measure(table).point()


def cohen_kappa(a: Sequence[Label], b: Sequence[Label]) -> Stat:
    return cohen_measure(a, b).point()


def krippendorff_alpha(table: Table) -> Stat:
    """Nominal alpha via the `krippendorff` package; missing ratings allowed."""
    import krippendorff

    measure = krippendorff_measure(table)
    point = measure.point()
    if point.value is None:
        return point
    categories = _categories(table)
    code = {c: i for i, c in enumerate(categories)}
    data = np.array(
        [[np.nan if label is None else code[label] for label in row] for row in table], dtype=float
    ).T  # raters x units
    value = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    return Stat(float(value), measure.units)


MEASURES: dict[Callable[..., Stat], Callable[[Table], Measure]] = {
    percent_agreement: percent_agreement_measure,
    fleiss_kappa: fleiss_measure,
    gwet_ac1: gwet_measure,
    krippendorff_alpha: krippendorff_measure,
}


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (Wilson 1927; Newcombe 1998, method 3)."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def proportion(hits: int, n: int, empty: str) -> Stat:
    """hits / n with its Wilson interval; `empty` says why when there is no denominator."""
    if not n:
        return Stat(None, 0, reason=empty)
    low, high = wilson_interval(hits, n)
    return Stat(hits / n, n, low, high, method="Wilson")


def resample_weights(
    groups: Sequence[Hashable], repetitions: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(repetitions x groups draw counts, each unit's group index): groups drawn with replacement."""
    index: dict[Hashable, int] = {}
    member = np.array([index.setdefault(g, len(index)) for g in groups], dtype=np.int64)
    size = len(index)
    rng = np.random.default_rng(seed)
    weights = (
        rng.multinomial(size, np.full(size, 1 / size), size=repetitions)
        if size
        else np.zeros((repetitions, 0))
    )
    return weights.astype(float), member


def interval(
    measure: Measure,
    groups: Sequence[Hashable],
    repetitions: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    weights: tuple[np.ndarray, np.ndarray] | None = None,
    point: Stat | None = None,
) -> Stat:
    """Percentile interval resampling groups of units (e.g. the claims of one trace) together.

    `weights` lets several statistics share one set of resamples; `point` overrides the
    point value (Krippendorff's alpha comes from the `krippendorff` package).
    """
    point = point or measure.point()
    if point.value is None:
        return point
    draws, member = weights or resample_weights(groups, repetitions, seed)
    group_sums = np.zeros((draws.shape[1], measure.features.shape[1]))
    np.add.at(group_sums, member, measure.features)
    values = measure.value(draws @ group_sums)
    values = np.sort(values[~np.isnan(values)])
    if len(values) < draws.shape[0] // 2:
        return Stat(
            point.value,
            point.units,
            reason="too few resamples defined the statistic for an interval",
        )
    tail = (1 - level) / 2
    low = float(values[int(tail * (len(values) - 1))])
    high = float(values[int((1 - tail) * (len(values) - 1))])
    method = f"bootstrap over {draws.shape[1]} groups, {draws.shape[0]} resamples, seed {seed}"
    return Stat(point.value, point.units, low, high, method=method)


def bootstrap(
    statistic: Callable[[Table], Stat],
    table: Table,
    groups: Sequence[Hashable],
    repetitions: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Stat:
    """Seeded percentile bootstrap of one of this module's statistics over groups of units."""
    measure = MEASURES[statistic](table)
    return interval(measure, groups, repetitions, seed, level, point=statistic(table))
