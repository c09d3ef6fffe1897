"""Do calibration_stats' 95% intervals cover the truth about 95% of the time? A simulation.

Population. Traces of a fixed number of claims. Each claim's true label is unsupported
(the positive class) with marginal probability PREVALENCE. Claims of one trace are
correlated through a per-trace propensity p_t ~ Beta(PREVALENCE * c, (1 - PREVALENCE) * c):
its mean is exactly PREVALENCE, so every claim's marginal P(truth = unsupported) is
PREVALENCE whatever c is; the intra-trace correlation of the truth is 1 / (c + 1).

Reviewers and gold. Three reviewers each flip the true label independently with their own
rate (REVIEWER_ERRORS); gold is their majority vote (what the app's gold amounts to when
reviewers agree or an adjudicator sides with the majority). Gold is wrong when at least two
reviewers flip, with probability m (_gold_flip_rate), the same for either true label.

Judge. Known sensitivity JUDGE_SENSITIVITY and specificity JUDGE_SPECIFICITY against the
TRUE label. To let the judge's errors cluster by trace (a hard trace trips it on several
claims) each trace draws its own sensitivity and specificity from Betas with those means
and concentration d, independently of p_t; the judge's outcome on two claims of one trace
with the same true label then correlates with 1 / (d + 1). Judge errors are independent of
reviewer errors given the truth.

Estimand. The app's intervals are for the judge's agreement with GOLD, not with the truth,
so the target is the population agreement of judge and gold:

    P(judge = j, gold = g) = sum over truth t of P(t) P(judge = j | t) P(gold = g | t)

from which sensitivity = P(u, u) / P(gold = u), specificity = P(s, s) / P(gold = s), and
Cohen's kappa = (p_o - p_e) / (1 - p_e) of that 2x2 table. Clustering leaves these values
unchanged: every claim has the same marginal joint distribution (the Beta means are the
stated rates and p_t is independent of the judge's per-trace rates), and with a fixed number
of claims per trace the pooled ratio estimators converge to the ratios of those marginals.
The tests check this too, on the confusion pooled over all simulated claims.

Tolerance. R simulations, each judged by calibration_stats with a different bootstrap
seed; a statistic's coverage is the share of runs whose [low, high] holds the population
value. With R = 1000 and a true coverage of 0.95 the Monte Carlo standard error is
sqrt(0.95 * 0.05 / 1000) = 0.0069. Every random number comes from seeded generators, so
the result is deterministic; the bands below are wide enough that another seed or a
change in the bootstrap's random stream would not flip them.

Finding (measured with this simulation, R = 2000, 600 claims per run): Wilson intervals for
sensitivity and specificity treat claims as independent. Clustering of the truth alone does
not hurt them (coverage 0.945-0.956), but clustering of the JUDGE's errors within a trace
does, and more so the more claims a trace has. With 150 traces x 4 claims, judge-error
correlation 0.11 gives specificity 0.925, 0.2 gives 0.893, 0.33 gives 0.864; with 60 traces
x 10 claims, 0.11 gives 0.864 and 0.2 gives 0.803 (sensitivity 0.843). A bootstrap over
traces for the same ratios stays at 0.92-0.95 in all of those cases, as does kappa's.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from annotate.calibration import Pair, calibration_stats

PREVALENCE = 0.3  # P(true label = unsupported) for every claim
REVIEWER_ERRORS = (0.02, 0.05, 0.08)  # each reviewer's chance of flipping the true label
JUDGE_SENSITIVITY = 0.85  # P(judge says unsupported | truly unsupported)
JUDGE_SPECIFICITY = 0.92  # P(judge says supported | truly supported)
STATISTICS = ("sensitivity", "specificity", "balanced_accuracy", "cohen_kappa")
RUNS = 1000
BOOTSTRAP_REPETITIONS = 400


def _gold_flip_rate(errors: tuple[float, float, float]) -> float:
    """P(the majority of three independent reviewers is wrong) = P(at least two flip)."""
    e1, e2, e3 = errors
    return e1 * e2 * (1 - e3) + e1 * (1 - e2) * e3 + (1 - e1) * e2 * e3 + e1 * e2 * e3


def population_values() -> dict[str, float]:
    """Judge-versus-gold agreement in the population, from the known rates alone."""
    m = _gold_flip_rate(REVIEWER_ERRORS)
    se, sp, pi = JUDGE_SENSITIVITY, JUDGE_SPECIFICITY, PREVALENCE
    # P(judge, gold) summed over the truth; u = unsupported, s = supported.
    uu = pi * se * (1 - m) + (1 - pi) * (1 - sp) * m
    us = pi * se * m + (1 - pi) * (1 - sp) * (1 - m)
    su = pi * (1 - se) * (1 - m) + (1 - pi) * sp * m
    ss = pi * (1 - se) * m + (1 - pi) * sp * (1 - m)
    gold_u, judge_u = uu + su, uu + us
    sensitivity, specificity = uu / gold_u, ss / (1 - gold_u)
    observed = uu + ss
    expected = judge_u * gold_u + (1 - judge_u) * (1 - gold_u)
    return {
        "sensitivity": sensitivity,
        "specificity": specificity,
        "balanced_accuracy": (sensitivity + specificity) / 2,
        "cohen_kappa": (observed - expected) / (1 - expected),
    }


def _beta(rng: np.random.Generator, mean: float, concentration: float | None, size: int):
    """Per-trace rates with the given mean; None means no clustering (every trace at the mean)."""
    if concentration is None:
        return np.full(size, mean)
    return rng.beta(mean * concentration, (1 - mean) * concentration, size)


def simulate(
    rng: np.random.Generator,
    traces: int,
    claims: int,
    truth_concentration: float | None,
    judge_concentration: float | None,
) -> list[Pair]:
    propensity = _beta(rng, PREVALENCE, truth_concentration, traces)[:, None]
    sensitivity = _beta(rng, JUDGE_SENSITIVITY, judge_concentration, traces)[:, None]
    specificity = _beta(rng, JUDGE_SPECIFICITY, judge_concentration, traces)[:, None]
    truth = rng.random((traces, claims)) < propensity
    flips = rng.random((3, traces, claims)) < np.array(REVIEWER_ERRORS)[:, None, None]
    gold = (truth ^ flips).sum(axis=0) >= 2
    draw = rng.random((traces, claims))
    judge = np.where(truth, draw < sensitivity, draw >= specificity)
    return [
        Pair(f"t{t:03d}", bool(judge[t, c]), bool(gold[t, c]), {})
        for t in range(traces)
        for c in range(claims)
    ]


def _covers(stat: dict[str, Any], truth: float) -> bool:
    return stat["low"] is not None and stat["low"] <= truth <= stat["high"]


def coverage(
    traces: int,
    claims: int,
    truth_concentration: float | None,
    judge_concentration: float | None,
    seed: int,
) -> tuple[dict[str, float], dict[str, int]]:
    """Each statistic's coverage over RUNS simulations, and the confusion pooled over them."""
    truth = population_values()
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(STATISTICS, 0)
    pooled = dict.fromkeys(("tp", "fp", "tn", "fn"), 0)
    for run in range(RUNS):
        pairs = simulate(rng, traces, claims, truth_concentration, judge_concentration)
        stats = calibration_stats(pairs, seed=run, repetitions=BOOTSTRAP_REPETITIONS)
        for name in STATISTICS:
            hits[name] += _covers(stats[name], truth[name])
        for cell in pooled:
            pooled[cell] += stats["confusion"][cell]
    return {name: hits[name] / RUNS for name in STATISTICS}, pooled


