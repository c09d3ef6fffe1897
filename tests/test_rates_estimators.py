"""The rate estimators against independent references: ppi-python's own functions, a
hand-computed Rogan-Gladen, a hand-computed Horvitz-Thompson ratio, the threshold states."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from annotate.stats import rates as est
from annotate.stats.intervals import resample_weights


def fixed_example():
    rng = np.random.default_rng(42)
    gold = (rng.random(80) < 0.2).astype(float)
    judged = np.where(rng.random(80) < 0.85, gold, 1 - gold)
    unlabelled = (rng.random(2000) < 0.22).astype(float)
    return gold, judged, unlabelled


def test_one_stratum_ppi_equals_ppi_python():
    """Without the floor on the standard error (rectifier_floor) the numbers are ppi-python's."""
    gold, judged, unlabelled = fixed_example()
    rate, low, high = est.ppi_stratified(
        [est.StratumData(1.0, gold, judged, unlabelled)], floor=False
    )
    reference = float(np.ravel(ppi_mean_pointestimate(gold, judged, unlabelled))[0])
    ref_low, ref_high = (
        float(np.ravel(v)[0]) for v in ppi_mean_ci(gold, judged, unlabelled, alpha=0.05)
    )
    assert rate == pytest.approx(reference, abs=1e-12)
    assert (low, high) == pytest.approx((ref_low, ref_high), abs=1e-12)


def test_strata_combine_by_population_share_with_independent_variances():
    gold, judged, unlabelled = fixed_example()
    other = (gold[:40], judged[:40], unlabelled[:500])
    parts = [est.StratumData(3.0, gold, judged, unlabelled), est.StratumData(1.0, *other)]
    rate, low, high = est.ppi_stratified(parts, floor=False)
    points, ses = [], []
    for y, yhat, rest in ((gold, judged, unlabelled), other):
        points.append(float(np.ravel(ppi_mean_pointestimate(y, yhat, rest))[0]))
        lo, hi = (float(np.ravel(v)[0]) for v in ppi_mean_ci(y, yhat, rest, alpha=0.05))
        ses.append((hi - lo) / (2 * 1.959963984540054))
    expected = 0.75 * points[0] + 0.25 * points[1]
    half = 1.959963984540054 * math.sqrt((0.75 * ses[0]) ** 2 + (0.25 * ses[1]) ** 2)
    assert rate == pytest.approx(expected, abs=1e-12)
    assert (low, high) == pytest.approx((expected - half, expected + half), abs=1e-9)


def test_the_floor_keeps_a_stratum_that_never_disagreed_from_claiming_no_error():
    gold = np.array([0.0] * 38 + [1.0] * 2)
    data = est.StratumData(1.0, gold, gold.copy(), np.zeros(5000))
    _, se_raw = est.ppi_stratum(data, floor=False)
    point, se = est.ppi_stratum(data)
    assert se_raw == 0.0  # ppi-python: no disagreement seen, no rectifier variance
    quarter = 0.25 / 40.5
    assert se == pytest.approx(math.sqrt((2 * quarter) / 40))  # miss = alarm: no mean term
    assert point == pytest.approx(0.0)


def test_rogan_gladen_equals_the_hand_computed_example():
    # observed 20% with sensitivity 0.9 and specificity 0.95: (0.2 + 0.95 - 1) / (0.9 + 0.95 - 1)
    assert est.rogan_gladen(0.2, 0.9, 0.95) == pytest.approx(0.15 / 0.85)
    assert est.rogan_gladen(0.2, 0.9, 0.95) == pytest.approx(0.176470588, abs=1e-9)
    assert est.rogan_gladen(0.01, 0.9, 0.95) == 0.0  # clipped: below the false-alarm floor
    assert est.rogan_gladen(0.3, 0.5, 0.5) is None  # no better than chance


