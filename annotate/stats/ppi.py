"""The judge-corrected rate: prediction-powered inference (PPI++, as ppi-python) per stratum,
combined with the strata's population shares, and the least standard error a stratum may
claim. Pure numbers on 0/1 arrays: no store, no LLM.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np


@dataclass(frozen=True)
class StratumData:
    """One stratum's part of a slice for PPI: its population share, gold and judge outcomes on
    the labelled units, the judge's outcomes on the rest (all 0/1)."""

    share: float
    gold: np.ndarray
    judged: np.ndarray
    unlabelled: np.ndarray


def tuned_lambda(gold: np.ndarray, judged: np.ndarray, unlabelled: np.ndarray) -> float:
    """PPI++'s power-tuning parameter for a mean, as ppi-python computes it (Angelopoulos,
    Duchi & Zrnic 2023): cov(Y, Yhat) / ((1 + n / N) var(Yhat)), clipped to [0, 1]. A judge
    with one outcome everywhere carries no information (0 / 0 in ppi-python): 0, the mean of
    the gold labels, which is what any lambda gives there."""
    n, big_n = len(gold), len(unlabelled)
    outcomes = np.concatenate([judged, unlabelled])
    spread = float(np.var(outcomes, ddof=1)) if len(outcomes) > 1 else 0.0
    if spread == 0 or not big_n:
        return 0.0
    covariance = float(np.mean((gold - gold.mean()) * (judged - judged.mean())))
    return min(1.0, max(0.0, covariance / ((1 + n / big_n) * spread)))


def ppi_stratum(data: StratumData, floor: bool = True) -> tuple[float, float]:
    """(estimate, standard error) of one stratum's mean by PPI++ at the tuned lambda;
    with `floor`, the standard error is at least rectifier_floor's at that lambda, and where
    that floor makes it wider than the gold labels' own mean (lambda 0, floored alike) would
    be, that mean is the estimate: the correction never costs precision."""
    y, yhat, rest = (np.asarray(a, dtype=float) for a in (data.gold, data.judged, data.unlabelled))
    lam = tuned_lambda(y, yhat, rest)
    tuned = _at(y, yhat, rest, lam)
    if not floor:
        return tuned
    floored = tuned[0], max(tuned[1], rectifier_floor(y, yhat, rest, lam))
    if lam == 0:
        return floored
    gold_only = _at(y, yhat, rest, 0.0)
    gold_only = gold_only[0], max(gold_only[1], rectifier_floor(y, yhat, rest, 0.0))
    return floored if floored[1] <= gold_only[1] else gold_only


def _at(y: np.ndarray, yhat: np.ndarray, rest: np.ndarray, lam: float) -> tuple[float, float]:
    """The PPI++ estimate of a mean at `lam` and the standard error behind its normal interval,
    as ppi-python's ppi_mean_pointestimate and ppi_mean_ci compute them (unit weights):
    lam * mean(rest) + mean(y - lam * yhat), and the square root of the imputed part's variance
    over N plus the rectifier's over n (population variances, numpy's default). The same
    operations in the same order, so the same numbers (tests/test_ppi_corrected.py checks them
    against ppi-python, which stays the reference there); not imported here, since importing it
    brings numba, scikit-learn and statsmodels: 2 s and 150 MB on a lead's first visit to Rates
    for two lines of arithmetic."""
    n, big_n = len(y), len(rest)
    if not n or not big_n:
        raise ArithmeticError(f"PPI gave no number on {n} labels and {big_n} unlabelled units")
    point = float((lam * rest).mean() + (y - lam * yhat).mean())
    imputed = float((lam * rest).std()) / math.sqrt(big_n)
    rectifier = float((y - lam * yhat).std()) / math.sqrt(n)
    se = math.sqrt(imputed**2 + rectifier**2)
    if not all(math.isfinite(v) for v in (point, se)):
        raise ArithmeticError(f"PPI gave no number on {n} labels: {point} (standard error {se})")
    return point, se


def ppi_stratified(
    strata: Sequence[StratumData], level: float = 0.95, floor: bool = True
) -> tuple[float, float, float]:
    """sum_h W_h theta_h with its normal interval, se^2 = sum_h W_h^2 se_h^2 (strata independent)."""
    total = sum(s.share for s in strata)
    estimate, variance = 0.0, 0.0
    for data in strata:
        point, se = ppi_stratum(data, floor)
        weight = data.share / total
        estimate += weight * point
        variance += (weight * se) ** 2
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    half = z * math.sqrt(variance)

    # A rate: PPI's unbiased estimate, and so either bound, can leave [0, 1] (1.48 on 12 labels).
    def clip(value: float) -> float:
        return min(1.0, max(0.0, value))

    return clip(estimate), clip(estimate - half), clip(estimate + half)


PSEUDO_COUNT = 1.0  # per disagreement cell; chosen by tests/test_ppi_simulation.py


def rectifier_floor(
    gold: np.ndarray, judged: np.ndarray, unlabelled: np.ndarray, lam: float = 1.0
) -> float:
    """The least standard error a stratum may claim at power-tuning `lam`: 40 labels that all
    agree with the judge do not prove it never errs. Misses and false alarms each get one
    pseudo-count; the rectifier Y - lam * Yhat's variance is taken on those smoothed
    cells, the imputed part's as ppi-python takes it. At lam = 1 (plain PPI) a miss is +1 and
    an alarm -1; at lam = 0 (gold alone) the cells are the gold labels' own, smoothed."""
    n = len(gold)
    hits, misses, rejections, alarms = (
        float(np.sum((gold == g) & (judged == j))) for g, j in ((1, 1), (1, 0), (0, 0), (0, 1))
    )
    values = np.array([1 - lam, 1.0, 0.0, -lam])  # Y - lam * Yhat in each cell
    counts = np.array([hits, misses + PSEUDO_COUNT, rejections, alarms + PSEUDO_COUNT])
    shares = counts / (n + 2 * PSEUDO_COUNT)
    mean = float(shares @ values)
    rectifier = (float(shares @ values**2) - mean**2) / n
    imputed = lam**2 * float(np.var(unlabelled)) / len(unlabelled) if len(unlabelled) else 0.0
    return math.sqrt(max(rectifier, 0.0) + imputed)
