"""More published reference values and independent implementations for annotate.stats.coefficients.

Complements tests/test_agreement.py (Krippendorff 2011 section C, Wikipedia's Fleiss and
Cohen examples, Newcombe's Wilson intervals). Sources are cited next to each data set.
The regression tests near the end pin defects found while writing this file (undefined alpha
reported as NaN or a crash, Fleiss' modal count chosen by unit order, leaked warnings).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from annotate.stats.coefficients import (
    Stat,
    bootstrap,
    cohen_kappa,
    cohen_measure,
    fleiss_kappa,
    gwet_ac1,
    interval,
    krippendorff_alpha,
    krippendorff_measure,
    percent_agreement,
)

TABLE_STATISTICS: tuple[Callable[..., Stat], ...] = (
    percent_agreement,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def units_from(*raters: Sequence) -> list[list]:
    """Columns (one per rater) -> rows (one per unit)."""
    return [list(unit) for unit in zip(*raters, strict=True)]


def pairs_from(matrix: Sequence[Sequence[int]]) -> tuple[list[int], list[int]]:
    """A two-rater contingency table (rows rater A, columns rater B) -> the two label lists."""
    a: list[int] = []
    b: list[int] = []
    for i, row in enumerate(matrix):
        for j, n in enumerate(row):
            a += [i] * n
            b += [j] * n
    return a, b


def rated(row: Sequence) -> list:
    return [label for label in row if label is not None]


def pairable_categories(table: Sequence[Sequence]) -> set:
    """Categories used in units with two or more ratings (what alpha's coincidences see)."""
    return {label for row in table if len(rated(row)) >= 2 for label in rated(row)}


def all_categories(table: Sequence[Sequence]) -> set:
    return {label for row in table for label in rated(row)}


def count_matrix(table: Sequence[Sequence], categories: Sequence[Hashable]) -> np.ndarray:
    """units x categories counts, the input statsmodels' fleiss_kappa takes."""
    return np.array([[rated(row).count(c) for c in categories] for row in table], dtype=float)


def statsmodels_fleiss(table: Sequence[Sequence]) -> float:
    from statsmodels.stats.inter_rater import fleiss_kappa as reference

    categories = sorted(all_categories(table), key=repr)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(reference(count_matrix(table, categories)))


def same(before: float | None, after: float | None, tolerance: float = 1e-9) -> bool:
    if before is None or after is None:
        return before is None and after is None
    return math.isclose(before, after, rel_tol=0, abs_tol=tolerance)


# --- Fleiss (1971) ----------------------------------------------------------------------------

# Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychological
# Bulletin 76(5), 378-382: 30 patients, 6 psychiatrists each, 5 diagnoses. Published overall
# kappa = .430. Raw form as in R irr's `diagnoses` data set, copied into statsmodels'
# statsmodels/stats/tests/test_inter_rater.py (`diagnoses`; irr's kappam.fleiss = 0.4302445).
# Codes: 1 depression, 2 personality disorder, 3 schizophrenia, 4 neurosis, 5 other (irrCAC's
# distrib_6raters, the first 15 of these patients as counts, confirms the order).
FLEISS_1971_CODES = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]  # fmt: skip
DIAGNOSES = {
    1: "depression",
    2: "personality disorder",
    3: "schizophrenia",
    4: "neurosis",
    5: "other",
}


def fleiss_1971() -> list[list[str]]:
    return [[DIAGNOSES[code] for code in row] for row in FLEISS_1971_CODES]


def test_fleiss_kappa_matches_fleiss_1971_and_statsmodels():
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

    stat = fleiss_kappa(fleiss_1971())
    assert round(stat.value, 3) == 0.430  # Fleiss (1971)
    assert stat.value == pytest.approx(0.4302445, abs=5e-8)  # R irr, kappam.fleiss
    reference = statsmodels_fleiss_kappa(aggregate_raters(np.array(FLEISS_1971_CODES))[0])
    assert stat.value == pytest.approx(reference, abs=1e-12)
    assert stat.units == 30
    assert stat.method == (
        "agreement over 30 units with 2+ ratings; category shares over 30 rated units "
        "(0 with one rating)"
    )


