"""The coefficients added for issue 12 against published values and independent packages.

Published values: irrCAC (afergadis/irrCAC, Python port of Gwet's R package) prints them in
test/unit/irrCAC/raw/test_{fleiss,conger,bp,gwet}.py to three decimals for its raw data sets
(Gwet 2014, Handbook of Inter-Rater Reliability, 4th ed.); Krippendorff (2011), "Computing
Krippendorff's Alpha-Reliability", section C: nominal .743, ordinal .815, interval .849.
Independent packages: scikit-learn (weighted Cohen's kappa), statsmodels (Fleiss' kappa on
two complete raters is Scott's pi), krippendorff (ordinal and interval alpha).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_agreement_references import (
    RAW_4RATERS,
    RAW_5OBSERVERS,
    RAW_BEN_GERRY,
    RAW_G1G2,
    RAW_GENDER,
    statsmodels_fleiss,
)

from annotate.errors import UsageError
from annotate.stats.coefficients import (
    brennan_prediger,
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    interval,
    krippendorff_alpha,
    krippendorff_measure,
    pair_measure,
    scott_pi,
)
from annotate.stats.ratings import weight_matrix

FAST = settings(max_examples=60, deadline=None)

# (data set, Fleiss, Conger, Brennan-Prediger, Gwet AC1) as irrCAC's tests print them.
IRRCAC_UNWEIGHTED = [
    ("raw_4raters", RAW_4RATERS, 0.761, 0.763, 0.773, 0.775),
    ("raw_5observers", RAW_5OBSERVERS, 0.458, 0.469, 0.487, 0.497),
    ("raw_g1g2", RAW_G1G2, 0.657, 0.659, 0.679, 0.685),
    ("raw_gender", RAW_GENDER, 0.129, 0.166, 0.183, 0.208),
    ("raw_ben_gerry", RAW_BEN_GERRY, 0.649, 0.657, 0.659, 0.661),
]


@pytest.mark.parametrize(("name", "table", "fleiss", "conger", "bp", "ac1"), IRRCAC_UNWEIGHTED)
def test_unweighted_coefficients_match_irrcac_with_missing_ratings(
    name, table, fleiss, conger, bp, ac1
):
    assert round(fleiss_kappa(table).value, 3) == fleiss, name
    assert round(conger_kappa(table).value, 3) == conger, name
    assert round(brennan_prediger(table).value, 3) == bp, name
    assert round(gwet_ac1(table).value, 3) == ac1, name


@pytest.mark.parametrize(
    ("weights", "fleiss", "conger", "bp", "ac2"),
    [("linear", 0.818, 0.814, 0.848, 0.859), ("quadratic", 0.865, 0.858, 0.902, 0.914)],
)
def test_weighted_coefficients_match_irrcac_on_raw_4raters(weights, fleiss, conger, bp, ac2):
    assert round(fleiss_kappa(RAW_4RATERS, weights).value, 3) == fleiss
    assert round(conger_kappa(RAW_4RATERS, weights).value, 3) == conger
    assert round(brennan_prediger(RAW_4RATERS, weights).value, 3) == bp
    assert round(gwet_ac2(RAW_4RATERS, weights).value, 3) == ac2


def test_krippendorff_levels_match_the_2011_section_c_example():
    # raw_4raters is Krippendorff's section C table (one single rating moved; it pairs nothing).
    assert round(krippendorff_alpha(RAW_4RATERS, "nominal").value, 3) == 0.743
    assert round(krippendorff_alpha(RAW_4RATERS, "ordinal").value, 3) == 0.815
    assert round(krippendorff_alpha(RAW_4RATERS, "interval").value, 3) == 0.849


def test_ordinal_and_interval_alpha_need_numeric_ratings():
    stat = krippendorff_alpha([["a", "b"], ["a", "a"]], "ordinal")
    assert stat.value is None and "needs numeric ratings" in stat.reason


def score_tables(max_raters: int = 4):
    """Random 1-5 score tables with missing ratings (None), at least two raters."""
    cell = st.sampled_from([1, 2, 3, 4, 5, None])
    return st.integers(2, max_raters).flatmap(
        lambda r: st.lists(st.lists(cell, min_size=r, max_size=r), min_size=2, max_size=25)
    )


@given(score_tables(), st.sampled_from(["ordinal", "interval", "nominal"]))
@FAST
def test_alpha_as_unit_sums_equals_the_krippendorff_package(table, level):
    package, ours = krippendorff_alpha(table, level), krippendorff_measure(table, level).point()
    if package.value is None or ours.value is None:
        assert package.value is None and ours.value is None and package.reason
    else:
        assert ours.value == pytest.approx(package.value, abs=1e-6)


def pairs_strategy():
    labels = st.sampled_from([1, 2, 3, 4])
    return st.lists(st.tuples(labels, labels), min_size=3, max_size=40)


@given(pairs_strategy(), st.sampled_from(["linear", "quadratic"]))
@FAST
def test_weighted_cohen_kappa_equals_scikit_learn(pairs, weights):
    from sklearn.metrics import cohen_kappa_score

    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    used = sorted(set(a) | set(b))
    ours = cohen_kappa(a, b, weights)
    if len(used) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        assert ours.value is None and "one category" in ours.reason  # sklearn: nan or 0
        return
    if used != list(range(used[0], used[-1] + 1)):
        return  # scikit-learn weighs label positions, irrCAC and we weigh values: same if dense
    with np.errstate(divide="ignore", invalid="ignore"):
        reference = cohen_kappa_score(a, b, weights=weights)
    if np.isnan(reference):
        assert ours.value is None
    else:
        assert ours.value == pytest.approx(reference, abs=1e-9)


@given(pairs_strategy())
@FAST
def test_scott_pi_is_fleiss_kappa_of_two_complete_raters_by_statsmodels(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ours = scott_pi(a, b)
    if len(set(a) | set(b)) < 2:
        assert ours.value is None
        return
    reference = statsmodels_fleiss([[x, y] for x, y in pairs])
    if np.isnan(reference):
        assert ours.value is None
    else:
        assert ours.value == pytest.approx(reference, abs=1e-9)


@given(pairs_strategy())
@FAST
def test_conger_kappa_of_two_complete_raters_is_cohens_kappa_by_scikit_learn(pairs):
    from sklearn.metrics import cohen_kappa_score

    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ours = conger_kappa([[x, y] for x, y in pairs])
    if len(set(a) | set(b)) < 2:
        assert ours.value is None
        return
    with np.errstate(divide="ignore", invalid="ignore"):
        reference = cohen_kappa_score(a, b)
    if np.isnan(reference):
        assert ours.value is None
    else:
        assert ours.value == pytest.approx(reference, abs=1e-9)


def test_weighted_pair_interval_is_a_bca_bootstrap_that_holds_the_point():
    a = [1, 2, 3, 4, 5, 3, 2, 4, 5, 1] * 3
    b = [1, 2, 4, 4, 5, 2, 2, 5, 4, 1] * 3
    stat = interval(pair_measure(a, b, weights="quadratic"), list(range(30)), 500, seed=1)
    assert stat.low <= stat.value <= stat.high
    assert stat.method.startswith("BCa bootstrap over 30 groups")


def test_unknown_weights_are_a_usage_error():
    with pytest.raises(UsageError, match="weights must be one of identity, linear, quadratic"):
        weight_matrix([1, 2], "cubic")


def test_scores_written_as_text_are_ordinal_in_the_agreement_document():
    # A rubric whose labels are the scores "1".."5" gets the ordinal and weighted statistics.
    from annotate.agreement.reliability import SCORE_STATS, group_statistics
    from annotate.stats.coefficients import resample_weights

    text = [[None if v is None else str(v) for v in row] for row in RAW_4RATERS]
    weights = resample_weights(list(range(len(text))), 200, 0)
    found = group_statistics(text, weights, 0, list(SCORE_STATS))
    assert round(found["krippendorff_alpha_ordinal"]["value"], 3) == 0.815  # Krippendorff 2011
    assert round(found["krippendorff_alpha_interval"]["value"], 3) == 0.849
    assert round(found["gwet_ac2_quadratic"]["value"], 3) == 0.914  # irrCAC test_gwet.py
    assert round(found["gwet_ac2_linear"]["value"], 3) == 0.859
    labels = [[None if v is None else f"label-{v}" for v in row] for row in RAW_4RATERS]
    nominal = group_statistics(labels, weights, 0, list(SCORE_STATS))
    assert all(v["value"] is None and "needs numeric" in v["reason"] for v in nominal.values())


def test_ac2_weights_quadratically_unless_told():
    """Catches AC2's default weights changed (irrCAC's gwet.ac2 default is quadratic: 0.914)."""
    assert round(gwet_ac2(RAW_4RATERS).value, 3) == 0.914


def test_conger_says_why_it_is_undefined_and_counts_its_units():
    """Catches Conger's kappa undefined without a reason (or with another's), its unit count
    or units note lost."""
    from annotate.stats.coefficients import conger_measure

    one_category = conger_measure([["a", "a"], ["a", "a"]]).point()
    assert one_category.reason == "only one category was used: Conger's kappa is undefined"
    no_pair = conger_measure([["a", None], [None, "b"]]).point()
    assert no_pair.value is None and no_pair.reason == "no unit has two ratings"
    one_rater = conger_measure([["a"], ["b"]]).point()
    assert one_rater.value is None and one_rater.reason == "needs two or more raters"
    table = [["a", "a", None], ["a", "b", "b"], ["b", "b", "b"], ["a", None, None]]
    point = conger_measure(table).point()
    assert point.units == 3 and point.method.startswith("agreement over 3 units")


def test_conger_on_a_batch_of_resamples_is_conger_on_each():
    """Catches the chance term summed over the resamples as well as the categories: the batched
    values equal Conger's kappa of each resampled table, one at a time."""
    from annotate.stats.coefficients import conger_measure

    rng = np.random.default_rng(4)
    labels = ["a", "b", "c"]
    table = [[labels[k] if rng.random() > 0.2 else None for k in rng.integers(0, 3, 3)]
             for _ in range(30)]  # fmt: skip
    measure = conger_measure(table)
    draws = rng.multinomial(30, np.full(30, 1 / 30), size=5).astype(float)
    batched = measure.value(draws @ measure.features)
    for draw, got in zip(draws, batched, strict=True):
        resampled = [row for row, times in zip(table, draw, strict=True) for _ in range(int(times))]
        assert got == pytest.approx(conger_measure(resampled).point().value)


