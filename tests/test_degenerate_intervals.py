"""Intervals of chance-corrected coefficients on perfectly agreeing samples.

Every bootstrap resample of a perfectly agreeing sample agrees perfectly, so the bootstrap
alone gives [1, 1] whatever the population; readiness then passed "kappa lower bound >= 0.8"
on 25 units. A coefficient (p_o - p_e) / (1 - p_e) now has an interval never narrower than
the one Wilson's interval on its observed agreement p_o implies at the same n (each unit's
ratings after its first: the units, for two raters), chance agreement p_e held at its
observed value. The references below are computed here, from statsmodels' Wilson interval
and the marginals, not by annotate.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from annotate.agreement.calibration import readiness
from annotate.agreement.reliability import NOMINAL_STATS, PAIR_STATS, group_statistics
from annotate.stats import coefficients as stats
from annotate.stats.alpha import krippendorff_measure
from annotate.stats.intervals import wilson_interval
from annotate.stats.judge import Pair, calibration_stats

PERFECT = [["s", "s"]] * 20 + [["u", "u"]] * 5  # 25 units, two reviewers who always agree


def _implied(observed_hits: int, n: int, chance: float) -> tuple[float, float]:
    """(Wilson's bounds on p_o - p_e) / (1 - p_e), Wilson from statsmodels."""
    low, high = proportion_confint(observed_hits, n, alpha=0.05, method="wilson")
    return (low - chance) / (1 - chance), (high - chance) / (1 - chance)


@pytest.mark.parametrize("n", [1, 3, 7, 25, 263])
def test_wilson_bounds_are_exact_at_0_and_n(n):
    assert wilson_interval(0, n)[0] == 0.0
    assert wilson_interval(n, n)[1] == 1.0
    for hits in (0, n):
        expected = proportion_confint(hits, n, alpha=0.05, method="wilson")
        assert wilson_interval(hits, n) == pytest.approx(expected, abs=1e-12)


def test_judge_kappa_on_perfect_agreement_is_not_1_to_1_and_not_ready():
    pairs = [Pair(f"t{i}", g, g) for i, g in enumerate([True] * 8 + [False] * 17)]
    kappa = calibration_stats(pairs, seed=0, repetitions=1000)["cohen_kappa"]
    chance = (8 * 8 + 17 * 17) / 25**2  # judge and gold: 8 unsupported, 17 supported each
    low, _ = _implied(25, 25, chance)
    assert kappa["value"] == 1.0
    assert kappa["low"] < 1
    assert kappa["low"] == pytest.approx(low, abs=1e-9)  # about 0.694
    assert kappa["high"] == 1.0
    assert "Wilson" in kappa["method"]
    assert readiness({"cohen_kappa": kappa}, {"cohen_kappa": 0.8})["ready"] is False


def test_reviewers_alpha_on_perfect_agreement_reaches_wilsons_bound():
    # n = 25 units with two values; p_e from the 50 pairable values: 40 "s", 10 "u".
    chance = (40 * 39 + 10 * 9) / (50 * 49)
    low, _ = _implied(25, 25, chance)
    found = stats.bootstrap(stats.krippendorff_alpha, PERFECT, [f"t{i}" for i in range(25)])
    assert found.value == pytest.approx(1.0)
    assert found.low == pytest.approx(low, abs=1e-9)  # about 0.592
    assert found.high == 1.0
    # Units rated once are not pairable: they change neither n nor p_e.
    table = PERFECT + [["s", None]] * 5
    found = stats.bootstrap(stats.krippendorff_alpha, table, [f"t{i}" for i in range(30)])
    assert found.low == pytest.approx(low, abs=1e-9)


def test_with_three_raters_n_counts_each_units_ratings_after_its_first():
    """20 units rated alike by three reviewers: n = 20 x 2 = 40 chances to disagree, not the 20
    units (a unit's share of agreeing pairs is not one 0/1 trial) nor 60 pairs or values."""
    table = [["s", "s", "s"]] * 14 + [["u", "u", "u"]] * 6
    chance = (42 * 41 + 18 * 17) / (60 * 59)  # 60 pairable values: 42 "s", 18 "u"
    low, _ = _implied(40, 40, chance)
    found = stats.bootstrap(stats.krippendorff_alpha, table, [f"t{i}" for i in range(20)])
    assert found.low == pytest.approx(low, abs=1e-9)
    assert "n = 40" in str(found.method)
    fleiss = stats.bootstrap(stats.fleiss_kappa, table, list(range(20)))
    assert fleiss.low == pytest.approx(_implied(40, 40, 0.7**2 + 0.3**2)[0], abs=1e-9)


def _shares_chance(shares: dict[str, float]) -> dict[str, float]:
    """Each many-rater coefficient's chance agreement on PERFECT, from its marginals."""
    pi = np.array(list(shares.values()))
    return {
        "percent_agreement": 0.0,
        "krippendorff_alpha": (40 * 39 + 10 * 9) / (50 * 49),
        "fleiss_kappa": float((pi**2).sum()),
        "gwet_ac1": float((pi * (1 - pi)).sum()) / (len(pi) - 1),
        "brennan_prediger": 1 / len(pi),
        "conger_kappa": float((pi**2).sum()),  # both raters have the same shares
    }


def test_every_reviewer_coefficient_reaches_wilsons_bound_on_perfect_agreement():
    weights = stats.resample_weights(list(range(25)), 1000, 0)
    found = group_statistics(PERFECT, weights, 0, list(NOMINAL_STATS))
    chance = _shares_chance({"s": 0.8, "u": 0.2})
    for name in NOMINAL_STATS:
        low, _ = _implied(25, 25, chance[name])
        assert found[name]["low"] == pytest.approx(low, abs=1e-9), name
        assert found[name]["high"] == 1.0, name
        assert "Wilson" in found[name]["method"], name


@pytest.mark.parametrize("name", ["cohen_kappa", "scott_pi"])
def test_per_pair_coefficients_reach_wilsons_bound_on_perfect_agreement(name):
    a = [row[0] for row in PERFECT]
    b = [row[1] for row in PERFECT]
    weights = stats.resample_weights(list(range(25)), 1000, 0)
    found = stats.interval(PAIR_STATS[name](a, b), [], 0, 0, weights=weights)
    low, _ = _implied(25, 25, 0.8**2 + 0.2**2)
    assert found.low == pytest.approx(low, abs=1e-9)
    assert found.high == 1.0


def _random_table(rng: np.random.Generator, numeric: bool) -> list[list[Any]]:
    labels = [1, 2, 3, 4] if numeric else ["a", "b", "c"]
    table = rng.choice(labels, size=(40, 4)).astype(object)
    table[rng.random((40, 4)) < 0.25] = None
    return [[None if x is None else (int(x) if numeric else str(x)) for x in row] for row in table]


def _measures(table: list[list[Any]]) -> list[stats.Measure]:
    a, b = [row[0] for row in table], [row[1] for row in table]
    return [
        *(build(table) for build in NOMINAL_STATS.values()),
        krippendorff_measure(table, "ordinal"),
        krippendorff_measure(table, "interval"),
        stats.gwet_measure(table, "quadratic"),
        stats.fleiss_measure(table, "linear"),
        stats.conger_measure(table, "quadratic"),
        stats.cohen_measure(a, b, "linear"),
        stats.scott_measure(a, b),
    ]


@pytest.mark.parametrize("seed", range(5))
def test_each_measures_agreement_gives_its_value(seed):
    """The p_o and p_e a measure hands to the interval are its own: (p_o - p_e) / (1 - p_e)
    is its value, on the table and on resampled sums, and both lie in [0, 1]."""
    rng = np.random.default_rng(seed)
    table = _random_table(rng, numeric=True)
    draws = rng.multinomial(40, np.full(40, 1 / 40), size=20).astype(float)
    for measure in _measures(table):
        assert measure.agreement is not None
        sums = np.vstack([measure.features.sum(axis=0), draws @ measure.features])
        observed, expected, exact = measure.agreement(sums)
        value = measure.value(sums)
        ok = ~np.isnan(value)
        assert ok.any()
        implied = (observed[ok] - expected[ok]) / (1 - expected[ok])
        np.testing.assert_allclose(implied, value[ok], rtol=1e-9, atol=1e-12)
        assert ((observed[ok] >= -1e-12) & (observed[ok] <= 1 + 1e-12)).all()
        assert ((expected[ok] >= -1e-12) & (expected[ok] < 1)).all()
        assert ((exact[ok] >= -1e-12) & (exact[ok] <= observed[ok] + 1e-12)).all()


def _exact_share(a: list[Any], b: list[Any]) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def test_weights_put_the_wilson_bound_on_the_exact_agreement():
    """Part credit is not a coin toss: Wilson's bounds go on the exact share x, and the
    weighted agreement p_o = x + (1 - x) c follows with c held. On perfect agreement c = 0."""
    a = [1, 2, 3, 4, 5, 3, 2, 4, 5, 1] * 3
    b = [1, 2, 4, 4, 5, 2, 2, 5, 4, 1] * 3
    measure = stats.cohen_measure(a, b, "quadratic")
    observed, chance, exact = (float(v) for v in measure.agreement(measure.features.sum(0)))
    assert exact == pytest.approx(_exact_share(a, b)) == pytest.approx(0.6)
    credit = (observed - exact) / (1 - exact)
    low, high = proportion_confint(18, 30, alpha=0.05, method="wilson")
    bound = [(credit + x * (1 - credit) - chance) / (1 - chance) for x in (low, high)]
    found = stats.interval(measure, list(range(30)), 500, seed=1)
    assert found.low <= bound[0] and found.high >= bound[1]
    assert found.low > 0.8  # Wilson's on p_o = 0.975 itself would give 0.41
    perfect = stats.interval(stats.cohen_measure(a, a, "quadratic"), list(range(30)), 500, 1)
    # Shares 0.2 each of 1..5; quadratic weights 1 - ((k - l) / 4)^2 sum to 25 - 100 / 16.
    chance = 0.04 * (25 - 100 / 16)
    assert perfect.low == pytest.approx(_implied(30, 30, chance)[0], abs=1e-9)
    assert perfect.high == 1.0


def test_the_wilson_bound_only_widens_the_bootstrap():
    rng = np.random.default_rng(7)
    for _ in range(5):
        table = _random_table(rng, numeric=False)
        weights = stats.resample_weights(list(range(40)), 300, 1)
        for measure in _measures(table)[:6]:
            plain = stats.Measure(measure.features, measure.value, measure.units, floor=-np.inf)
            boot = stats.interval(plain, [], 0, 1, weights=weights)
            both = stats.interval(measure, [], 0, 1, weights=weights)
            assert both.low is not None and boot.low is not None
            assert both.low <= boot.low + 1e-12
            assert both.high >= boot.high - 1e-12


RUNS = 400


def test_judge_kappa_interval_covers_at_25_units():
    """The QA repro: prevalence 0.3, judge sensitivity = specificity = 0.95, 25 units, one a
    trace. True kappa from the cell probabilities (0.883). Bootstrap alone: 0.705 coverage,
    112 of 400 intervals [1, 1]. Tolerance 0.929 (README: 3 Monte Carlo standard errors at
    1,000 studies; at 400 that bound would be 0.917), at most 0.995 as for the per-pair
    coefficients in tests/test_coverage_simulation.py. Measured 0.983 (200 resamples)."""
    prevalence, sensitivity, specificity, n = 0.3, 0.95, 0.95, 25
    tp, fn = prevalence * sensitivity, prevalence * (1 - sensitivity)
    tn, fp = (1 - prevalence) * specificity, (1 - prevalence) * (1 - specificity)
    observed = tp + tn
    chance = (tp + fn) * (tp + fp) + (tn + fp) * (tn + fn)
    truth = (observed - chance) / (1 - chance)
    assert truth == pytest.approx(0.8831, abs=1e-4)
    rng = np.random.default_rng(1)
    covered = defined = collapsed = 0
    started = time.perf_counter()
    for run in range(RUNS):
        gold = rng.random(n) < prevalence
        judge = np.where(gold, rng.random(n) < sensitivity, rng.random(n) > specificity)
        pairs = [Pair(f"t{i}", bool(judge[i]), bool(gold[i])) for i in range(n)]
        kappa = calibration_stats(pairs, seed=run, repetitions=200)["cohen_kappa"]
        if kappa.get("low") is None:
            continue
        defined += 1
        covered += kappa["low"] <= truth <= kappa["high"]
        collapsed += kappa["low"] == kappa["high"]
    elapsed = time.perf_counter() - started
    print(f"\nkappa at 25 units: coverage {covered}/{defined} = {covered / defined:.3f}")
    assert defined >= 0.9 * RUNS
    assert collapsed == 0
    assert 0.95 - 3 * math.sqrt(0.95 * 0.05 / 1000) <= covered / defined <= 0.995  # 0.929
    assert elapsed < 20


def test_agreement_with_others_on_perfect_agreement_reaches_wilsons_bound():
    """Catches a reviewer who agreed with the others on all 25 units shown [1.0, 1.0]."""
    from annotate.agreement.reliability import _agreement_with_others
    from annotate.stats.intervals import interval

    units = [(f"t{i}", 0) for i in range(25)]
    labels = {r: {u: "supported" if i % 3 else "unsupported" for i, u in enumerate(units)}
              for r in ("ann", "bob")}  # fmt: skip
    measure, traces = _agreement_with_others(labels, "ann")
    found = interval(measure, traces, repetitions=200, seed=0)
    want = proportion_confint(25, 25, method="wilson")[0]
    assert found.value == 1.0 and found.low == pytest.approx(want) and found.high == 1.0