# --- Gwet's AC1 and friends against irrCAC (Gwet's own formulas) --------------------------------

# irrCAC (Python port of Gwet's R package irrCAC), repository afergadis/irrCAC:
# irrCAC/datasets.py for the data, irrCAC/raw.py's module docstring for 5-decimal values on
# raw_4raters, test/unit/irrCAC/raw/test_{gwet,krippendorff,fleiss}.py for 3-decimal values.
# raw_4raters (Gwet 2014, Handbook of Inter-Rater Reliability, 4th ed., p. 120) is Krippendorff's
# 2011 section C table, except that unit 12's single rating sits with another rater.
RAW_4RATERS = units_from(
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, None],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
)
RAW_5OBSERVERS = units_from(  # Gwet (2014), after p. 125
    [1, 1, 2, None, 0, 0, 1, 1, 2, 2, None, 0, 1, 3, 1],
    [1, 1, 3, 0, 0, 0, 0, None, 2, 1, 1, 0, 2, 3, 1],
    [2, 0, 3, 0, 0, 0, 2, 2, 2, 1, 0, 0, 2, 2, 1],
    [None, 1, 3, None, None, None, None, 0, None, 1, 0, 0, 2, 2, None],
    [2, None, None, 0, 0, 0, 1, None, 2, None, None, None, None, 3, 1],
)
RAW_BEN_GERRY = units_from(
    ["a", "a", "b", "b", "d", "c", "c", "c", "e", "d", "d", "a"],
    ["b", "a", "b", "b", "b", "c", "c", "c", "e", None, "d", "d"],
)
RAW_G1G2 = units_from(
    ["a", "b", "c", "c", "b", "a", "d", "a", "b", None, None, None, "b", "b"],
    ["a", "b", "c", "c", "b", "b", "d", "a", "b", "e", None, None, "b", "a"],
    [None, "c", "c", "c", "b", "c", "d", "b", "b", "e", "a", "c", "c", "c"],
    ["a", "b", "c", "c", "b", "d", "d", "a", "b", "e", "a", None, "b", "b"],
)
RAW_GENDER = units_from(
    ["a", "a", "a", "a", "a", "b", "b", "b", "c", "a", "a", "a", "a", "a", "b"],
    ["a", "a", "a", "a", "b", "a", "b", "c", "c", "a", "a", "a", "a", "b", "a"],
    ["a", "b", "b", "c", "a", "a", "b", "b", "c", "a", "b", "b", "c", "a", "a"],
    ["c", "c", "c", "c", "a", "a", "b", "b", "c", "c", "c", "c", "c", "a", "a"],
)


def test_gwet_ac1_matches_irrcac_on_raw_4raters_to_five_decimals():
    # irrCAC raw.py docstring: AC1 0.77544, pa 0.81818, pe 0.19032 (pe = (pa - AC1) / (1 - AC1)).
    ac1 = gwet_ac1(RAW_4RATERS).value
    pa = percent_agreement(RAW_4RATERS).value
    assert round(ac1, 5) == 0.77544
    assert round(pa, 5) == 0.81818
    assert round((pa - ac1) / (1 - ac1), 5) == 0.19032
    # Same data pooled as Krippendorff (2011) section C: alpha 0.743 (irrCAC: 0.743 too).
    alpha = krippendorff_alpha(RAW_4RATERS).value
    assert round(alpha, 3) == 0.743
    assert krippendorff_measure(RAW_4RATERS).point().value == pytest.approx(alpha, abs=1e-9)


