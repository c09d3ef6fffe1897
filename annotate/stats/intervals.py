"""Statistics as per-unit sums, and their intervals: Wilson, and a BCa bootstrap over groups.

Pure numpy: no store, no streamlit. A bootstrap resamples groups of units (the claims of
one trace move together) within strata, so 1,000 resamples are one matrix product.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np

from annotate.stats.resamples import Weights, resample_weights

Z95 = 1.959963984540054
MIN_DEFINED_SHARE = 0.5  # fewer defined resamples than this share: no interval, say why
# sums (..., F) -> (observed agreement p_o, chance agreement p_e, exact agreement), each (...),
# of a statistic (p_o - p_e) / (1 - p_e); p_o = the exact share unless weights give part credit
Agreement = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


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


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


@dataclass(frozen=True)
class Measure:
    """A statistic as per-unit features whose column sums determine it."""

    features: np.ndarray  # units x F
    value: Callable[[np.ndarray], np.ndarray]  # sums (..., F) -> (...), NaN where undefined
    units: int
    reason: str | None = None  # why it is undefined on the whole table, if it is
    method: str | None = None  # which units it uses, when that is a choice
    floor: float = -math.inf  # the least value it can take (0 for a proportion); all are <= 1
    # For a chance-corrected coefficient (p_o - p_e) / (1 - p_e): its p_o, p_e and exact share
    # from the sums, and the n for Wilson's interval: each unit's ratings after its first,
    # summed (the units, for two raters). The interval is then never narrower than they imply.
    agreement: Agreement | None = None
    comparisons: int = 0

    def point(self) -> Stat:
        if self.reason:
            return Stat(None, self.units, reason=self.reason)
        value = float(self.value(self.features.sum(axis=0)))
        if math.isnan(value):
            return Stat(None, self.units, reason="undefined on these ratings")
        return Stat(value, self.units, method=self.method)


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (Wilson 1927; Newcombe 1998, method 3)."""
    if n == 0:
        return (math.nan, math.nan)
    return wilson_share(successes / n, n, z)


