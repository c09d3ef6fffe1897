"""Ratings on a scale (issue 40): the reviewers' and the judge's statistics against published
values and independent packages (krippendorff, scikit-learn, statsmodels, scipy)."""

from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

from annotate.ratings.agreement import agreement_of
from annotate.ratings.calibration import judge_against_humans
from annotate.ratings.estimates import estimates_of
from annotate.stats import coefficients as stats
from annotate.stats.ordinal import icc_measure

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the example with missing
# values: 4 observers, 12 units; published alpha nominal .743, ordinal .815, interval .849.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
# Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges; Table 4 gives ICC(2,1) = .29.
SHROUT_FLEISS = [
    [9, 2, 5, 8],
    [6, 1, 3, 2],
    [8, 4, 6, 8],
    [7, 1, 2, 6],
    [10, 5, 6, 9],
    [6, 2, 4, 7],
]


@pytest.mark.parametrize(("level", "published"), [("ordinal", 0.815), ("interval", 0.849)])
def test_alpha_matches_krippendorffs_published_example(level, published):
    table = [list(unit) for unit in zip(*K2011, strict=True)]
    assert stats.krippendorff_alpha(table, level).value == pytest.approx(published, abs=5e-4)
    assert stats.krippendorff_measure(table, level).point().value == pytest.approx(
        published, abs=5e-4
    )


def test_icc_2_1_matches_shrout_and_fleiss_table_4():
    assert icc_measure(SHROUT_FLEISS).point().value == pytest.approx(0.29, abs=0.005)


def _planted(seed: int = 7, n: int = 60, bias: float = 0.6):
    """Two reviewers rate 60 responses 1-5 around a true quality, one harsher than the other;
    the judge rates the reviewers' mean plus a planted bias and noise."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, n)
    a = np.clip(truth + rng.choice([-1, 0, 0, 0, 1], n), 1, 5)
    b = np.clip(truth + rng.choice([-1, -1, 0, 0, 1], n), 1, 5)
    mean = (a + b) / 2
    judge = mean + bias + rng.normal(0, 0.5, n)
    traces = [f"t{i:02d}" for i in range(n)]
    strata = {t: ("billing" if i % 3 else "refunds") for i, t in enumerate(traces)}
    return traces, a, b, judge, strata


def _icc_from_statsmodels_anova(a: np.ndarray, b: np.ndarray) -> float:
    """ICC(2,1) from the two-way ANOVA's mean squares as statsmodels computes them."""
    import pandas as pd
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    n, k = len(a), 2
    frame = pd.DataFrame(
        {
            "score": np.r_[a, b],
            "unit": np.r_[np.arange(n), np.arange(n)],
            "rater": [0] * n + [1] * n,
        }
    )
    table = anova_lm(smf.ols("score ~ C(unit) + C(rater)", frame).fit())
    ms = table["sum_sq"] / table["df"]
    msr, msc, mse = ms["C(unit)"], ms["C(rater)"], ms["Residual"]
    return (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)


def test_two_reviewers_on_60_responses_equal_independent_computations():
    traces, a, b, _, strata = _planted()
    scores = {
        "ann": dict(zip(traces, a.tolist(), strict=True)),
        "bob": dict(zip(traces, b.tolist(), strict=True)),
    }
    found = agreement_of(scores, strata, seed=3, repetitions=300)
    data = np.vstack([a, b]).astype(float)
    for level in ("ordinal", "interval"):
        alpha = found[f"krippendorff_alpha_{level}"]
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert alpha["value"] == pytest.approx(expected, abs=1e-9)
        assert alpha["units"] == 60 and alpha["low"] < alpha["value"] < alpha["high"]
        assert "within 2 strata" in alpha["method"]
    (pair,) = found["weighted_kappa_quadratic"]
    assert pair["value"] == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"), abs=1e-9)
    assert pair["low"] < pair["value"] < pair["high"] and pair["units"] == 60
    icc = found["icc_2_1"]
    assert icc["value"] == pytest.approx(_icc_from_statsmodels_anova(a, b), abs=1e-9)
    assert icc["units"] == 60 and icc["low"] < icc["value"] < icc["high"]


