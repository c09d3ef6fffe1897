"""Active inference's intervals cover the truth; ignoring the probabilities does not.

Population: the rate simulations' strata (tests/test_rates_simulation.py: N = 6000, 3000, 800,
200 at 5%, 10%, 25%, 40%, reviewers' gold flipped as there), and a judge whose score s is
calibrated, s ~ Beta(r_h c, (1 - r_h) c) with c = CONCENTRATION, truth ~ Bernoulli(s), verdict
s > 1/2: its errors concentrate where its score is uncertain. Each study draws a new
population and an active sample (annotate.stats.active: sqrt(s(1 - s)) mixed with the floor
the planner picks, Poisson sampling); the estimand is that population's gold rate, overall and
in stratum 1 (3000 traces, the slice). Vectorised over studies.

STUDIES = 120: a 95% interval's coverage is then accepted at 0.95 - 3 Monte Carlo standard
errors (0.890); the estimator that ignores the weights covers under half the time, so the test
separates the two with room (tests/bench/bench_active_sampling.py runs 500 studies a budget).
Unbiasedness is checked exactly, by enumerating every Poisson sample of a small population, one
draw and two adaptive draws (a second draw's probabilities computed from the first's labels).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from test_rates_simulation import RATES, SIZES, gold_flip

from annotate.stats import active

CONCENTRATION = 1.0
STUDIES = 120
SLICE = 1  # stratum 1: 3000 traces at 10%


def population(rng: np.random.Generator, studies: int):
    """stratum (N,), gold, verdict and score (studies x N)."""
    stratum = np.repeat(np.arange(len(SIZES)), SIZES)
    rate = np.asarray(RATES)[stratum]
    shape = (studies, len(stratum))
    score = rng.beta(rate * CONCENTRATION, (1 - rate) * CONCENTRATION, shape)
    truth = rng.random(shape) < score
    gold = truth ^ (rng.random(shape) < gold_flip())
    return stratum, gold.astype(float), (score > 0.5).astype(float), score


def active_draw(rng: np.random.Generator, score: np.ndarray, budget: int):
    """Each study's probabilities (the planner's floor, from the first study) and draw."""
    variance = active.error_variance(score)
    floor = active.choose_floor(variance[0])
    pi = active.inclusion_probabilities(active.design_shares(variance, floor), budget)
    return pi, rng.random(pi.shape) < pi


def estimates(gold, verdict, pi, drawn, columns, judged: bool):
    """(rate, low, high) per study over `columns`, by active_ratio."""
    g, f, p, d = gold[:, columns], verdict[:, columns], pi[:, columns], drawn[:, columns]
    sample = active.Sample(d.astype(int), p, d, np.ones_like(p), [1.0])
    n = np.full(len(g), float(g.shape[1]))
    if judged:
        totals, errors = (f.sum(axis=1), n), (g - f, np.zeros_like(g))
    else:
        totals, errors = (np.zeros(len(g)), np.zeros(len(g))), (g, np.ones_like(g))
    rate, low, high, _ = active.active_ratio(totals, errors, sample, judged=judged)
    return rate, low, high, g.mean(axis=1)


def coverage(low, high, truth) -> float:
    return float(np.mean((low <= truth) & (truth <= high)))


ACCEPT = 0.95 - 3 * math.sqrt(0.95 * 0.05 / STUDIES)


@pytest.fixture(scope="module")
def studies():
    rng = np.random.default_rng(42)
    stratum, gold, verdict, score = population(rng, STUDIES)
    pi, drawn = active_draw(rng, score, 200)
    return stratum, gold, verdict, pi, drawn


@pytest.mark.parametrize("judged", [True, False], ids=["active_inference", "weighted_human"])
@pytest.mark.parametrize("where", ["overall", "slice"])
def test_active_intervals_cover_the_truth(studies, judged, where):
    stratum, gold, verdict, pi, drawn = studies
    columns = slice(None) if where == "overall" else stratum == SLICE
    _, low, high, truth = estimates(gold, verdict, pi, drawn, columns, judged)
    found = coverage(low, high, truth)
    print(f"{where} judged={judged}: coverage {found:.3f} over {STUDIES} (accepted {ACCEPT:.3f})")
    assert ACCEPT <= found < 1.0  # and not every interval: a vacuously wide one is no answer


def test_ignoring_the_probabilities_fails_the_same_check(studies):
    """The same harness, weights ignored: the plain mean of the labelled traces (and our own
    estimator fed one probability for all) is biased towards the uncertain, riskier traces."""
    stratum, gold, verdict, pi, drawn = studies
    truth = gold.mean(axis=1)
    m = drawn.sum(axis=1)
    plain = (gold * drawn).sum(axis=1) / m
    half = 1.96 * np.sqrt(plain * (1 - plain) / m)
    assert coverage(plain - half, plain + half, truth) < 0.5 < ACCEPT
    flat = np.broadcast_to(pi.mean(axis=1, keepdims=True), pi.shape)
    _, low, high, _ = estimates(gold, verdict, flat, drawn, slice(None), judged=False)
    assert coverage(low, high, truth) < ACCEPT
    assert float(np.mean(plain - truth)) > 0.1  # labelled traces: more uncertain, more often wrong


def _enumerate(pi: np.ndarray):
    """Every Poisson sample of len(pi) traces with its probability."""
    for drawn in itertools.product([False, True], repeat=len(pi)):
        mask = np.array(drawn, dtype=bool)
        yield mask, float(np.prod(np.where(mask, pi, 1 - pi)))


GOLD = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0])
JUDGE = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0])
PI = np.array([0.9, 0.2, 0.6, 0.3, 0.7, 0.5, 0.25])


def _one(mask, pi, judged=True, batch=None, shares=(1.0,)):
    batch = mask.astype(int) if batch is None else batch
    sample = active.Sample(batch, pi, batch > 0, np.ones_like(pi), list(shares))
    totals = (np.asarray(JUDGE.sum()), np.asarray(float(len(GOLD))))
    return active.active_ratio(totals, (GOLD - JUDGE, np.zeros_like(GOLD)), sample, judged)


def test_one_draw_is_exactly_unbiased_and_its_variance_estimate_too(monkeypatch):
    """Over all 2^7 samples: E[estimate] is the population rate, and E[se^2] the estimate's
    variance (Poisson sampling's Horvitz-Thompson variance estimator is unbiased) when the
    few-label floor is off. The rate is left unclipped by choosing a population where it is
    never outside [0, 1]."""
    monkeypatch.setattr(active, "JUDGE_PSEUDO", 0.0)
    mean = second = expected_var = 0.0
    for mask, p in _enumerate(PI):
        rate, _, _, se = _one(mask, PI)
        mean, second, expected_var = mean + p * rate, second + p * rate**2, expected_var + p * se**2
    assert mean == pytest.approx(GOLD.mean(), abs=1e-12)
    assert expected_var == pytest.approx(second - mean**2, abs=1e-12)


def test_two_adaptive_draws_are_exactly_unbiased():
    """Draw 2's probabilities follow draw 1's labels (higher where the judge erred in draw 1);
    combined 1:2 by budgets fixed in advance, the estimate's expectation is still the rate."""
    mean = 0.0
    for first, p1 in _enumerate(PI):
        erred = float(np.abs(GOLD - JUDGE)[first].mean()) if first.any() else 0.5
        pi2 = np.where(first, 0.0, 0.3 + 0.6 * erred * (JUDGE > 0))
        rest = np.flatnonzero(~first)
        for second, p2 in _enumerate(pi2[rest]):
            batch = first.astype(int)
            batch[rest[second]] = 2
            pi = np.where(batch == 2, pi2, PI)
            rate, *_ = _one(None, pi, batch=batch, shares=(1.0, 2.0))
            mean += p1 * p2 * rate
    assert mean == pytest.approx(GOLD.mean(), abs=1e-12)


def test_probabilities_keep_the_budget_the_cap_and_the_floor():
    rng = np.random.default_rng(3)
    variance = active.error_variance(rng.beta(0.3, 0.3, 2000))
    variance[:50] = 0.25  # a few very uncertain traces: capped at 1
    shares = active.design_shares(variance, 0.3)
    pi = active.inclusion_probabilities(shares, 600)
    assert pi.sum() == pytest.approx(600)
    assert pi.max() <= 1.0 and pi.min() >= 0.3 * 600 / 2000 - 1e-12
    assert np.all(np.diff(pi[np.argsort(variance)]) >= -1e-12)  # rises with the uncertainty


@pytest.mark.parametrize("seed", range(10))
def test_the_planner_on_entries_standing_for_several_traces_equals_it_on_the_traces(seed):
    """label_savings gives each frame row the traces it stands for: the floor, the shares and
    the labels needed are those of the variances repeated once per trace."""
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(2, 200))
    v = rng.choice([0.0, 0.02, 0.1, 0.25], rows) * rng.random(rows)
    counts = rng.integers(1, 400, rows)
    each = np.repeat(v, counts)
    floor = active.choose_floor(v, counts)
    assert floor == active.choose_floor(each)
    shares = active.design_shares(v, floor, counts)
    assert np.repeat(shares, counts) == pytest.approx(active.design_shares(each, floor), rel=1e-12)
    uniform = np.full(rows, 1.0 / counts.sum())
    for width in (0.02, 0.05, 0.1):
        for a, a_each in ((uniform, np.full(len(each), 1.0 / len(each))),
                          (shares, active.design_shares(each, floor))):  # fmt: skip
            assert active.labels_for_width(v, a, width, counts) == active.labels_for_width(
                each, a_each, width
            )