def wilson_share(share: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's interval at an observed share (a mean of per-unit values in [0, 1]) over n
    units; exactly 0 (1) at a share of 0 (1), where the formula leaves a rounding error."""
    if n <= 0 or math.isnan(share):
        return (math.nan, math.nan)
    p = min(max(share, 0.0), 1.0)
    p = 0.0 if p < 1e-12 else 1.0 if p > 1 - 1e-12 else p  # a mean of shares: rounding
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if p == 0 else max(0.0, centre - half)
    high = 1.0 if p == 1 else min(1.0, centre + half)
    return (low, high)


def at_least_wilson(measure: Measure, sums: np.ndarray, level: float) -> tuple[float, float] | None:
    """The interval of a chance-corrected coefficient (p_o - p_e) / (1 - p_e) implied by
    Wilson's interval on the observed agreement p_o at n = `measure.comparisons`, chance
    agreement p_e held at its observed value (the coefficient is increasing in p_o). None when
    the measure is not of that form or p_e is 1.

    Wilson's is for a share of 0/1 outcomes: exact agreement. With weights (weighted kappa,
    AC2, ordinal or interval alpha) a near miss earns part credit and p_o = x + (1 - x) c,
    x the exact share, c the mean credit of the other pairs; Wilson's on p_o itself would
    treat 0.94 credit as a coin toss (quadratic kappa on 30 units: [0.41, 0.99] where the
    bootstrap gives [0.84, 0.96]). So Wilson's bounds go on x, c held like p_e (c = 0, all
    credit lost, when every pair agrees exactly); without weights p_o = x.

    A bootstrap collapses where every resample agrees perfectly ([1, 1] on a perfectly
    agreeing sample, whatever the population): the interval reaches out to these bounds, as
    a proportion's reaches out to Wilson's. Holding p_e ignores its own sampling error, so
    these bounds are a floor on the width, not an interval of their own.

    n: each unit's ratings after its first, summed; for two raters (judge and gold, a pair of
    reviewers) the units. Each such rating is one chance to disagree with the unit's first: a
    sample with no disagreement at all has probability about (1 - d)^n when a rating disagrees
    with probability d, which is what Wilson's bound at p_o = 1 inverts. The units alone
    (fewer, so wider) would count a unit's share of agreeing pairs among six ratings as one
    0/1 trial, whose variance p(1 - p) it does not have: on Fleiss (1971)'s table, five times
    over, that bound was twice as wide as the unit bootstrap. Rater pairs (m(m - 1)/2 a unit)
    would count one disagreement several times, and pairable values (m a unit) the first
    rating, which cannot disagree with itself: both more, so narrower.
    """
    if measure.agreement is None or measure.comparisons < 1:
        return None
    observed, expected, exact = (float(x) for x in measure.agreement(sums))
    if math.isnan(observed + expected + exact) or expected >= 1 - 1e-12:
        return None
    credit = min(max((observed - exact) / (1 - exact), 0.0), 1.0) if exact < 1 - 1e-12 else 0.0
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    bounds = (credit + x * (1 - credit) for x in wilson_share(exact, measure.comparisons, z))
    low, high = ((x - expected) / (1 - expected) for x in bounds)
    return low, high


def proportion(hits: int, n: int, empty: str) -> Stat:
    """hits / n with its Wilson interval; `empty` says why when there is no denominator."""
    if not n:
        return Stat(None, 0, reason=empty)
    low, high = wilson_interval(hits, n)
    return Stat(hits / n, n, low, high, method="Wilson")


def _bca_levels(
    values: np.ndarray,
    theta: float,
    jackknife: np.ndarray,
    level: float,
    counts: np.ndarray | None = None,
) -> tuple[float, float]:
    """Efron's bias-corrected and accelerated percentile levels (Efron & Tibshirani 1993, 14.3).

    `counts`: how many groups each jackknife value stands for (positive), as if each were
    repeated that often: the sums then take a product per distinct value, not one term per
    group (300,000 traces of a few thousand kinds)."""
    normal, tail = NormalDist(), (1 - level) / 2
    count = len(values)
    tie = np.abs(values - theta) <= 1e-9 * max(1.0, abs(theta))  # rounding is not a difference
    below = (np.sum((values < theta) & ~tie) + 0.5 * np.sum(tie)) / count
    z0 = normal.inv_cdf(min(max(below, 1 / (count + 1)), count / (count + 1)))
    known = ~np.isnan(jackknife)
    spread = jackknife[known]
    weights = np.ones(len(spread)) if counts is None else counts[known].astype(float)
    mean = float(weights @ spread) / weights.sum() if len(spread) else 0.0
    d = np.round(mean - spread, 12)
    squares, cubes = float(weights @ d**2), float(weights @ d**3)
    scale = 6 * squares**1.5
    a = cubes / scale if scale > 0 else 0.0
    levels = []
    for alpha in (tail, 1 - tail):
        z = z0 + normal.inv_cdf(alpha)
        levels.append(normal.cdf(z0 + z / (1 - a * z)) if a * z < 1 else alpha)
    return levels[0], levels[1]


def _method(weights: Weights, seed: int) -> str:
    draws, _, strata = weights
    within = f" within {strata} strata" if strata > 1 else ""
    return (
        f"BCa bootstrap over {draws.shape[1]} groups{within}, {draws.shape[0]} resamples, "
        f"seed {seed}"
    )


def interval(
    measure: Measure,
    groups: Sequence[Hashable],
    repetitions: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    weights: Weights | None = None,
    point: Stat | None = None,
) -> Stat:
    """BCa bootstrap interval resampling groups of units (e.g. the claims of one trace) together.

    The bias correction and the acceleration (from the leave-one-group-out jackknife) keep
    the interval honest at small counts, where the plain percentile one runs short.
    `weights` lets several statistics share one set of resamples (and carries the strata);
    `point` overrides the point value (Krippendorff's alpha comes from its package).
    """
    point = point or measure.point()
    if point.value is None:
        return point
    weights = weights or resample_weights(groups, repetitions, seed)
    draws, member, strata = weights
    if draws.shape[1] - strata < 1:
        reason = "one group per stratum: nothing to resample for an interval"
        return Stat(point.value, point.units, reason=reason, method=point.method)
    # Per group, the sum of its units' features (what np.add.at does, in the same order, faster).
    group_sums = np.column_stack(
        [
            np.bincount(member, weights=column, minlength=draws.shape[1])
            for column in measure.features.T
        ]
    ).reshape(draws.shape[1], measure.features.shape[1])
    with _one_blas_thread():
        sums = draws @ group_sums
    values = measure.value(sums)
    values = values[~np.isnan(values)]
    if len(values) < draws.shape[0] * MIN_DEFINED_SHARE:
        reason = "too few resamples defined the statistic for an interval"
        return Stat(point.value, point.units, reason=reason, method=point.method)
    total = group_sums.sum(axis=0)
    theta = float(measure.value(total))
    low_level, high_level = _bca_levels(values, theta, measure.value(total - group_sums), level)
    low, high = np.quantile(values, [low_level, high_level])
    factor = few_groups_factor(draws.shape[1] - weights[2], level)
    low = theta - factor * (theta - low)
    high = theta + factor * (high - theta)
    wilson = at_least_wilson(measure, total, level)
    note = None
    if wilson is not None and (wilson[0] < low or wilson[1] > high):  # said where it widens
        low, high = min(low, wilson[0]), max(high, wilson[1])
        note = (
            "at least the interval Wilson's on the observed agreement implies (n = "
            f"{measure.comparisons}, each unit's ratings after its first; chance agreement held)"
        )
    low, high = max(measure.floor, low), min(1.0, high)
    method = "; ".join(m for m in (point.method, note, _method(weights, seed)) if m)
    return Stat(point.value, point.units, float(low), float(high), method=method)


_BLAS_LOCK = threading.Lock()


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """BLAS on one thread for the bootstrap's thin products (resamples x groups times a few
    columns): more threads save nothing there and, on a busy machine, wait on each other
    (the report took twice as long). The lock keeps each limit and its restore together
    when pages compute in several threads; the products give the same sums either way."""
    from threadpoolctl import ThreadpoolController

    with _BLAS_LOCK:
        global _CONTROLLER
        if _CONTROLLER is None:
            _CONTROLLER = ThreadpoolController()
        with _CONTROLLER.limit(limits=1, user_api="blas"):
            yield


_CONTROLLER: Any = None


@lru_cache(maxsize=256)
def few_groups_factor(freedom: int, level: float) -> float:
    """Widening for few groups: sqrt(G / (G - 1)) undoes the bootstrap's variance shrinkage,
    t(G - 1) / z its normal tails (as a cluster-robust t interval does); 1 for many groups."""
    if freedom < 1:
        return 1.0
    # Student's t quantile: stdtrit is what scipy.stats.t.ppf computes, without the ~0.3-0.9 s
    # import of scipy.stats.
    from scipy.special import stdtrit

    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    return math.sqrt((freedom + 1) / freedom) * float(stdtrit(freedom, 1 - (1 - level) / 2)) / z