def test_pair_measure_on_resamples_is_scikit_learns_kappa_or_undefined_when_a_rater_is_constant():
    """Catches the resampled kappa's mask loosened or its axes swapped (mutation run): on every
    resample Cohen's kappa equals scikit-learn's on the resampled pairs, and is undefined (NaN,
    where scikit-learn says 0) when either rater used one category in that resample; Scott's pi
    is defined there (statsmodels' Fleiss kappa of the two). Either rater alone constant is
    drawn on purpose."""
    from sklearn.metrics import cohen_kappa_score

    a = ["x"] * 8 + ["y", "y"]  # rater a varies only on units 8 and 9
    b = ["x", "y"] * 3 + ["x", "x", "x", "y"]  # rater b varies on the first six
    cohen, scott = pair_measure(a, b, "cohen"), pair_measure(a, b, "scott")
    rng = np.random.default_rng(7)
    only_a_constant = np.r_[np.ones(6) * 2, np.zeros(4)]  # units 0-5 twice: a says x only
    only_b_constant = np.r_[2, np.zeros(7), 2, 0]  # units 0 and 8: a says x, y; b x only
    b_constant = np.r_[np.zeros(6), 2, 2, 0, 0]  # units 6-7: both raters x only
    draws = np.vstack(
        [only_a_constant, only_b_constant, b_constant, rng.multinomial(10, np.full(10, 0.1), 40)]
    ).astype(float)
    got_cohen = cohen.value(draws @ cohen.features)
    got_scott = scott.value(draws @ scott.features)
    for draw, kappa, pi in zip(draws, got_cohen, got_scott, strict=True):
        ra = [x for x, times in zip(a, draw, strict=True) for _ in range(int(times))]
        rb = [y for y, times in zip(b, draw, strict=True) for _ in range(int(times))]
        if len(set(ra)) < 2 or len(set(rb)) < 2:
            assert np.isnan(kappa), (draw, kappa)
        else:
            assert kappa == pytest.approx(cohen_kappa_score(ra, rb))
        if len(set(ra) | set(rb)) > 1:
            pairs = [[x, y] for x, y in zip(ra, rb, strict=True)]
            assert pi == pytest.approx(statsmodels_fleiss(pairs))  # Scott's pi, by statsmodels
    assert np.isnan(got_cohen[:3]).all()
    assert not np.isnan(got_scott[0])