@pytest.mark.parametrize(
    ("name", "table", "pa", "ac1", "alpha"),
    [
        # (percent agreement, Gwet AC1, Krippendorff alpha) as irrCAC's tests print them.
        ("raw_4raters", RAW_4RATERS, 0.818, 0.775, 0.743),
        ("raw_5observers", RAW_5OBSERVERS, 0.616, 0.497, 0.481),
        ("raw_ben_gerry", RAW_BEN_GERRY, 0.727, 0.661, 0.665),
        ("raw_g1g2", RAW_G1G2, 0.744, 0.685, 0.632),
        ("raw_gender", RAW_GENDER, 0.456, 0.208, 0.143),
    ],
)
def test_missing_rating_statistics_match_irrcac(name, table, pa, ac1, alpha):
    assert round(percent_agreement(table).value, 3) == pa, name
    assert round(gwet_ac1(table).value, 3) == ac1, name
    assert round(krippendorff_alpha(table).value, 3) == alpha, name
    assert krippendorff_measure(table).point().value == pytest.approx(
        krippendorff_alpha(table).value, abs=1e-9
    )


def test_fleiss_kappa_matches_irrcac_when_every_unit_has_every_rating():
    # raw_gender is complete (4 raters x 15 units): Gwet's generalised kappa is Fleiss' own.
    stat = fleiss_kappa(RAW_GENDER)
    assert round(stat.value, 3) == 0.129  # irrCAC test_fleiss.py
    assert stat.value == pytest.approx(statsmodels_fleiss(RAW_GENDER), abs=1e-12)


def test_fleiss_kappa_with_missing_ratings_is_gwets_generalisation():
    # irrCAC raw.py docstring on raw_4raters: Fleiss' kappa 0.76117, pa 0.81818, pe 0.23872
    # (Gwet's generalised formula, every unit with 2+ ratings; shares over every rated unit).
    # Fleiss' kappa on the 8 complete units alone would be 0.6415.
    stat = fleiss_kappa(RAW_4RATERS)
    assert round(stat.value, 5) == 0.76117
    pa = percent_agreement(RAW_4RATERS).value
    assert round((pa - stat.value) / (1 - stat.value), 5) == 0.23872
    assert stat.units == 11
    assert "11 units with 2+ ratings" in stat.method and "(1 with one rating)" in stat.method


# --- Krippendorff (2011), sections A and B ------------------------------------------------------

# Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School for
# Communication, departmental paper 43. Section A: binary data, two observers (Meg, Owen), ten
# units, no missing data, published alpha = 0.095; coincidences o_01 = o_10 = 4, n_0 = 14, n_1 = 6,
# so alpha = 1 - 19 * 4 / 84 = 2 / 21. Section B: nominal data, Ben and Gerry, twelve units,
# published alpha = 0.692 = 155 / 224. Data as transcribed from the paper's worked examples in
# public re-implementations (e.g. a Python `Reliability` class printing "(A) binary data, two
# observers, no missing"); section A has the coincidences of Krippendorff (2004) 11.3.1, for
# which the R package jucor/krippendorff also tests 0.095.
MEG = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
OWEN = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
BEN = ["a", "a", "b", "b", "d", "c", "c", "c", "e", "d", "d", "a"]
GERRY = ["b", "a", "b", "b", "b", "c", "c", "c", "e", "d", "d", "d"]


@pytest.mark.parametrize(
    ("table", "published", "exact"),
    [
        (units_from(MEG, OWEN), 0.095, 2 / 21),
        (units_from(BEN, GERRY), 0.692, 155 / 224),
    ],
    ids=["section A binary", "section B nominal"],
)
def test_krippendorff_alpha_matches_the_2011_two_observer_examples(table, published, exact):
    package = krippendorff_alpha(table)
    ours = krippendorff_measure(table).point()
    assert round(package.value, 3) == published
    assert package.value == pytest.approx(exact, abs=1e-12)
    assert ours.value == pytest.approx(exact, abs=1e-12)
    assert package.units == ours.units == len(table)


