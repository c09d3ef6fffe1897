"""The rate estimators against independent references: ppi-python's own functions, a
hand-computed Rogan-Gladen, a hand-computed Horvitz-Thompson ratio, the threshold states."""

from __future__ import annotations

import math
import warnings
from decimal import Decimal

import numpy as np
import pytest
from bca_reference import bca_widened
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from annotate.stats import ppi
from annotate.stats import rates as est
from annotate.stats.resamples import resample_weights


def fixed_example():
    rng = np.random.default_rng(42)
    gold = (rng.random(80) < 0.2).astype(float)
    judged = np.where(rng.random(80) < 0.85, gold, 1 - gold)
    unlabelled = (rng.random(2000) < 0.22).astype(float)
    return gold, judged, unlabelled


def test_one_stratum_ppi_equals_ppi_python():
    """Without the floor on the standard error (rectifier_floor) the numbers are ppi-python's."""
    gold, judged, unlabelled = fixed_example()
    rate, low, high = ppi.ppi_stratified(
        [ppi.StratumData(1.0, gold, judged, unlabelled)], floor=False
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
    parts = [ppi.StratumData(3.0, gold, judged, unlabelled), ppi.StratumData(1.0, *other)]
    rate, low, high = ppi.ppi_stratified(parts, floor=False)
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
    data = ppi.StratumData(1.0, gold, gold.copy(), np.zeros(5000))
    _, se_raw = ppi.ppi_stratum(data, floor=False)
    point, se = ppi.ppi_stratum(data)
    assert se_raw == 0.0  # ppi-python: no disagreement seen, no rectifier variance
    one = 1 / 42  # tuned lambda 1 (clipped): a pseudo-miss and a pseudo-alarm of 42
    assert se == pytest.approx(math.sqrt((2 * one) / 40))  # miss = alarm: no mean term
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


def rogan_gladen_at(observed, cells, draws, level=0.95):
    """The interval when the raw rate is taken as known (it is the same in every resample)."""
    return est.rogan_gladen_interval(observed, np.full(len(draws), observed), cells, draws, level)


def test_rogan_gladen_interval_is_the_percentile_of_the_resampled_corrections():
    """Catches the cells read in another order, an unclipped or unfiltered resample, the wrong
    tails, or a point estimate off the pooled sensitivity and specificity."""
    rng = np.random.default_rng(3)
    highs = (4, 2, 6, 2)  # tp, fn, tn, fp per group: a judge better than chance
    cells = np.column_stack([rng.integers(0, h, 60) for h in highs]).astype(float)
    draws = rng.multinomial(60, np.full(60, 1 / 60), size=400).astype(float)
    observed = 0.18
    point, low, high = rogan_gladen_at(observed, cells, draws)
    tp, fn, tn, fp = cells.sum(axis=0)
    assert point == pytest.approx(est.rogan_gladen(observed, tp / (tp + fn), tn / (tn + fp)))
    values, (want_low, want_high) = _rogan_gladen_by_hand(observed, cells, draws)
    assert len(values) == 400
    assert (low, high) == (pytest.approx(want_low), pytest.approx(want_high))
    _, (low90, high90) = _rogan_gladen_by_hand(observed, cells, draws, 0.9)
    assert rogan_gladen_at(observed, cells, draws, 0.9)[1:] == (
        pytest.approx(low90),
        pytest.approx(high90),
    )


def test_rogan_gladen_interval_without_both_gold_classes_or_skill_is_none():
    """Catches a correction made with no missed or no clean units, or from mostly chance."""
    draws = np.ones((10, 2))
    no_positive = np.array([[0, 0, 5, 1], [0, 0, 4, 0]], dtype=float)
    assert rogan_gladen_at(0.2, no_positive, draws)[0] is None
    chance = np.array([[1, 1, 1, 1], [1, 1, 1, 1]], dtype=float)  # sensitivity + specificity = 1
    point, low, high = rogan_gladen_at(0.2, chance, draws)
    assert point is None and math.isnan(low) and math.isnan(high)
    # Skilled on the whole table, but most resamples draw only the unskilled group: no interval.
    mixed = np.array([[5, 0, 5, 0], [1, 1, 1, 1]], dtype=float)
    draws = np.array([[0, 2]] * 6 + [[2, 0]] * 4, dtype=float)
    point, low, high = rogan_gladen_at(0.2, mixed, draws)
    assert point is not None and math.isnan(low) and math.isnan(high)


def test_rogan_gladen_interval_at_its_edges():
    """Catches (mutation run) a sensitivity or specificity read over one unit as half, a
    difference for a sum in the no-class guard, the resampled corrections left above 1, an
    interval refused when exactly half the resamples are usable, and numpy's division
    warnings let out (a resample with no skill divides by zero)."""
    draws = np.ones((1, 1))
    one_positive = np.array([[1, 0, 9, 1]], dtype=float)  # sensitivity 1/1, specificity 0.9
    assert rogan_gladen_at(0.3, one_positive, draws)[0] == pytest.approx((0.3 + 0.9 - 1) / 0.9)
    one_negative = np.array([[8, 2, 1, 0]], dtype=float)  # sensitivity 0.8, specificity 1/1
    assert rogan_gladen_at(0.3, one_negative, draws)[0] == pytest.approx(0.3 / 0.8)
    as_many_missed = np.array([[2, 2, 9, 1]], dtype=float)  # tp == fn: still a correction
    assert rogan_gladen_at(0.3, as_many_missed, draws)[0] == pytest.approx(0.2 / 0.4)
    as_many_flagged = np.array([[9, 1, 2, 2]], dtype=float)  # tn == fp
    assert rogan_gladen_at(0.6, as_many_flagged, draws)[0] == pytest.approx((0.6 + 0.5 - 1) / 0.4)
    # The judge flags far more than its sensitivity explains: every correction is clipped to 1.
    point, low, high = rogan_gladen_at(0.95, np.array([[6, 4, 9, 1]], float), draws)
    assert (point, low, high) == (1.0, 1.0, 1.0)
    # Half the resamples draw the unskilled group alone (youden 0: a division by zero, and
    # 0/0 at observed 0.5): the other half still give an interval, without a numpy warning.
    groups = np.array([[5, 0, 5, 0], [1, 1, 1, 1]], dtype=float)
    draws = np.array([[0, 2]] * 5 + [[2, 0]] * 5, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for observed in (0.2, 0.5):
            point, low, high = rogan_gladen_at(observed, groups, draws)
            assert (low, high) == (pytest.approx(observed), pytest.approx(observed))


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


@pytest.mark.parametrize(
    ("low", "high", "state"),
    [
        (0.05, 0.10, "warning"),
        (0.10, 0.15, "warning"),
        (None, 0.05, "no number"),
        (0.2, None, "no number"),
    ],
)
def test_an_interval_that_touches_the_threshold_holds_it(low, high, state):
    """Catches `<=` for `<` at either end, and a half-missing interval read as a number."""
    assert est.threshold_state(low, high, 0.10) == state


def _bca_widened_by_hand(features, draws, members, strata, level=0.95):
    """BCa on the slice's resampled ratios, widened for few groups (tests/bca_reference.py)."""
    return bca_widened(features[members], draws[:, members], strata, level)


def test_the_weighted_ratios_interval_is_bca_widened_for_few_groups():
    """Catches a wrong jackknife (either sum, either column), the widening's freedom or its
    arithmetic, and a cap other than 1: BCa and the widening transcribed in the test."""
    rng = np.random.default_rng(11)
    groups = 14
    features = np.column_stack([rng.integers(0, 4, groups), rng.integers(4, 9, groups)]) * 1.0
    features[:, 0] *= rng.uniform(0.5, 2.0, groups)
    strata = ["A"] * 8 + ["B"] * 6
    draws, _, count = resample_weights(list(range(groups)), 2000, 5, strata)
    members = np.arange(groups)
    got = est.weighted_ratio(features, draws, members, count)
    want = _bca_widened_by_hand(features, draws, members, count)
    assert got == pytest.approx(want, rel=1e-9)
    few = np.array([[1.9, 2.0], [3.0, 3.0], [2.7, 3.0], [4.0, 4.0]])  # near 1, few groups
    draws, _, count = resample_weights(list(range(4)), 2000, 5)
    got = est.weighted_ratio(few, draws, np.arange(4), count)
    want = _bca_widened_by_hand(few, draws, np.arange(4), count)
    assert got[2] == 1.0 and got == pytest.approx(want)


def test_the_weighted_ratio_has_no_interval_without_freedom_or_defined_resamples():
    """Catches the guards: one group per stratum, or fewer than half the resamples defined, has
    no interval; two groups in one stratum (one degree of freedom) have one; no denominator at
    all is no rate, a denominator of 1 is one."""
    features = np.array([[1.0, 2.0], [0.0, 3.0], [2.0, 2.0]])
    draws = np.array([[1, 1, 1], [2, 0, 1], [0, 2, 1], [1, 2, 0]], dtype=float)
    rate, low, high = est.weighted_ratio(features, draws, np.arange(3), 3)  # one group a stratum
    assert rate == pytest.approx(3 / 7) and math.isnan(low) and math.isnan(high)
    _, low, high = est.weighted_ratio(features[:2], draws[:, :2], np.arange(2), 1)
    assert not math.isnan(low) and not math.isnan(high)
    assert est.weighted_ratio(np.zeros((3, 2)), draws, np.arange(3), 1) is None
    assert est.weighted_ratio(np.array([[0.5, 0.5], [0, 0.25], [0, 0.25]]), draws, np.arange(3), 1)
    # 5 groups, 6 resamples, the slice's denominator only in group 0: defined where it is drawn.
    # 12 groups, 6 resamples, the slice's denominator only in group 0: defined where drawn.
    sparse = np.vstack([[[1.0, 2.0]], np.zeros((11, 2))])
    drawn = [1, 1, 1, 0, 0, 0]  # half the resamples (not half the groups) define it: an interval
    draws = np.array([[d] + [1] * 11 for d in drawn], dtype=float)
    _, low, _ = est.weighted_ratio(sparse, draws, np.arange(12), 1)
    assert not math.isnan(low)
    draws = np.array([[d] + [1] * 11 for d in [1, 1, 0, 0, 0, 0]], dtype=float)  # a third: none
    _, low, _ = est.weighted_ratio(sparse, draws, np.arange(12), 1)
    assert math.isnan(low)


def test_wilson_at_one_unit_and_the_corrections_cap():
    """Catches n = 1 treated as no units, and Rogan-Gladen not capped at 1 when the observed
    rate is above the judge's sensitivity."""
    from statsmodels.stats.proportion import proportion_confint

    assert est.wilson_at(1.0, 1) == pytest.approx(proportion_confint(1, 1, method="wilson"))
    assert est.rogan_gladen(0.95, 0.9, 0.95) == 1.0


def test_ppi_at_another_level_is_ppi_pythons_at_that_level():
    """Catches the level turned into a wrong alpha: the stratified interval at 90% is
    ppi-python's 90% one on a single stratum, and its standard error the same positive number
    as behind the 95% one."""
    gold, judged, unlabelled = fixed_example()
    data = ppi.StratumData(1.0, gold, judged, unlabelled)
    _, low90, high90 = ppi.ppi_stratified([data], level=0.9, floor=False)
    low, high = (float(np.ravel(v)[0]) for v in ppi_mean_ci(gold, judged, unlabelled, alpha=0.1))
    assert (low90, high90) == pytest.approx((low, high), abs=1e-12)
    se = ppi.ppi_stratum(data, floor=False)[1]
    assert se > 0
    assert (high90 - low90) / (2 * 1.6448536269514722) == pytest.approx(se)


def test_the_floor_applies_by_default_and_counts_misses_alarms_and_the_unlabelled():
    """Catches the floor off by default, a miss or an alarm not counted, a wrong variance
    term, and the unlabelled part's variance dropped, added wrongly or invented when empty.
    By hand: se^2 = (m + a - (m - a)^2) / n + var(unlabelled) / N, with m and a the miss and
    false-alarm shares after a pseudo-count each (at lambda 1, where this data tunes it)."""
    gold = np.array([1.0] * 6 + [0.0] * 34)
    judged = np.array([0.0] * 3 + [1.0] * 3 + [1.0] * 1 + [0.0] * 33)  # 3 misses, 1 alarm
    unlabelled = np.array([1.0] * 30 + [0.0] * 170)
    m, a = 4 / 42, 2 / 42
    want = math.sqrt((m + a - (m - a) ** 2) / 40 + np.var(unlabelled) / 200)
    assert ppi.rectifier_floor(gold, judged, unlabelled) == pytest.approx(want)
    assert ppi.rectifier_floor(gold, judged, np.array([])) == pytest.approx(
        math.sqrt((m + a - (m - a) ** 2) / 40)
    )
    one_miss = np.array([1.0] * 4 + [0.0] * 36)
    data = ppi.StratumData(1.0, one_miss, np.r_[0.0, one_miss[1:]], np.zeros(2000))
    m, a = 2 / 42, 1 / 42  # one miss, no alarm: the floor binds over ppi-python's se
    want = math.sqrt((m + a - (m - a) ** 2) / 40)
    assert ppi.ppi_stratum(data)[1] == pytest.approx(want)
    assert want > ppi.ppi_stratum(data, floor=False)[1]
    agreeing = np.array([0.0] * 38 + [1.0] * 2)
    data = [ppi.StratumData(1.0, agreeing, agreeing.copy(), np.zeros(5000))]
    _, low, high = ppi.ppi_stratified(data)  # default: floored, so not a zero-width interval
    assert (low, high) == (0.0, pytest.approx(1.959963984540054 * math.sqrt(2 / 42 / 40)))


def test_ppi_keeps_a_rate_and_its_interval_within_zero_and_one():
    """Catches a bound left outside [0, 1]: on these 12 labels (the judge misses 6 of 9
    unsupported, gold and judge per unit below) with 363 of 371 unlabelled units flagged,
    ppi-python's estimate is 1.48 and the low bound was 1.20, above the high bound of 1."""
    gold = np.array([1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0], dtype=float)
    judged = np.array([0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0], dtype=float)
    unlabelled = np.array([1.0] * 363 + [0.0] * 8)
    assert float(np.ravel(ppi_mean_pointestimate(gold, judged, unlabelled))[0]) > 1.4
    data = [ppi.StratumData(1.0, gold, judged, unlabelled)]
    assert ppi.ppi_stratified(data, floor=False) == (1.0, 1.0, 1.0)
    flipped = [ppi.StratumData(1.0, 1 - gold, 1 - judged, 1 - unlabelled)]
    assert ppi.ppi_stratified(flipped, floor=False) == (0.0, 0.0, 0.0)


def test_drift_of_two_exact_rates_and_of_unequal_widths():
    """Catches the zero-spread cases mixed up, one window's width used twice, and a p that is
    not two-sided: p from scipy's normal survival function."""
    from scipy.stats import norm

    assert est.drift_test((0.1, 0.1, 0.1), (0.1, 0.1, 0.1)) == (0.0, 1.0)
    assert est.drift_test((0.1, 0.1, 0.1), (0.2, 0.2, 0.2)) == (math.inf, 0.0)
    z, p = est.drift_test((0.10, 0.09, 0.11), (0.14, 0.10, 0.18))
    se_before, se_after = 0.01 / 1.959963984540054, 0.04 / 1.959963984540054
    assert z == pytest.approx(0.04 / math.sqrt(se_before**2 + se_after**2))
    assert p == pytest.approx(2 * norm.sf(z))


def test_labels_needed_with_a_small_population_is_cochrans_correction():
    """Catches the finite-population correction's n0 - 1 miswritten: Cochran (1977, 4.2)."""
    for variance, width, population in [(0.01, 0.1, 20), (0.05, 0.1, 40), (0.25, 0.2, 30)]:
        n0 = (1.959963984540054 / (width / 2)) ** 2 * variance
        want = math.ceil(n0 / (1 + (n0 - 1) / population))
        assert est.labels_needed(variance, width, population) == want
    assert est.labels_needed(0.01, 0.1, 20) == 9
    assert est.labels_needed(0.0209, 0.1, 10) == 8  # 32.1 / (1 + 31.1 / 10) = 7.81


def test_score_summary_keys_defaults_and_edges():
    """Catches renamed keys, another percentile, another default bucket count, a spread for one
    score, and an empty summary that claims a count."""
    scores = np.linspace(0, 1, 101)
    summary = est.score_summary(scores)
    assert set(summary) == {"count", "p50", "p95", "std", "buckets"}
    assert summary["count"] == 101 and summary["p95"] == pytest.approx(np.percentile(scores, 95))
    assert len(summary["buckets"]) == 10
    assert set(summary["buckets"][0]) == {"low", "high", "count"}
    counts, edges = np.histogram(scores, bins=10)
    assert [b["count"] for b in summary["buckets"]] == counts.tolist()
    assert summary["buckets"][-1]["high"] == pytest.approx(edges[-1])
    assert est.score_summary([0.4])["std"] == 0.0
    assert est.score_summary([0.2, 0.4])["std"] == pytest.approx(np.std([0.2, 0.4], ddof=1))
    assert est.score_summary([]) == {"count": 0, "reason": "no scores"}
    assert len(est.score_summary(scores, buckets=4)["buckets"]) == 4
    exact = est.score_summary([Decimal("0.25"), Decimal("0.75")])  # as a DECIMAL column reads
    assert exact["p50"] == 0.5 and exact["buckets"][0]["count"] == 1


def test_windows_with_few_units_are_listed_but_not_tested_for_drift():
    """Catches 0 of 2 against 6 of 11 raised as drift (z-test p = 0.010) where Fisher's exact
    test gives p = 0.46: the Wilson interval of two units says nothing of a standard error."""
    from annotate.rates.trend import DRIFT_MIN_N, drift
    from annotate.stats.intervals import wilson_interval as wilson

    def row(week: str, hits: int, n: int) -> dict:
        low, high = wilson(hits, n)
        return {"estimator": "judge_raw", "slice": {"week": week}, "n": n,
                "rate": hits / n, "low": low, "high": high}  # fmt: skip

    small = drift([row("2026-02-23", 0, 2), row("2026-03-02", 6, 11)], "week")
    assert [(d["alert"], d["p"]) for d in small] == [(False, None)]
    assert "not tested" in small[0]["reason"]
    # the same shares over enough units in each window: tested, and a real change alerts
    big = drift([row("2026-02-23", 0, 40), row("2026-03-02", 22, 40)], "week")
    assert DRIFT_MIN_N <= 40 and big[0]["alert"] and big[0]["p"] < 0.001
