"""Rate estimators on arrays: the design-weighted ratio with a stratified BCa bootstrap,
Rogan-Gladen (prediction-powered inference is stats.ppi's), threshold states, the
drift test and the label budget. Pure numbers: no store, no LLM.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from annotate.stats.intervals import Z95, _bca_levels, few_groups_factor, ratio, wilson_interval

OK, WARNING, BREACH, UNKNOWN = "ok", "warning", "breach", "no number"


@dataclass(frozen=True)
class Rate:
    """One estimate: the rate with its 95% interval and how it was made, or why there is none."""

    rate: float | None
    low: float | None
    high: float | None
    n: int
    method: str
    reason: str | None = None


def threshold_state(low: float | None, high: float | None, threshold: float) -> str:
    """ok: the interval lies below the threshold; breach: above it; warning: it holds it."""
    if low is None or high is None:
        return UNKNOWN
    if high < threshold:
        return OK
    if low > threshold:
        return BREACH
    return WARNING


def weighted_ratio(
    features: np.ndarray,
    draws: np.ndarray,
    members: np.ndarray,
    strata: int,
    level: float = 0.95,
) -> tuple[float, float, float] | None:
    """sum(w * numerator) / sum(w * denominator) over the groups in `members` with a BCa
    interval from shared stratified resamples.

    features: groups x 2, the weighted numerator and denominator of each group (a trace), zero
    for groups outside the slice; draws: resamples x groups (counts, drawn within strata);
    members: the slice's group indexes; strata: how many strata those groups span (for the
    few-groups widening). None when the slice has no denominator."""
    total = features.sum(axis=0)
    if total[1] <= 0:
        return None
    theta = float(total[0] / total[1])
    sums = draws[:, members] @ features[members]  # groups outside the slice add nothing
    values = ratio(sums[:, 0], sums[:, 1])
    values = values[~np.isnan(values)]
    if len(members) - strata < 1 or len(values) < draws.shape[0] / 2:
        return theta, math.nan, math.nan
    jack = ratio(total[0] - features[members, 0], total[1] - features[members, 1])
    low_level, high_level = _bca_levels(values, theta, jack, level)
    low, high = np.quantile(values, [low_level, high_level])
    factor = few_groups_factor(len(members) - strata, level)
    return (
        theta,
        max(0.0, theta - factor * (theta - low)),
        min(1.0, theta + factor * (high - theta)),
    )


def clustered_ratio(
    counts: np.ndarray,
    per_trace: np.ndarray,
    strata: Sequence[object],
    resamples: int,
    seed: int,
    level: float = 0.95,
) -> tuple[float, float, float] | None:
    """sum(numerator) / sum(denominator) over traces, with a BCa interval from a seeded
    bootstrap of traces within strata (claims of one trace move together).

    Rows stand for `counts` traces alike (per_trace: rows x 2, one trace's numerator and
    denominator), so drawing traces is drawing rows, multinomially with shares counts / T_h
    in each stratum of T_h traces; strata of one trace are pooled. None without a denominator;
    NaN bounds when there is nothing to resample."""
    counts = np.asarray(counts, dtype=np.int64)
    total = counts @ per_trace
    if total[1] <= 0:
        return None
    theta = float(total[0] / total[1])
    draws, strata_count = _trace_draws(counts, strata, resamples, seed)
    values = ratio(*(draws @ per_trace).T)
    values = values[~np.isnan(values)]
    traces = int(counts.sum())
    if traces - strata_count < 1 or len(values) < resamples / 2:
        return theta, math.nan, math.nan
    jack = ratio(total[0] - per_trace[:, 0], total[1] - per_trace[:, 1])  # one per trace alike
    drawn = counts > 0
    low_level, high_level = _bca_levels(values, theta, jack[drawn], level, counts[drawn])
    low, high = np.quantile(values, [low_level, high_level])
    factor = few_groups_factor(traces - strata_count, level)
    return (
        theta,
        max(0.0, theta - factor * (theta - low)),
        min(1.0, theta + factor * (high - theta)),
    )


def _trace_draws(
    counts: np.ndarray, strata: Sequence[object], resamples: int, seed: int
) -> tuple[np.ndarray, int]:
    """resamples x rows: how often each row's traces were drawn, T_h draws per stratum."""
    by_stratum: dict[object, list[int]] = {}
    for row, stratum in enumerate(strata):
        by_stratum.setdefault(stratum, []).append(row)
    groups = [rows for rows in by_stratum.values() if counts[rows].sum() > 1]
    single = [row for rows in by_stratum.values() if counts[rows].sum() == 1 for row in rows]
    if single:  # a stratum of one trace cannot vary: pooled, as resamples._pooled does
        groups = (
            [*groups, single]
            if len(single) > 1 or not groups
            else [groups[0] + single, *groups[1:]]
        )
    rng = np.random.default_rng(seed)
    draws = np.zeros((resamples, len(counts)))
    for rows in groups:
        size = int(counts[rows].sum())
        if size:
            draws[:, rows] = rng.multinomial(size, counts[rows] / size, size=resamples)
    return draws, len(groups)