def test_krippendorff_section_a_by_the_other_statistics():
    # Two raters, no missing data: Fleiss' kappa is Scott's pi, which alpha corrects by
    # (n - 1) / n: pi = 1 - 20 * 4 / 84 and alpha = 1 - 19 * 4 / 84.
    table = units_from(MEG, OWEN)
    assert fleiss_kappa(table).value == pytest.approx(1 - 20 * 4 / 84, abs=1e-12)
    assert percent_agreement(table).value == pytest.approx(0.6)


labels_with_gaps = st.sampled_from(["a", "b", "c", None])


@st.composite
def tables(draw, labels=labels_with_gaps, min_raters=2, max_raters=5, min_units=1, max_units=25):
    raters = draw(st.integers(min_raters, max_raters))
    row = st.lists(labels, min_size=raters, max_size=raters)
    return draw(st.lists(row, min_size=min_units, max_size=max_units))


@given(tables())
@FAST
def test_our_vectorised_alpha_equals_the_krippendorff_package(table):
    assume(len(pairable_categories(table)) >= 2)  # the rest: the undefined-alpha tests below
    package = krippendorff_alpha(table)
    ours = krippendorff_measure(table).point()
    assert package.value == pytest.approx(ours.value, abs=1e-9)
    assert package.units == ours.units


def test_alpha_is_undefined_not_nan_when_paired_ratings_use_one_category():
    table = [["a", "a"], ["a", "a"], ["b", None]]  # two categories, but 'b' is never paired
    assert krippendorff_measure(table).point().value is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        stat = krippendorff_alpha(table)
    assert stat.value is None and stat.reason


def test_alpha_is_undefined_not_a_crash_when_no_unit_has_two_ratings():
    stat = krippendorff_alpha([["a", None], [None, "b"]])
    assert stat.value is None and stat.reason


# --- Cohen's kappa ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matrix", "kappa", "ac1"),
    [
        # SAS PROC FREQ printout kept in statsmodels' test_inter_rater.py (table10): 0.4842.
        ([[0, 4, 1], [0, 8, 0], [0, 1, 5]], 0.4842, None),
        # Gwet (2014) via irrCAC's table_cont3x3abstractors (100 pregnancies, 2 abstractors) and
        # table_cont4x4diagnosis (223 patients, 2 methods); irrCAC test/unit/irrCAC/table/
        # test_cohen.py and test_gwet.py: kappa 0.796 / 0.432, AC1 0.849 / 0.456.
        ([[13, 0, 0], [0, 20, 7], [0, 4, 56]], 0.796, 0.849),
        ([[40, 4, 4, 17], [6, 25, 2, 13], [4, 1, 21, 12], [15, 5, 9, 45]], 0.432, 0.456),
    ],
    ids=["statsmodels SAS 3x3", "Gwet abstractors 3x3", "Gwet diagnosis 4x4"],
)
def test_cohen_kappa_and_two_rater_ac1_match_published_tables(matrix, kappa, ac1):
    from sklearn.metrics import cohen_kappa_score

    a, b = pairs_from(matrix)
    stat = cohen_kappa(a, b)
    decimals = len(str(kappa).split(".")[1])
    assert round(stat.value, decimals) == kappa
    assert stat.value == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert stat.units == sum(map(sum, matrix))
    if ac1 is not None:
        assert round(gwet_ac1(units_from(a, b)).value, 3) == ac1


@given(
    st.integers(2, 4).flatmap(
        lambda k: st.lists(
            st.tuples(st.sampled_from([*range(k), None]), st.sampled_from([*range(k), None])),
            min_size=1,
            max_size=40,
        )
    )
)
@settings(max_examples=100, deadline=None)
def test_cohen_kappa_equals_scikit_learn(pairs):
    from sklearn.metrics import cohen_kappa_score

    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    stat = cohen_kappa(a, b)
    complete = [(x, y) for x, y in pairs if x is not None and y is not None]
    if not complete:
        assert stat.value is None and "share no units" in stat.reason
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = cohen_kappa_score([x for x, _ in complete], [y for _, y in complete])
    assert stat.units == len(complete)
    if math.isnan(reference):  # one category between them
        assert stat.value is None and "one category" in stat.reason
    elif len({x for x, _ in complete}) < 2 or len({y for _, y in complete}) < 2:
        # scikit-learn says 0 when one rater is constant: 0 whatever the other does, so ours
        # is undefined with that reason (issue 12, "Undefined is not zero").
        assert reference == pytest.approx(0.0, abs=1e-12)
        assert stat.value is None and "one rater used one category only" in stat.reason
    else:
        assert stat.value == pytest.approx(reference, abs=1e-12)


