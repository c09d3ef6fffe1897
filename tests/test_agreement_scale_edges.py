"""Coefficients at their edges: chance over the rubric's categories (the scale), intervals kept
inside each coefficient's range, balanced accuracy's interval from its two components, and
"too few to say" where a statistic's denominator is too small for an interval.

References: statsmodels' Randolph kappa, Gwet's (2014) AC1 formula written out here, the
coefficients' ranges, and simulation against a known truth.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa

from annotate.agreement.calibration import slice_table
from annotate.agreement.reliability import agreement_document
from annotate.stats import coefficients as stats
from annotate.stats.gold import Evidence
from annotate.stats.intervals import proportion
from annotate.stats.judge import Pair, calibration_stats

# 7 claims, 2 reviewers: 6 agree; nobody used the scale's third outcome, "excluded"
TABLE = [["supported"] * 2] * 4 + [["unsupported"] * 2] * 2 + [["supported", "unsupported"]]
SCALE = ["supported", "unsupported", "excluded"]
RUBRIC = {"supported": "supported", "contradicted": "unsupported", "not_a_claim": "excluded"}


def _counts(table: list[list[str]], categories: list[str]) -> np.ndarray:
    return np.array([[row.count(c) for c in categories] for row in table])


def _evidence() -> Evidence:
    label = {"supported": "supported", "unsupported": "contradicted"}
    votes = [
        {"trace_id": f"t{u}", "claim_index": 0, "reviewer": reviewer, "label": label[given],
         "error_type": None, "created_at": datetime(2026, 3, 2, 10, u)}
        for u, row in enumerate(TABLE)
        for reviewer, given in zip(("rita", "rolf"), row, strict=True)
    ]  # fmt: skip
    return Evidence("main", RUBRIC, votes, {}, {f"t{u}": [0] for u in range(len(TABLE))})


def test_brennan_prediger_counts_the_scales_categories_as_statsmodels_randolph_does():
    randolph = fleiss_kappa(_counts(TABLE, SCALE), method="randolph")
    assert randolph == pytest.approx(0.785714, abs=1e-6)
    assert stats.brennan_prediger(TABLE, scale=SCALE).value == pytest.approx(randolph, abs=1e-12)
    used = stats.brennan_prediger(TABLE)  # the variant over the categories used, named as such
    assert used.value == pytest.approx(0.714286, abs=1e-6)
    assert "2 categories used" in used.method and "not a scale's" in used.method


def test_the_agreement_document_takes_chance_over_the_rubrics_categories():
    document = agreement_document(_evidence(), "claim", "binary", repetitions=200)
    randolph = fleiss_kappa(_counts(TABLE, SCALE), method="randolph")
    assert document["brennan_prediger"]["value"] == pytest.approx(randolph, abs=1e-12)
    assert "the scale's 3 categories" in document["brennan_prediger"]["method"]
    assert "the scale's 3 categories" in document["gwet_ac1"]["method"]
    full = agreement_document(_evidence(), "claim", "full", repetitions=200)
    three = fleiss_kappa(_counts(TABLE, SCALE), method="randolph")  # the rubric has 3 labels
    assert full["brennan_prediger"]["value"] == pytest.approx(three, abs=1e-12)
    assert "(supported, contradicted, not_a_claim)" in full["brennan_prediger"]["method"]


def test_gwets_ac1_counts_the_scales_categories():
    """Gwet (2014) eq. 4.1: p_e = sum_k pi_k (1 - pi_k) / (q - 1), q the scale's categories."""
    shares = _counts(TABLE, SCALE).sum(axis=0) / (2 * len(TABLE))
    observed = 6 / 7
    expected = float((shares * (1 - shares)).sum()) / (len(SCALE) - 1)
    ac1 = stats.gwet_ac1(TABLE, scale=SCALE)
    assert ac1.value == pytest.approx((observed - expected) / (1 - expected), abs=1e-12)
    assert ac1.value == pytest.approx(0.814570, abs=1e-6)  # 0.735849 over the 2 used


@pytest.mark.parametrize("build", [stats.scott_measure, stats.cohen_measure])
def test_a_two_rater_coefficients_interval_stays_within_minus_one_and_one(build):
    """Six units, mostly disagreeing: Scott's pi's interval reached -1.01376."""
    a = ["s", "u", "s", "s", "u", "s"]
    b = ["u", "s", "u", "s", "u", "s"]
    found = stats.interval(build(a, b), list(range(6)), 1000, 0)
    assert found.low is not None and -1.0 <= found.low <= found.value <= found.high <= 1.0