def test_weighted_ratio_is_the_horvitz_thompson_ratio():
    # stratum A: N=900, 3 traces sampled; B: N=100, 3 sampled. Per trace (unsupported, claims).
    traces = [(1, 2), (0, 3), (0, 1), (2, 2), (1, 2), (2, 4)]
    weights = [300, 300, 300, 100 / 3, 100 / 3, 100 / 3]
    features = np.array([[w * u, w * c] for (u, c), w in zip(traces, weights, strict=True)])
    draws, _, strata = resample_weights(list(range(6)), 500, 0, ["A"] * 3 + ["B"] * 3)
    rate, low, high = est.weighted_ratio(features, draws, np.arange(6), strata)
    by_hand = (300 * (1 + 0 + 0) + 100 / 3 * (2 + 1 + 2)) / (
        300 * (2 + 3 + 1) + 100 / 3 * (2 + 2 + 4)
    )
    assert rate == pytest.approx(by_hand)
    assert 0 <= low <= rate <= high <= 1


@pytest.mark.parametrize(
    ("low", "high", "state"),
    [(0.01, 0.09, "ok"), (0.05, 0.15, "warning"), (0.11, 0.2, "breach"), (None, None, "no number")],
)
def test_threshold_states(low, high, state):
    assert est.threshold_state(low, high, 0.10) == state


def test_drift_test_is_a_two_sided_z_test():
    z, p = est.drift_test((0.10, 0.08, 0.12), (0.20, 0.18, 0.22))
    se = 0.02 / 1.959963984540054
    assert z == pytest.approx(0.10 / math.sqrt(2 * se * se))
    assert p < 1e-6
    assert est.drift_test((0.1, 0.0, 0.2), (0.11, 0.01, 0.21))[1] > 0.5


def test_labels_needed_matches_the_textbook_sample_size():
    # p = 0.5, margin 0.05: n = 1.96^2 * 0.25 / 0.05^2 = 384.1 -> 385 (Cochran)
    assert est.labels_needed(0.25, 0.10) == 385
    # with a population of 1,000 the finite-population correction gives 278
    assert est.labels_needed(0.25, 0.10, 1000) == 278


def test_score_summary_percentiles_and_buckets():
    summary = est.score_summary([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], buckets=5)
    assert summary["p50"] == pytest.approx(0.55)
    assert summary["std"] == pytest.approx(np.std(np.arange(1, 11) / 10, ddof=1))
    assert sum(b["count"] for b in summary["buckets"]) == 10


def test_wilson_at_a_whole_count_is_wilson():
    from annotate.stats.intervals import wilson_interval

    assert est.wilson_at(7 / 40, 40) == pytest.approx(wilson_interval(7, 40))


def test_wilson_rate_is_statsmodels_wilson_and_says_why_when_empty():
    """Catches the rate's interval, count or method swapped, and a number for no units."""
    from statsmodels.stats.proportion import proportion_confint

    got = est.wilson_rate(7, 40, "labelled")
    low, high = proportion_confint(7, 40, method="wilson")
    assert (got.rate, got.n, got.method, got.reason) == (7 / 40, 40, "labelled", None)
    assert (got.low, got.high) == (pytest.approx(low), pytest.approx(high))
    empty = est.wilson_rate(0, 0, "labelled")
    assert (empty.rate, empty.low, empty.high, empty.n, empty.reason) == (
        None,
        None,
        None,
        0,
        "no units",
    )


def _rogan_gladen_by_hand(observed, cells, draws, level=0.95):
    """Rogan & Gladen (1978) on each resample of the calibration groups, one at a time."""
    values = []
    for draw in draws:
        tp, fn, tn, fp = (draw[:, None] * cells).sum(axis=0)
        if not (tp + fn) or not (tn + fp):
            continue
        sens, spec = tp / (tp + fn), tn / (tn + fp)
        if sens + spec - 1 > 0:
            values.append(min(1.0, max(0.0, (observed + spec - 1) / (sens + spec - 1))))
    tail = (1 - level) / 2
    return values, np.quantile(values, [tail, 1 - tail])


