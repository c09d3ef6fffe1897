"""BCa over resampled groups, then the few-groups widening: Efron & Tibshirani (1993, 14.3)
transcribed from the book, with scipy's normal and t, for the tests of the product's intervals.
"""

from __future__ import annotations

import math

import numpy as np


def bca_widened(group_sums, draws, strata: int = 1, level: float = 0.95):
    """(theta, low, high) of the ratio sum(numerators) / sum(denominators).

    `group_sums`: one row per group, (numerator, denominator) summed over its units (a group's
    units move together); `draws`: resamples x groups, how often each group is drawn. A
    resample equal to the estimate is a tie, counted half below. The interval is then widened
    around the estimate by sqrt(G / (G - 1)) t(G - 1) / z, G = groups - strata + 1, and kept
    within [0, 1]."""
    from scipy.stats import norm, t

    group_sums = np.asarray(group_sums, float)
    total = group_sums.sum(axis=0)
    theta = total[0] / total[1]
    resampled = draws @ group_sums
    values = resampled[:, 0] / resampled[:, 1]
    jack = (total[0] - group_sums[:, 0]) / (total[1] - group_sums[:, 1])
    tied = np.isclose(values, theta, rtol=0, atol=1e-12)
    z0 = norm.ppf(np.mean(values < theta) - np.mean(tied & (values < theta)) + np.mean(tied) / 2)
    d = jack.mean() - jack
    a = (d**3).sum() / (6 * ((d**2).sum()) ** 1.5)
    tail = (1 - level) / 2
    levels = [
        norm.cdf(z0 + (z0 + norm.ppf(q)) / (1 - a * (z0 + norm.ppf(q)))) for q in (tail, 1 - tail)
    ]
    low, high = np.quantile(values, levels)
    freedom = len(group_sums) - strata
    factor = math.sqrt((freedom + 1) / freedom) * t.ppf(1 - tail, freedom) / norm.ppf(1 - tail)
    return (
        theta,
        max(0.0, theta - factor * (theta - low)),
        min(1.0, theta + factor * (high - theta)),
    )