# --- Fleiss' kappa against statsmodels on random tables ------------------------------------------


@given(tables(labels=st.sampled_from(["a", "b", "c", "d"]), max_raters=6, min_units=2))
@FAST
def test_fleiss_kappa_equals_statsmodels_on_complete_tables(table):
    stat = fleiss_kappa(table)
    assert stat.units == len(table)
    if len(all_categories(table)) < 2:
        assert stat.value is None and "one category" in stat.reason
    else:
        assert stat.value == pytest.approx(statsmodels_fleiss(table), abs=1e-12)
        assert "(0 with one rating)" in stat.method


def gwet_generalised_fleiss_by_loops(table: Sequence[Sequence]) -> float:
    """Gwet (2014), Handbook of Inter-Rater Reliability, eq. 2.26-2.28, term by term."""
    categories = all_categories(table)
    paired = [rated(row) for row in table if len(rated(row)) >= 2]
    rows = [rated(row) for row in table if rated(row)]
    pa = sum(
        sum(labels.count(k) * (labels.count(k) - 1) for k in categories)
        / (len(labels) * (len(labels) - 1))
        for labels in paired
    ) / len(paired)
    pi = {k: sum(labels.count(k) / len(labels) for labels in rows) / len(rows) for k in categories}
    pe = sum(p * p for p in pi.values())
    return (pa - pe) / (1 - pe)


@given(tables(labels=st.sampled_from(["a", "b", "c", None]), min_raters=3, max_raters=4))
@FAST
def test_fleiss_kappa_with_mixed_rating_counts_follows_gwets_formula_term_by_term(table):
    stat = fleiss_kappa(table)
    paired = [row for row in table if len(rated(row)) >= 2]
    assert stat.units == len(paired)
    if not paired:
        assert stat.value is None and "two ratings" in stat.reason
    elif len(all_categories(table)) < 2:
        assert stat.value is None and "one category" in stat.reason
    elif stat.value is not None:
        assert stat.value == pytest.approx(gwet_generalised_fleiss_by_loops(table), abs=1e-12)


def test_fleiss_kappa_on_a_mixed_table_names_the_units_it_used():
    table = [["a", "a", "b"], ["a", "a", "a"], ["b", "b", "b"], ["a", "b", None], ["b", None, None]]
    stat = fleiss_kappa(table)
    assert stat.units == 4
    assert stat.method == (
        "agreement over 4 units with 2+ ratings; category shares over 5 rated units "
        "(1 with one rating)"
    )
    assert stat.value == pytest.approx(gwet_generalised_fleiss_by_loops(table), abs=1e-12)


def test_fleiss_kappa_does_not_depend_on_the_order_of_units():
    # Two units with 2 ratings, two with 3: Counter.most_common picks whichever came first.
    table = [["a", "a", None], ["a", "b", None], ["a", "a", "b"], ["b", "b", "b"]]
    assert fleiss_kappa(table) == fleiss_kappa(table[::-1])


# --- Properties ---------------------------------------------------------------------------------


