"""Statistics of ratings on an ordinal scale (1-5): the ICC(2,1) between raters, and a judge's
ratings against the human mean (mean bias, mean absolute difference, Spearman's rho).

Pure numpy: no store. Each statistic is a Measure (per-unit features whose sums give it) so
the trace bootstrap of stats.intervals gives its interval; Spearman's rho, a statistic of
ranks, is bootstrapped here on the same resamples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from annotate.stats.intervals import Measure, Stat, Weights, _bca_levels, few_groups_factor

TOO_FEW = 5  # fewer units than this: the statistic's interval says too few to say


def icc_measure(table: Sequence[Sequence[float | None]]) -> Measure:
    """ICC(2,1), two-way random effects, absolute agreement, single rater (Shrout & Fleiss
    1979, case 2; McGraw & Wong 1996, ICC(A,1)) on the units every rater rated:

        (MSR - MSE) / (MSR + (k - 1) MSE + k (MSC - MSE) / n)

    from the two-way ANOVA's mean squares; per-unit features are 1, each rater's score, the
    sum of squares and the squared sum, so a resample's sums give its ANOVA."""
    k = len(table[0]) if table else 0
    complete = np.array([all(x is not None for x in row) for row in table], dtype=bool)
    data = (
        np.array(
            [[float(x) if x is not None else 0.0 for x in row] for row in table], dtype=float
        ).reshape(len(table), k)
        * complete[:, None]
    )  # a unit some rater skipped adds nothing
    features = np.column_stack(
        [complete, data, (data**2).sum(axis=1), data.sum(axis=1) ** 2]
    ).astype(float)
    units = int(complete.sum())

    def value(s: np.ndarray) -> np.ndarray:
        n, columns, squares, row_squares = s[..., 0], s[..., 1 : 1 + k], s[..., -2], s[..., -1]
        with np.errstate(divide="ignore", invalid="ignore"):
            correction = columns.sum(axis=-1) ** 2 / (n * k)
            ss_rows = row_squares / k - correction
            ss_columns = (columns**2).sum(axis=-1) / n - correction
            ss_error = squares - correction - ss_rows - ss_columns
            msr, msc = ss_rows / (n - 1), ss_columns / (k - 1)
            mse = ss_error / ((n - 1) * (k - 1))
            icc = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        return np.where((n >= 2) & np.isfinite(icc), icc, np.nan)

    reason = None
    if k < 2:
        reason = "ICC needs two raters or more"
    elif units < 2:
        reason = f"ICC(2,1) needs units every one of the {k} raters rated; {units} are"
    method = f"ICC(2,1) on the {units} units all {k} raters rated"
    return Measure(features, value, units, reason, method, floor=-1.0)


def difference_measure(
    judge: Sequence[float], human: Sequence[float], span: float, absolute: bool
) -> Measure:
    """The mean of judge - human (absolute: |judge - human|) over units, divided by the scale's
    span (highest - lowest score) so it lies in [-1, 1] as every Measure's interval needs;
    `on_scale` multiplies it back."""
    diff = (np.asarray(judge, dtype=float) - np.asarray(human, dtype=float)) / span
    diff = np.abs(diff) if absolute else diff
    features = np.column_stack([np.ones(len(diff)), diff])

    def value(s: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(s[..., 0] > 0, s[..., 1] / s[..., 0], np.nan)

    reason = None if len(diff) else "no unit has both the judge's and a reviewer's rating"
    return Measure(features, value, len(diff), reason, floor=0.0 if absolute else -1.0)


def on_scale(stat: Stat, span: float) -> Stat:
    """A difference Measure's Stat back in scale points."""
    scaled = [None if x is None else x * span for x in (stat.value, stat.low, stat.high)]
    return Stat(scaled[0], stat.units, scaled[1], scaled[2], stat.reason, stat.method)


def spearman(x: np.ndarray, y: np.ndarray, counts: np.ndarray | None = None) -> float:
    """Spearman's rho: Pearson's r of mid-ranks; `counts` repeats each unit (a resample)."""
    if counts is not None:
        x, y = np.repeat(x, counts), np.repeat(y, counts)
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    if len(x) < 3 or rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def spearman_stat(
    x: Sequence[float], y: Sequence[float], weights: Weights, seed: int, level: float = 0.95
) -> Stat:
    """rho with a BCa interval from the shared trace resamples (`weights`, one unit per group
    or several: a unit's count is its group's draw count)."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    theta = spearman(xs, ys)
    if math.isnan(theta):
        return Stat(None, len(xs), reason="fewer than 3 units, or one rater gave one score only")
    draws, member, strata = weights
    if len(xs) < TOO_FEW or draws.shape[1] - strata < 1:
        return Stat(theta, len(xs), reason="too few units to say", method="Spearman")
    values = np.array([spearman(xs, ys, row[member].astype(int)) for row in draws])
    values = values[~np.isnan(values)]
    keep = np.ones(len(xs), bool)
    jack = []
    for group in range(draws.shape[1]):
        keep[:] = member != group
        jack.append(spearman(xs[keep], ys[keep]))
    low_level, high_level = _bca_levels(values, theta, np.array(jack), level)
    low, high = np.quantile(values, [low_level, high_level])
    factor = few_groups_factor(draws.shape[1] - strata, level)
    low, high = max(-1.0, theta - factor * (theta - low)), min(1.0, theta + factor * (high - theta))
    method = f"Spearman; BCa bootstrap over {draws.shape[1]} groups, {draws.shape[0]} resamples, seed {seed}"
    return Stat(theta, len(xs), float(low), float(high), method=method)