def wilson_at(rate: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score bounds at a proportion `rate` of `n` units (rate * n need not be whole)."""
    if n == 0:
        return (math.nan, math.nan)
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def wilson_rate(hits: int, n: int, method: str) -> Rate:
    if n == 0:
        return Rate(None, None, None, 0, method, "no units")
    low, high = wilson_interval(hits, n)
    return Rate(hits / n, low, high, n, method)


def rogan_gladen(
    observed: float, sensitivity: float, specificity: float, clip: bool = True
) -> float | None:
    """True prevalence from an imperfect test (Rogan & Gladen 1978), clipped to [0, 1] unless
    `clip` is False; None when sensitivity + specificity <= 1 (no better than chance)."""
    youden = sensitivity + specificity - 1
    if youden <= 0:
        return None
    corrected = (observed + specificity - 1) / youden
    return min(1.0, max(0.0, corrected)) if clip else corrected


def rogan_gladen_interval(
    observed: float,
    observed_draws: np.ndarray,
    cells: np.ndarray,
    draws: np.ndarray,
    level: float = 0.95,
) -> tuple[float | None, float, float]:
    """Rogan-Gladen at the judge's raw rate `observed`, with a percentile interval from
    resamples that move the raw rate and the calibration together: observed_draws, the raw
    rate in each resample; cells: groups x [tp, fn, tn, fp] (weighted as the design weights
    its groups); draws: resamples x groups, the same resamples' counts of each group."""
    sensitivity, specificity = _accuracy(cells.sum(axis=0))
    point = rogan_gladen(observed, float(sensitivity), float(specificity))
    if point is None:
        return None, math.nan, math.nan
    sums = draws @ cells
    sens, spec = _accuracy(sums.T)
    youden = sens + spec - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.clip((observed_draws + spec - 1) / youden, 0, 1)
    values = values[(youden > 0) & ~np.isnan(values)]
    if len(values) < draws.shape[0] / 2:
        return point, math.nan, math.nan
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return point, float(low), float(high)


def _accuracy(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sensitivity, specificity) of [tp, fn, tn, fp] (or 4 x resamples); 0 without a class,
    so rogan_gladen then finds no skill (None), as it must."""
    tp, fn, tn, fp = (np.asarray(c, dtype=float) for c in cells)
    with np.errstate(divide="ignore", invalid="ignore"):
        sens = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        spec = np.where(tn + fp > 0, tn / (tn + fp), 0.0)
    return sens, spec


def drift_test(
    before: tuple[float, float, float], after: tuple[float, float, float]
) -> tuple[float, float]:
    """Two-sided z-test of two windows' rates, each (rate, low, high) with a 95% interval whose
    half-width / 1.96 is taken as its standard error. Returns (z, p)."""
    se = [(high - low) / (2 * Z95) for _, low, high in (before, after)]
    spread = math.sqrt(se[0] ** 2 + se[1] ** 2)
    if spread == 0:
        return (0.0, 1.0) if before[0] == after[0] else (math.inf, 0.0)
    z = (after[0] - before[0]) / spread
    return z, 2 * (1 - NormalDist().cdf(abs(z)))


def smoothed(hits: float, n: float) -> float:
    """Agresti-Coull's centre (x + 2) / (n + 4): never 0 or 1, so a plan never asks for none."""
    return (hits + 2) / (n + 4)


def labels_needed(variance: float, width: float, population: int | None = None) -> int:
    """Units for a 95% normal interval of total width `width` on a mean of per-unit variance
    `variance`, with the finite-population correction when the population is known."""
    half = width / 2
    n0 = (Z95 / half) ** 2 * variance
    if population:
        n0 = n0 / (1 + (n0 - 1) / population)
    return math.ceil(n0)


def ppi_unit_variance(rate: float, sensitivity: float, specificity: float) -> float:
    """Var(Y - Yhat) for a binary gold Y and judge Yhat: PPI's per-label variance (lambda = 1);
    power tuning never does worse than the classical p(1 - p), so the smaller of the two."""
    missed = rate * (1 - sensitivity)
    false_alarm = (1 - rate) * (1 - specificity)
    mean = missed - false_alarm
    return min(missed + false_alarm - mean**2, rate * (1 - rate))


def score_summary(scores: Sequence[float] | np.ndarray, buckets: int = 10) -> dict[str, object]:
    """A score histogram with equal-width buckets, and p50 / p95 / standard deviation."""
    values = np.asarray(scores, dtype=float)
    if not len(values):
        return {"count": 0, "reason": "no scores"}
    counts, edges = np.histogram(values, bins=buckets)
    p50, p95 = np.percentile(values, [50, 95])  # one partition of the scores for both
    return {
        "count": len(values),
        "p50": float(p50),
        "p95": float(p95),
        "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
        "buckets": [
            {"low": float(lo), "high": float(hi), "count": int(c)}
            for lo, hi, c in zip(edges[:-1], edges[1:], counts, strict=True)
        ],
    }


def planning_rate(hits: int, n: int) -> float:
    """The rate a plan assumes: within the current Wilson interval, the value nearest 1/2
    (the largest variance the data allow), so the planned labels suffice in most outcomes."""
    if n == 0:
        return 0.5
    low, high = wilson_interval(hits, n)
    return min(max(0.5, low), high)