@given(
    st.integers(2, 5),
    st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 5)), min_size=2),
)
@FAST
def test_identical_raters_give_one_wherever_defined(raters, units):
    # Every rated label in a unit is the same; some ratings missing (bit i of `gaps` set).
    table = [
        [None if gaps >> i & 1 and i < raters - 1 else label for i in range(raters)]
        for label, gaps in units
    ]
    assume(len(pairable_categories(table)) >= 2)
    for statistic in (percent_agreement, gwet_ac1, krippendorff_alpha):
        assert statistic(table).value == pytest.approx(1.0), statistic.__name__
    assert krippendorff_measure(table).point().value == pytest.approx(1.0)
    fleiss = fleiss_kappa(table).value  # undefined if the modal units use one category
    assert fleiss is None or fleiss == pytest.approx(1.0)
    complete = [[label] * raters for label, _ in units]
    assert fleiss_kappa(complete).value == pytest.approx(1.0)
    cohen = cohen_kappa([row[0] for row in complete], [row[1] for row in complete])
    assert cohen.value == pytest.approx(1.0)


@given(
    tables(labels=st.sampled_from(["a", "b", "c", "d", None]), min_units=2),
    st.permutations(["zeta", 7, "alpha", ("t", 1)]),
    st.integers(1, 3),
)
@FAST
def test_renaming_categories_by_a_bijection_changes_nothing(table, names, group_size):
    assume(len(pairable_categories(table)) >= 2 or len(all_categories(table)) < 2)
    rename = dict(zip("abcd", names, strict=True))
    renamed = [[None if v is None else rename[v] for v in row] for row in table]
    groups = [u // group_size for u in range(len(table))]
    for statistic in TABLE_STATISTICS:
        before, after = statistic(table), statistic(renamed)
        assert same(before.value, after.value), statistic.__name__
        assert (before.units, before.reason) == (after.units, after.reason)
        before = bootstrap(statistic, table, groups, repetitions=200, seed=11)
        after = bootstrap(statistic, renamed, groups, repetitions=200, seed=11)
        assert same(before.low, after.low) and same(before.high, after.high), statistic.__name__
        assert before.reason == after.reason
    a, b = [row[0] for row in table], [row[1] for row in table]
    ra, rb = [row[0] for row in renamed], [row[1] for row in renamed]
    assert same(cohen_kappa(a, b).value, cohen_kappa(ra, rb).value)
    before = interval(cohen_measure(a, b), groups, repetitions=200, seed=11)
    after = interval(cohen_measure(ra, rb), groups, repetitions=200, seed=11)
    assert same(before.low, after.low) and same(before.high, after.high)


@given(tables(labels=st.sampled_from(["a", "b", "c", None])), st.randoms(use_true_random=False))
@FAST
def test_unit_order_and_unrated_units_change_nothing(table, random):
    assume(len(pairable_categories(table)) >= 2 or len(all_categories(table)) < 2)
    shuffled = [list(row) for row in table]
    random.shuffle(shuffled)
    padded = [*shuffled, [None] * len(table[0])]
    for statistic in (percent_agreement, fleiss_kappa, gwet_ac1, krippendorff_alpha):
        before = statistic(table)
        for other in (shuffled, padded):
            after = statistic(other)
            assert same(before.value, after.value), statistic.__name__
            assert before.units == after.units


@given(tables(labels=st.sampled_from(["x", None]), max_raters=4))
@FAST
def test_one_category_is_undefined_with_a_reason_never_a_number(table):
    assume(any(len(rated(row)) >= 2 for row in table))
    everyone_paired = all(len(rated(row)) >= 2 for row in table)
    stats = {
        "fleiss": fleiss_kappa(table),
        "gwet": gwet_ac1(table),
        "krippendorff": krippendorff_alpha(table),
        "krippendorff_measure": krippendorff_measure(table).point(),
        "cohen": cohen_kappa([row[0] for row in table], [row[1] for row in table]),
    }
    for name, stat in stats.items():
        if name == "cohen" and stat.units == 0:
            assert "share no units" in stat.reason
            continue
        assert stat.value is None and stat.reason, name
        if everyone_paired or name != "fleiss":
            assert "one category" in stat.reason, name
    # Percent agreement is not chance-corrected: one category is perfect, and defined.
    assert percent_agreement(table).value == 1.0
    groups = list(range(len(table)))
    for statistic in (fleiss_kappa, gwet_ac1, krippendorff_alpha):
        assert bootstrap(statistic, table, groups, repetitions=50).value is None


@given(tables(labels=st.sampled_from(["a", "b", "c", "d", None]), max_raters=6))
@settings(max_examples=100, deadline=None)
def test_percent_agreement_is_a_proportion(table):
    stat = percent_agreement(table)
    paired = sum(len(rated(row)) >= 2 for row in table)
    assert stat.units == paired
    if paired:
        assert 0.0 <= stat.value <= 1.0
    else:
        assert stat.value is None and "two ratings" in stat.reason


# --- Bootstrap ----------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["fleiss", "gwet", "cohen"])
def test_resamples_where_a_statistic_is_undefined_are_dropped_silently(which):
    # Few units carry the statistic (three with the modal 2 ratings; three rated units among
    # unrated ones; four complete pairs), so some of the 200 seeded resamples contain none of
    # them. Their NaN is dropped by design; it should not also warn.
    fleiss_table = [["x", "y", None, None], ["x", "x", None, None], ["y", "y", None, None]]
    fleiss_table += [["x", None, None, None]] * 2 + [["x", "y", "y", None]] * 2
    fleiss_table += [["x", "y", "y", "x"]] * 2
    assert fleiss_kappa(fleiss_table).units == 7
    gwet_table = [["x", "y"], ["x", "x"], ["y", "y"]] + [[None, None]] * 6
    a = ["x", "y", "x", "y"] + ["x"] * 16
    b = ["x", "y", "y", "y"] + [None] * 16
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        if which == "fleiss":
            stat = bootstrap(fleiss_kappa, fleiss_table, list(range(9)), 200, seed=0)
        elif which == "gwet":
            stat = bootstrap(gwet_ac1, gwet_table, list(range(9)), 200, seed=0)
        else:
            stat = interval(cohen_measure(a, b), list(range(20)), repetitions=200, seed=0)
    assert stat.low is not None


@pytest.mark.parametrize("statistic", TABLE_STATISTICS, ids=lambda f: f.__name__)
def test_bootstrap_interval_contains_the_point_and_is_seeded(statistic):
    table = fleiss_1971()
    groups = list(range(len(table)))
    first = bootstrap(statistic, table, groups, repetitions=1000, seed=3)
    assert first.low < first.value < first.high
    assert first.value == statistic(table).value
    assert first.method.endswith("BCa bootstrap over 30 groups, 1000 resamples, seed 3")
    assert first == bootstrap(statistic, table, groups, repetitions=1000, seed=3)
    assert first != bootstrap(statistic, table, groups, repetitions=1000, seed=4)


def test_cohen_interval_contains_the_point():
    a, b = pairs_from([[40, 4, 4, 17], [6, 25, 2, 13], [4, 1, 21, 12], [15, 5, 9, 45]])
    stat = interval(cohen_measure(a, b), list(range(len(a))), repetitions=1000, seed=0)
    assert stat.low < stat.value < stat.high
    assert stat.value == cohen_kappa(a, b).value


@pytest.mark.parametrize("statistic", TABLE_STATISTICS, ids=lambda f: f.__name__)
def test_resampling_groups_of_perfectly_correlated_units_widens_the_interval(statistic):
    # Every Fleiss (1971) patient five times over: a group's five units always agree alike.
    # Resampling units treats them as 150 independent patients; resampling groups sees 30.
    table = [row for row in fleiss_1971() for _ in range(5)]
    by_group = bootstrap(statistic, table, [u // 5 for u in range(150)], 1000, seed=0)
    by_unit = bootstrap(statistic, table, list(range(150)), 1000, seed=0)
    assert by_group.value == by_unit.value
    assert by_group.high - by_group.low > 1.5 * (by_unit.high - by_unit.low)  # about sqrt(5)
    assert "over 30 groups" in by_group.method and "over 150 groups" in by_unit.method