def test_kappa_per_pair_for_three_reviewers_matches_scikit_learn():
    rng = np.random.default_rng(11)
    truth = rng.integers(1, 6, 40)
    raters = {name: np.clip(truth + rng.integers(-1, 2, 40), 1, 5) for name in ("a", "b", "c")}
    scores = {name: {f"t{i}": int(x) for i, x in enumerate(r)} for name, r in raters.items()}
    found = agreement_of(scores, {}, seed=0, repetitions=200)
    for pair, (x, y) in zip(
        found["weighted_kappa_quadratic"], itertools.combinations("abc", 2), strict=True
    ):
        assert (pair["a"], pair["b"]) == (x, y)
        expected = cohen_kappa_score(raters[x], raters[y], weights="quadratic")
        assert pair["value"] == pytest.approx(expected, abs=1e-9)


def test_judge_bias_interval_covers_the_planted_bias_and_the_rest_match():
    traces, a, b, judge, strata = _planted(bias=0.6)
    humans = dict(zip(traces, ((a + b) / 2).tolist(), strict=True))
    found = judge_against_humans(
        dict(zip(traces, judge.tolist(), strict=True)), humans, 4.0, strata, 5, 400
    )
    h = (a + b) / 2
    bias = found["mean_bias"]
    assert bias["value"] == pytest.approx(float(np.mean(judge - h)), abs=1e-9)
    assert bias["low"] < 0.6 < bias["high"] and bias["low"] > 0.3  # not calibrated: > 0
    mad = found["mean_absolute_difference"]
    assert mad["value"] == pytest.approx(float(np.mean(np.abs(judge - h))), abs=1e-9)
    rho = found["spearman_rho"]
    assert rho["value"] == pytest.approx(spearmanr(judge, h).statistic, abs=1e-9)
    assert rho["low"] < rho["value"] < rho["high"]
    # quadratic-weighted kappa on the scores' values: 2 cov / (var + var + squared mean gap)
    # (Cohen 1968), which holds for any values, not only 1..5
    cov = np.mean((judge - judge.mean()) * (h - h.mean()))
    expected = 2 * cov / (judge.var() + h.var() + (judge.mean() - h.mean()) ** 2)
    assert found["weighted_kappa_quadratic"]["value"] == pytest.approx(expected, abs=1e-9)
    assert found["readiness"]["ready"] is False  # correlates well, rates 0.6 too high


def test_unbiased_judge_bias_interval_covers_zero():
    traces, a, b, judge, strata = _planted(seed=9, bias=0.0)
    humans = dict(zip(traces, ((a + b) / 2).tolist(), strict=True))
    found = judge_against_humans(
        dict(zip(traces, judge.tolist(), strict=True)), humans, 4.0, strata, 5, 400
    )
    assert found["mean_bias"]["low"] < 0 < found["mean_bias"]["high"]


def test_design_weighted_mean_and_share_at_or_below_follow_the_weights():
    """Stratum x: 10 rated 2 with weight 9; stratum y: 10 rated 4 with weight 1. The weighted
    mean is (90 * 2 + 10 * 4) / 100 = 2.2 and the share at or below 2 is 0.9 (unweighted 3, 0.5)."""
    scores = {f"x{i}": 2.0 for i in range(10)} | {f"y{i}": 4.0 for i in range(10)}
    design = {t: (t[0], 9.0 if t[0] == "x" else 1.0) for t in scores}
    slices = {t: {"feature": "f" + t[0], "risk_category": None, "model": None} for t in scores}
    found = estimates_of(scores, design, slices, (1.0, 5.0), 2, seed=0, repetitions=200)
    overall = found["overall"]
    assert overall["mean"]["value"] == pytest.approx(2.2)
    assert overall["share_at_or_below"]["value"] == pytest.approx(0.9)
    assert found["feature"]["fx"]["mean"]["value"] == pytest.approx(2.0)
    assert found["feature"]["fy"]["share_at_or_below"]["value"] == pytest.approx(0.0)
