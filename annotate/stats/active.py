"""Active statistical inference (Zrnic & Candès 2024, "Active Statistical Inference", ICML):
inclusion probabilities that follow the judge's uncertainty, mixed with a uniform floor, and the
AIPW estimate of a rate from a sample drawn with them, in one draw or several (their sequential
version). Pure numbers on arrays whose last axis is the traces: no store, no LLM.

The estimand is a ratio of frame totals, sum(y_num) / sum(y_den) (a response rate: y_den = 1;
a claim rate: unsupported claims over judged claims). The judge's prediction f is known on every
frame trace; labels y only on the sampled ones, each drawn by Poisson sampling with probability
pi in its draw. Draw b's estimate of a total is the judge's total, plus the exact errors of the
traces labelled in earlier draws, plus sum (y - f) / pi over its own traces: unbiased given the
earlier draws whatever they were, so the draws' estimates, combined with weights fixed before
each draw, form a martingale and the normal interval holds for the whole adaptive sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

METHOD = "active inference (Zrnic & Candès 2024, AIPW)"
FLOORS = tuple(round(0.1 * k, 1) for k in range(2, 11))  # mixing weights the planner weighs
PSEUDO_COUNT = 0.5  # pseudo-traces of each outcome (human rate): the few-label floor
JUDGE_PSEUDO = 0.075  # pseudo-misses and false alarms (AIPW); both chosen by bench_active_sampling
FLOOR_TOLERANCE = 1.02  # the largest floor whose predicted variance is within 2% of the least


def error_variance(score: np.ndarray) -> np.ndarray:
    """A score in [0, 1] read as the judge's probability: the squared error it expects, s(1 - s)
    (symmetric, so a score of `unsupported` or of `supported` gives the same)."""
    score = np.clip(np.asarray(score, dtype=float), 0.0, 1.0)
    return score * (1 - score)


def design_shares(
    variance: np.ndarray, floor_weight: float, counts: np.ndarray | None = None
) -> np.ndarray:
    """Each trace's share of the budget: (1 - tau) sqrt(v) / sum sqrt(v) + tau / N. sqrt(v) is
    the variance-optimal rule for an AIPW mean (Zrnic & Candès, section 3); tau keeps every
    trace's probability at least tau * n / N. `counts`: the traces each entry of a 1-D
    `variance` stands for (the same as repeating it; each trace's share)."""
    u = np.sqrt(np.clip(np.asarray(variance, dtype=float), 0.0, None))
    if counts is not None:
        total, uniform = float(counts @ u), np.full(u.shape, 1.0 / int(counts.sum()))
        scaled = u / total if total > 0 else uniform
        return (1 - floor_weight) * scaled + floor_weight * uniform
    uniform = np.full(u.shape, 1.0 / u.shape[-1])
    total = u.sum(axis=-1, keepdims=True)
    scaled = np.divide(u, total, out=uniform.copy(), where=total > 0)
    return (1 - floor_weight) * scaled + floor_weight * uniform


def inclusion_probabilities(shares: np.ndarray, budget: float) -> np.ndarray:
    """pi = budget * share, capped at 1 with the excess spread over the others so that the
    expected sample size stays `budget` (at most the number of traces)."""
    pi = budget * np.asarray(shares, dtype=float)
    budget = min(float(budget), float(pi.shape[-1]))
    for _ in range(pi.shape[-1]):
        over = pi >= 1.0
        if not (pi > 1.0 + 1e-12).any():
            break
        free = budget - over.sum(axis=-1, keepdims=True)
        rest = np.where(over, 0.0, pi)
        pi = np.where(over, 1.0, rest * free / rest.sum(axis=-1, keepdims=True))
    return np.minimum(pi, 1.0)


def predicted_variance(variance: np.ndarray, shares: np.ndarray, labels: float) -> float:
    """The AIPW total's variance / N^2 when `labels` traces are drawn with `shares`:
    (1 / N^2) sum v (1 / (n a) - 1), caps ignored."""
    v = np.asarray(variance, dtype=float)
    return float((v / (labels * shares) - v).sum() / len(v) ** 2)


def labels_for_width(
    variance: np.ndarray, shares: np.ndarray, width: float, counts: np.ndarray | None = None
) -> int:
    """The least n whose 95% normal interval has total width `width`: n = sum(v / a) /
    (N^2 V + sum v), V = (width / 2 / 1.96)^2; at most the frame (`counts`: design_shares')."""
    v = np.asarray(variance, dtype=float)
    frame = len(v) if counts is None else int(counts.sum())
    target = (width / 2 / NormalDist().inv_cdf(0.975)) ** 2
    needed = _over_traces(v / shares, counts) / (frame**2 * target + _over_traces(v, counts))
    return int(min(frame, np.ceil(needed - 1e-9)))


def _over_traces(values: np.ndarray, counts: np.ndarray | None) -> float:
    """The sum over the traces of a 1-D array whose entries stand for `counts` traces each."""
    return float(values.sum()) if counts is None else float(counts @ values)


def choose_floor(variance: np.ndarray, counts: np.ndarray | None = None) -> float:
    """The planner's mixing weight: the largest of FLOORS whose predicted variance is within
    FLOOR_TOLERANCE of the least (a flat uncertainty gains nothing from following it, and a
    larger floor protects against an uncertainty that is wrong). `counts`: design_shares'."""
    v = np.asarray(variance, dtype=float)
    if not v.sum():
        return 1.0
    costs = [_over_traces(v / design_shares(v, tau, counts), counts) for tau in FLOORS]
    best = min(costs)
    return max(
        tau for tau, cost in zip(FLOORS, costs, strict=True) if cost <= best * FLOOR_TOLERANCE
    )


@dataclass(frozen=True)
class Sample:
    """Drawn traces along the last axis (undrawn ones may be carried with batch 0).

    batch: the draw a trace came in (1, 2, ..; 0: not drawn); pi: its probability in that draw,
    times its draw-and-stratum's share labelled (missing labels taken as missing at random
    there); labelled: has gold; response: that share (1 where every drawn trace is labelled);
    shares: each draw's weight in the combination, fixed before it was drawn (its budget)."""

    batch: np.ndarray
    pi: np.ndarray
    labelled: np.ndarray
    response: np.ndarray
    shares: Sequence[float]


def _draw_totals(errors: np.ndarray, sample: Sample, draw: int) -> np.ndarray:
    """Draw `draw`'s estimate of sum (y - f): earlier labelled traces exactly (imputed within
    their cell when some are unlabelled), this draw's by 1 / pi."""
    labelled = sample.labelled & (sample.batch > 0)
    before = labelled & (sample.batch < draw)
    now = labelled & (sample.batch == draw)
    exact = np.where(before, errors / np.where(before, sample.response, 1.0), 0.0)
    weighted = np.where(now, errors / np.where(now, sample.pi, 1.0), 0.0)
    return (exact + weighted).sum(axis=-1)


def _draw_variance(
    residual: np.ndarray, sample: Sample, draw: int, pseudo: np.ndarray
) -> np.ndarray:
    """Poisson sampling's variance estimate of the draw's weighted sum, at least that of
    PSEUDO_COUNT pseudo-traces of each residual in `pseudo` at the draw's typical probability
    (the harmonic mean of its pi): a draw whose labels all agree with the judge does not
    prove the judge never errs (as stats.ppi.rectifier_floor)."""
    now = sample.labelled & (sample.batch == draw)
    pi = np.where(now, sample.pi, 1.0)
    found = np.where(now, (1 - pi) * residual**2 / pi**2, 0.0).sum(axis=-1)
    count = now.sum(axis=-1)
    typical = count / np.where(now, 1 / pi, 0.0).sum(axis=-1).clip(min=1e-300)
    floor = PSEUDO_COUNT * (1 - typical) * (pseudo**2).sum(axis=0) / typical.clip(min=1e-300) ** 2
    return found + np.where(count > 0, floor, 0.0)


def active_ratio(
    judge_totals: tuple[np.ndarray, np.ndarray],
    errors: tuple[np.ndarray, np.ndarray],
    sample: Sample,
    judged: bool = True,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rate, low, high, standard error) of sum y_num / sum y_den.

    judge_totals: the judge's f_num and f_den summed over the slice's frame traces (zeros: the
    weighted human rate, a Hajek ratio); errors: y - f per trace for the numerator and the
    denominator (anything where unlabelled); judged: False for the human rate (f = 0), whose
    pseudo-traces are a unit labelled 1 and one labelled 0 (the judge's: a miss and a false
    alarm). The variance is Poisson sampling's,
    sum (1 - pi) r^2 / pi^2 per draw on the linearised residual r = e_num - R e_den, and the
    draws' variances add with their weights squared (martingale differences)."""
    weights = np.asarray(sample.shares, dtype=float)
    weights = weights / weights.sum()
    totals = []
    for judge_total, error in zip(judge_totals, errors, strict=True):
        corrections = [_draw_totals(error, sample, b + 1) for b in range(len(weights))]
        totals.append(judge_total + sum(w * c for w, c in zip(weights, corrections, strict=True)))
    numerator, denominator = totals
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = numerator / denominator
        residual = errors[0] - np.expand_dims(rate, -1) * errors[1]
        pseudo = np.stack([np.ones_like(rate), -np.ones_like(rate)]) * np.sqrt(JUDGE_PSEUDO)
        if not judged:
            pseudo = np.stack([1 - rate, -rate])
        variance = sum(
            w**2 * _draw_variance(residual, sample, b + 1, pseudo) for b, w in enumerate(weights)
        )
        se = np.sqrt(variance) / np.abs(denominator)
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    return (
        np.clip(rate, 0.0, 1.0),
        np.clip(rate - z * se, 0.0, 1.0),
        np.clip(rate + z * se, 0.0, 1.0),
        se,
    )