def test_brennan_prediger_and_ac1_intervals_stay_above_their_least_value():
    """With chance 1/q (at most 1/q for AC1) neither can fall below -1 / (q - 1)."""
    table = [["s", "u"], ["u", "s"], ["s", "u"], ["u", "s"], ["s", "s"], ["u", "s"]]
    for build in (stats.brennan_prediger_measure, stats.gwet_measure):
        for scale, least in ((None, -1.0), (["s", "u", "x"], -0.5)):
            found = stats.interval(build(table, scale=scale), list(range(6)), 1000, 0)
            assert found.low is not None and found.low >= least - 1e-12


def _study(rng: np.random.Generator, n: int = 60) -> list[Pair]:
    """Judge sensitivity and specificity 0.92 (balanced accuracy 0.920); 20% unsupported
    gold: about 12 positives."""
    gold = rng.random(n) < 0.2
    judge = np.where(gold, rng.random(n) < 0.92, rng.random(n) > 0.92)
    return [
        Pair(f"t{i}", bool(j), bool(g)) for i, (j, g) in enumerate(zip(judge, gold, strict=True))
    ]


def _old_balanced_interval(pairs: list[Pair], seed: int) -> stats.Stat:
    """Balanced accuracy as it stood: a BCa bootstrap of the mean, no component bounds."""
    gold = np.array([p.gold_unsupported for p in pairs])
    judge = np.array([p.judge_unsupported for p in pairs])
    cells = np.column_stack([gold & judge, gold & ~judge, ~gold & ~judge, ~gold & judge])

    def value(s: np.ndarray) -> np.ndarray:
        sensitivity = stats.ratio(s[..., 0], s[..., 0] + s[..., 1])
        return (sensitivity + stats.ratio(s[..., 2], s[..., 2] + s[..., 3])) / 2

    measure = stats.Measure(cells.astype(float), value, len(pairs), floor=0.0)
    return stats.interval(measure, list(range(len(pairs))), 200, seed)


def test_balanced_accuracy_covers_the_truth_at_about_12_positives():
    """20,000 such studies: 94.0% covered (the bootstrap of the mean: 87%)."""
    rng = np.random.default_rng(12)
    covered, old, studies = 0, 0, 0
    for study in range(800):
        pairs = _study(rng)
        found = calibration_stats(pairs, seed=study, repetitions=20)["balanced_accuracy"]
        if found["low"] is None:  # too few to say: fewer than 5 of a gold class
            assert found["reason"].startswith("too few to say")
            continue
        studies += 1
        covered += found["low"] <= 0.92 <= found["high"]
        before = _old_balanced_interval(pairs, study) if study < 300 else None
        old += before is not None and before.low <= 0.92 <= before.high
        assert "MOVER" in found["method"]
    assert studies >= 780 and covered / studies >= 0.93
    assert old / 300 < 0.90


def test_balanced_accuracy_is_bounded_by_its_components_wilson_intervals():
    """Wilson's bounds of 11/12 and 45/48, then MOVER written out."""
    sens, spec = proportion(11, 12, "").as_json(), proportion(45, 48, "").as_json()
    pairs = (
        [Pair(f"p{i}", i < 11, True) for i in range(12)]
        + [Pair(f"n{i}", i >= 45, False) for i in range(48)]
    )  # fmt: skip
    found = calibration_stats(pairs, repetitions=20)["balanced_accuracy"]
    centre = (11 / 12 + 45 / 48) / 2
    low = centre - np.hypot(11 / 12 - sens["low"], 45 / 48 - spec["low"]) / 2
    assert found["value"] == pytest.approx(centre) and found["low"] == pytest.approx(low)


def test_a_small_slice_says_too_few_to_say_instead_of_a_vacuous_interval():
    pairs = [Pair(f"t{i}", i < 2, i < 3, {"feature": "qa"}) for i in range(25)]
    pairs += [Pair(f"u{i}", i < 10, i < 12, {"feature": "hr"}) for i in range(40)]
    rows = {r["slice"]["feature"]: r for r in slice_table(pairs, ["feature"], {}, 0, 200)}
    small = rows["qa"]["sensitivity"]
    assert small["value"] == pytest.approx(2 / 3) and small["low"] is None
    assert small["reason"] == "too few to say: 3 unsupported gold units (< 5)"
    assert rows["qa"]["cohen_kappa"]["low"] is None and rows["qa"]["specificity"]["low"]
    assert rows["hr"]["sensitivity"]["low"] is not None