def _assert_pooled_matches_population(pooled: dict[str, int]) -> None:
    """600,000 simulated claims agree with the analytic values: the estimand is right."""
    tp, fp, tn, fn = pooled["tp"], pooled["fp"], pooled["tn"], pooled["fn"]
    n = tp + fp + tn + fn
    observed = (tp + tn) / n
    expected = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / n**2
    truth = population_values()
    assert tp / (tp + fn) == pytest.approx(truth["sensitivity"], abs=0.005)
    assert tn / (tn + fp) == pytest.approx(truth["specificity"], abs=0.003)
    assert (observed - expected) / (1 - expected) == pytest.approx(truth["cohen_kappa"], abs=0.005)


def test_population_values_follow_from_the_known_rates():
    # Majority of three is wrong iff at least two reviewers flip: enumerate all 8 patterns.
    brute = sum(
        math.prod(e if f else 1 - e for e, f in zip(REVIEWER_ERRORS, flips, strict=True))
        for flips in itertools.product((False, True), repeat=3)
        if sum(flips) >= 2
    )
    assert _gold_flip_rate(REVIEWER_ERRORS) == pytest.approx(brute) == pytest.approx(0.00644)
    values = population_values()
    # Gold errors pull the judge's apparent rates slightly below its true 0.85 / 0.92.
    assert values["sensitivity"] == pytest.approx(0.83853, abs=1e-5)
    assert values["specificity"] == pytest.approx(0.91787, abs=1e-5)
    assert values["cohen_kappa"] == pytest.approx(0.75048, abs=1e-5)


