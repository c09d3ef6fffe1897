"""Inter-rater statistics against published reference values and independent implementations."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotate.stats.coefficients import (
    bootstrap,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    percent_agreement,
    wilson_interval,
)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: nominal data,
# 4 observers, 12 units, missing values. Published nominal alpha = 0.743.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}

# Fleiss' kappa worked example (Wikipedia, "Fleiss' kappa"): 10 subjects, 14 raters,
# 5 categories; counts per category. Published: P-bar = 0.378, P-bar-e = 0.213, kappa = 0.210.
FLEISS_COUNTS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip


def units_from(coders: dict[str, list]) -> list[list]:
    return [list(unit) for unit in zip(*coders.values(), strict=True)]


def fleiss_table() -> list[list[int]]:
    return [[c for c, n in enumerate(row) for _ in range(n)] for row in FLEISS_COUNTS]


def test_krippendorff_alpha_matches_the_published_worked_example():
    stat = krippendorff_alpha(units_from(KRIPPENDORFF_2011))
    assert stat.value == pytest.approx(0.743, abs=0.0005)
    assert stat.units == 11  # unit 12 has one rating only: not pairable


def test_fleiss_kappa_matches_the_published_example_and_statsmodels():
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    stat = fleiss_kappa(fleiss_table())
    assert stat.value == pytest.approx(0.210, abs=0.0005)
    assert stat.value == pytest.approx(statsmodels_fleiss(FLEISS_COUNTS), abs=1e-12)
    assert percent_agreement(fleiss_table()).value == pytest.approx(0.378, abs=0.0005)


def test_cohen_kappa_matches_the_published_example_and_scikit_learn():
    from sklearn.metrics import cohen_kappa_score

    # Wikipedia, "Cohen's kappa": 50 grant proposals; yes/yes 20, yes/no 5, no/yes 10, no/no 15.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    stat = cohen_kappa(a, b)
    assert stat.value == pytest.approx(0.4, abs=1e-12)
    assert stat.value == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_gwet_ac1_two_raters_by_hand():
    # Same 2x2 table as Cohen's: pa = 0.7; pi_yes = (25/50 + 30/50) / 2 = 0.55;
    # pe = 2 * 0.55 * 0.45 / (2 - 1) = 0.495; AC1 = (0.7 - 0.495) / 0.505.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert gwet_ac1([list(p) for p in zip(a, b, strict=True)]).value == pytest.approx(0.205 / 0.505)


def test_wilson_interval_matches_newcombe_1998():
    # Newcombe (1998), Statistics in Medicine 17:857-872, table I: 81/263 -> 0.2553 to 0.3662.
    low, high = wilson_interval(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)


def test_one_category_is_undefined_with_a_reason_not_a_number():
    table = [["a", "a"], ["a", "a"], ["a", None]]
    for stat in (
        fleiss_kappa(table),
        krippendorff_alpha(table),
        gwet_ac1(table),
        cohen_kappa(*zip(*table, strict=True)),
    ):
        assert stat.value is None and "only one category" in stat.reason


labels = st.sampled_from(["supported", "contradicted", "not_in_context"])


@given(st.lists(st.lists(labels, min_size=3, max_size=3), min_size=4, max_size=30))
@settings(max_examples=100, deadline=None)
def test_identical_raters_give_one_and_relabelling_changes_nothing(rows):
    if len({label for row in rows for label in row}) < 2:
        return
    identical = [[row[0]] * 3 for row in rows]
    if len({row[0] for row in rows}) >= 2:
        for statistic in (fleiss_kappa, krippendorff_alpha, gwet_ac1):
            assert statistic(identical).value == pytest.approx(1.0)
    renamed = [
        [{"supported": "x", "contradicted": "y", "not_in_context": "z"}[v] for v in row]
        for row in rows
    ]
    for statistic in (percent_agreement, fleiss_kappa, krippendorff_alpha, gwet_ac1):
        before, after = statistic(rows).value, statistic(renamed).value
        assert (before is None and after is None) or before == pytest.approx(after)


def test_bootstrap_is_seeded_and_moves_groups_together():
    table = fleiss_table()
    groups = [i // 2 for i in range(len(table))]
    first = bootstrap(fleiss_kappa, table, groups, repetitions=300, seed=4)
    assert first == bootstrap(fleiss_kappa, table, groups, repetitions=300, seed=4)
    assert first.low < first.value < first.high
    assert "bootstrap over 5 groups" in first.method


def test_strata_of_one_trace_are_pooled_and_one_trace_gives_no_interval():
    from annotate.stats.coefficients import Measure, interval, ratio, resample_weights

    draws, member, strata = resample_weights(["t1", "t2", "t3", "t4"], 50, 0, ["a", "a", "b", "c"])
    assert strata == 2  # b and c, one trace each, resample together
    assert (draws[:, :2].sum(axis=1) == 2).all() and (draws[:, 2:].sum(axis=1) == 2).all()
    share = Measure(np.array([[1.0, 1.0], [1.0, 0.0]]), lambda s: ratio(s[..., 1], s[..., 0]), 2)
    stat = interval(share, ["t1", "t1"], 100, 0)
    assert stat.value == 0.5 and stat.low is None
    assert stat.reason == "one group per stratum: nothing to resample for an interval"


def test_the_bootstrap_defaults_are_1000_resamples_seed_0_at_95_percent():
    """Catches a default changed under the callers that rely on it (found by mutation testing)."""
    table = fleiss_table()
    groups = [i // 2 for i in range(len(table))]
    default = bootstrap(fleiss_kappa, table, groups)
    assert default.method.endswith("; BCa bootstrap over 5 groups, 1000 resamples, seed 0")
    assert default == bootstrap(fleiss_kappa, table, groups, 1000, 0, 0.95)
    assert default != bootstrap(fleiss_kappa, table, groups, 1000, 0, 0.9)