def test_pair_measures_say_why_they_are_undefined():
    """Catches the reasons of Cohen's kappa and Scott's pi lost or naming another statistic."""
    none_shared = pair_measure(["x", None], [None, "y"], "cohen").point()
    assert none_shared.value is None and none_shared.reason == "the two raters share no units"
    assert pair_measure(["x", "x"], ["x", "x"], "cohen").point().reason == (
        "only one category was used: kappa is undefined"
    )
    assert pair_measure(["x", "x"], ["x", "x"], "scott").point().reason == (
        "only one category was used: Scott's pi is undefined"
    )
    constant = pair_measure(["x", "x", "x"], ["x", "y", "x"]).point()  # Cohen's, by default
    assert constant.reason == "one rater used one category only: kappa is undefined"
    assert pair_measure(["x", "x", "x"], ["x", "y", "x"], "scott").point().reason is None


def test_the_many_rater_coefficients_and_percent_agreement_say_why_they_are_undefined():
    """Catches the reasons of Fleiss' kappa, Gwet's AC1, Brennan-Prediger and percent agreement
    lost or naming another statistic (mutation run), and the identity weights not the default."""
    from annotate.stats.coefficients import family_measure, percent_agreement_measure

    one_category = [["a", "a"], ["a", "a", "a"]]
    no_pair = [["a", None], [None, "b"]]
    for chance, name in [
        ("fleiss", "kappa"),
        ("gwet", "AC1"),
        ("brennan_prediger", "Brennan-Prediger"),
    ]:
        assert family_measure(one_category, chance).point().reason == (
            f"only one category was used: {name} is undefined"
        )
        assert family_measure(no_pair, chance).point().reason == "no unit has two ratings"
        table = [["a", "b", "a"], ["b", "b", None], ["a", "a", "c"]]
        assert (
            family_measure(table, chance).point()
            == family_measure(table, chance, "identity").point()
        )
    assert percent_agreement_measure(no_pair).point().reason == "no unit has two ratings"
    assert percent_agreement_measure(one_category).point().value == 1.0


def test_weighted_percent_agreement_is_gwets_and_never_below_zero():
    """Catches the weights dropped from percent agreement, and its interval let below 0 by
    the few-groups widening. By hand (Gwet 2014, 2.2): ratings (1, 2), (1, 1), (3, 3) with
    quadratic weights 1 - d^2 / 4: unit 1 agrees 0.75, the others 1: (0.75 + 1 + 1) / 3."""
    from annotate.stats.coefficients import percent_agreement_measure

    table = [[1, 2], [1, 1], [3, 3]]
    assert percent_agreement_measure(table, "quadratic").point().value == pytest.approx(11 / 12)
    assert percent_agreement_measure(table).point().value == pytest.approx(2 / 3)
    low_agreement = [["a", "b"], ["a", "b"], ["b", "a"], ["a", "a"]]
    stat = interval(percent_agreement_measure(low_agreement), list(range(4)), 1000, seed=0)
    assert stat.value == 0.25 and stat.low == 0.0