def test_intervals_cover_with_claims_clustered_by_trace():
    """150 traces x 4 claims, truth correlated 0.2 within a trace, judge errors 0.1.

    This is the clustering taken as realistic: hallucination-heavy traces (truth
    concentration 4, intra-trace correlation 1/5) and a judge that is somewhat worse on
    some traces than others (concentration 9, correlation 1/10). Measured here: Wilson
    sensitivity ~0.937, specificity ~0.925 (the independence assumption costs about two
    points at this level, see the module docstring); bootstrap balanced accuracy and kappa
    ~0.94. Tolerance [0.90, 0.99]: 0.90 sits more than 3 Monte Carlo standard errors
    (0.0083 at 0.925) below the lowest measured coverage, and 0.99 would catch intervals
    made needlessly wide.
    """
    covered, pooled = coverage(150, 4, truth_concentration=4, judge_concentration=9, seed=2024)
    _assert_pooled_matches_population(pooled)
    for name in STATISTICS:
        assert 0.90 <= covered[name] <= 0.99, (name, covered)


def test_wilson_covers_nominally_with_independent_claims():
    """With no clustering at all (every claim independent) Wilson is at its nominal 95%.

    Tolerance [0.93, 0.97] for sensitivity and specificity: about +-3 Monte Carlo standard
    errors (0.0069) around 0.95. The bootstrap statistics get the looser [0.90, 0.99]:
    a percentile bootstrap over 150 groups runs a little short (~0.94).
    """
    covered, pooled = coverage(150, 4, truth_concentration=None, judge_concentration=None, seed=7)
    _assert_pooled_matches_population(pooled)
    for name in ("sensitivity", "specificity"):
        assert 0.93 <= covered[name] <= 0.97, (name, covered)
    for name in ("balanced_accuracy", "cohen_kappa"):
        assert 0.90 <= covered[name] <= 0.99, (name, covered)


def test_readiness_bounds_hold_when_judge_errors_cluster():
    """60 traces x 10 claims, judge errors correlated 0.2 within a trace.

    Wilson assumes independent claims and is too narrow here (measured ~0.84 sensitivity,
    ~0.80 specificity against a nominal 0.95), so each rate also carries a bootstrap over
    traces, and readiness uses the lower of the two lower bounds. Checked: the trace
    bootstrap covers within [0.90, 0.99], Wilson does not reach 0.90 (the reason the
    bootstrap is there), and the readiness bound sits at or below the truth in at least
    94% of runs (one-sided nominal 97.5%; the percentile bootstrap over 60 traces runs a
    little short, measured ~0.96). 400 runs, fixed seeds: Monte Carlo SE ~0.01.
    """
    rng = np.random.default_rng(11)
    truth = population_values()
    runs = 400
    wilson = dict.fromkeys(("sensitivity", "specificity"), 0)
    traced, below = dict(wilson), dict(wilson)
    for run in range(runs):
        pairs = simulate(rng, 60, 10, 4, 4)
        stats = calibration_stats(pairs, seed=run, repetitions=BOOTSTRAP_REPETITIONS)
        for name in wilson:
            stat = stats[name]
            wilson[name] += _covers(stat, truth[name])
            traced[name] += _covers(stat["trace_bootstrap"], truth[name])
            below[name] += min(stat["low"], stat["trace_bootstrap"]["low"]) <= truth[name]
    for name in wilson:
        assert 0.90 <= traced[name] / runs <= 0.99, (name, traced)
        assert wilson[name] / runs < 0.90, (name, wilson)
        assert below[name] / runs >= 0.94, (name, below)