def test_rogan_gladen_interval_is_the_percentile_of_the_resampled_corrections():
    """Catches the cells read in another order, an unclipped or unfiltered resample, the wrong
    tails, or a point estimate off the pooled sensitivity and specificity."""
    rng = np.random.default_rng(3)
    highs = (4, 2, 6, 2)  # tp, fn, tn, fp per group: a judge better than chance
    cells = np.column_stack([rng.integers(0, h, 60) for h in highs]).astype(float)
    draws = rng.multinomial(60, np.full(60, 1 / 60), size=400).astype(float)
    observed = 0.18
    point, low, high = est.rogan_gladen_interval(observed, cells, draws)
    tp, fn, tn, fp = cells.sum(axis=0)
    assert point == pytest.approx(est.rogan_gladen(observed, tp / (tp + fn), tn / (tn + fp)))
    values, (want_low, want_high) = _rogan_gladen_by_hand(observed, cells, draws)
    assert len(values) == 400
    assert (low, high) == (pytest.approx(want_low), pytest.approx(want_high))
    _, (low90, high90) = _rogan_gladen_by_hand(observed, cells, draws, 0.9)
    assert est.rogan_gladen_interval(observed, cells, draws, 0.9)[1:] == (
        pytest.approx(low90),
        pytest.approx(high90),
    )


def test_rogan_gladen_interval_without_both_gold_classes_or_skill_is_none():
    """Catches a correction made with no missed or no clean units, or from mostly chance."""
    draws = np.ones((10, 2))
    no_positive = np.array([[0, 0, 5, 1], [0, 0, 4, 0]], dtype=float)
    assert est.rogan_gladen_interval(0.2, no_positive, draws)[0] is None
    chance = np.array([[1, 1, 1, 1], [1, 1, 1, 1]], dtype=float)  # sensitivity + specificity = 1
    point, low, high = est.rogan_gladen_interval(0.2, chance, draws)
    assert point is None and math.isnan(low) and math.isnan(high)
    # Skilled on the whole table, but most resamples draw only the unskilled group: no interval.
    mixed = np.array([[5, 0, 5, 0], [1, 1, 1, 1]], dtype=float)
    draws = np.array([[0, 2]] * 6 + [[2, 0]] * 4, dtype=float)
    point, low, high = est.rogan_gladen_interval(0.2, mixed, draws)
    assert point is not None and math.isnan(low) and math.isnan(high)


def test_ppi_unit_variance_is_the_variance_of_gold_minus_judge_on_a_population():
    """Catches a wrong missed or false-alarm term, or the classical bound not applied: the
    variance of Y - Yhat over a population with exactly these proportions, by numpy."""
    for rate, sens, spec in [(0.2, 0.9, 0.95), (0.5, 0.7, 0.6), (0.1, 0.99, 0.5), (0.3, 0.2, 0.3)]:
        n = 100_000
        positives = round(rate * n)
        y = np.r_[np.ones(positives), np.zeros(n - positives)]
        yhat = np.r_[
            np.ones(round(positives * sens)),
            np.zeros(positives - round(positives * sens)),
            np.zeros(round((n - positives) * spec)),
            np.ones(n - positives - round((n - positives) * spec)),
        ]
        want = min(np.var(y - yhat), rate * (1 - rate))
        assert est.ppi_unit_variance(rate, sens, spec) == pytest.approx(want, rel=1e-6)
    assert est.ppi_unit_variance(0.3, 0.2, 0.3) == pytest.approx(0.21)  # the classical bound


def test_a_plan_assumes_the_rate_nearest_one_half_that_wilson_allows():
    """Catches a plan rate outside the data's Wilson interval or not the most cautious one."""
    from statsmodels.stats.proportion import proportion_confint

    assert est.planning_rate(0, 0) == 0.5
    assert est.planning_rate(20, 40) == 0.5
    low, high = proportion_confint(2, 40, method="wilson")
    assert est.planning_rate(2, 40) == pytest.approx(high) and high < 0.5
    low, high = proportion_confint(38, 40, method="wilson")
    assert est.planning_rate(38, 40) == pytest.approx(low) and low > 0.5


def test_smoothed_adds_two_successes_and_two_failures():
    """Agresti & Coull's (1998) 'add two successes and two failures' centre."""
    assert est.smoothed(0, 0) == 0.5
    assert est.smoothed(0, 10) == pytest.approx(2 / 14)
    assert est.smoothed(10, 10) == pytest.approx(12 / 14)
