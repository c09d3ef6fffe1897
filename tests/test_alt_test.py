"""The alt-test against the reference's published results and hand-worked examples.

Reference: Calderon, Reichart & Dror, "The Alternative Annotator Test for LLM-as-a-Judge" (ACL
2025), code and data at github.com/nitaytech/AltTest. That repository has no licence, so its data
is not vendored here: set ALTTEST_DATA to a checkout's data/ folder to check the published table.
What always runs instead: generated panels of the same shape and file format, with expected values
from a plain transcription of the reference procedure (tests/fixtures/alttest/make_tables.py).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from annotate.errors import UsageError
from annotate.stats.alt_test import alt_test, by_adjust, p_value, scores

# Published output of the "Example (paper's data)" cell of alt_test_example.ipynb in
# nitaytech/AltTest (commit 13eada270fed73be2dfba64392a14b905df65e27): dataset, epsilon, LLM,
# winning rate, advantage probability, both printed to two decimals. Only the datasets the
# reference scores with 'accuracy' (nominal labels), the only scoring this module implements.
PUBLISHED = [
    ("wax", 0.1, "gemini_flash", 0.38, 0.69),
    ("wax", 0.1, "gemini_pro", 0.50, 0.74),
    ("wax", 0.1, "gpt-4o", 0.50, 0.73),
    ("wax", 0.1, "llama-31", 0.00, 0.57),
    ("wax", 0.1, "gpt-4o-mini", 0.00, 0.59),
    ("wax", 0.1, "mistral-v03", 0.00, 0.50),
    ("lgbteen", 0.2, "gemini_flash", 0.25, 0.71),
    ("lgbteen", 0.2, "gemini_pro", 0.00, 0.67),
    ("lgbteen", 0.2, "gpt-4o", 0.75, 0.77),
    ("lgbteen", 0.2, "llama-31", 0.00, 0.72),
    ("lgbteen", 0.2, "gpt-4o-mini", 0.75, 0.76),
    ("lgbteen", 0.2, "mistral-v03", 0.25, 0.75),
    ("mtbench", 0.2, "gemini_flash", 0.00, 0.72),
    ("mtbench", 0.2, "gemini_pro", 0.00, 0.76),
    ("mtbench", 0.2, "gpt-4o", 0.00, 0.77),
    ("mtbench", 0.2, "llama-31", 0.00, 0.69),
    ("mtbench", 0.2, "gpt-4o-mini", 0.00, 0.74),
    ("mtbench", 0.2, "mistral-v03", 0.00, 0.68),
    ("framing", 0.15, "gemini_flash", 1.00, 0.83),
    ("framing", 0.15, "gemini_pro", 1.00, 0.91),
    ("framing", 0.15, "gpt-4o", 1.00, 0.92),
    ("framing", 0.15, "llama-31", 0.50, 0.80),
    ("framing", 0.15, "gpt-4o-mini", 1.00, 0.87),
    ("framing", 0.15, "mistral-v03", 0.25, 0.80),
    ("cebab_aspects", 0.1, "gemini_flash", 0.70, 0.91),
    ("cebab_aspects", 0.1, "gemini_pro", 0.90, 0.94),
    ("cebab_aspects", 0.1, "gpt-4o", 0.90, 0.93),
    ("cebab_aspects", 0.1, "llama-31", 0.60, 0.89),
    ("cebab_aspects", 0.1, "gpt-4o-mini", 0.50, 0.90),
    ("cebab_aspects", 0.1, "mistral-v03", 0.10, 0.81),
]


def _published_inputs(dataset: str, llm: str) -> tuple[dict, dict]:
    root = os.environ.get("ALTTEST_DATA")
    if not root:
        pytest.skip(
            "published AltTest table: its data (github.com/nitaytech/AltTest, no licence) is not "
            "shipped; set ALTTEST_DATA to that checkout's data/ folder (generated tables ran)"
        )
    folder = Path(root) / dataset
    if not (folder / "human_annotations.json").exists():
        pytest.skip(f"{folder} has no human_annotations.json")
    llms = json.loads((folder / "llm_annotations.json").read_text())
    if llm not in llms:
        pytest.skip(f"{llm} not in {folder}/llm_annotations.json")
    return json.loads((folder / "human_annotations.json").read_text()), llms[llm]


@pytest.mark.parametrize(("dataset", "epsilon", "llm", "winning", "advantage"), PUBLISHED)
def test_reproduces_the_published_table(
    dataset: str, epsilon: float, llm: str, winning: float, advantage: float
) -> None:
    humans, judge = _published_inputs(dataset, llm)
    result = alt_test(humans, judge, epsilon=epsilon, min_reviewers=2)
    assert abs(result["winning_rate"] - winning) <= 0.005 + 1e-9
    assert abs(result["advantage_probability"] - advantage) <= 0.005 + 1e-9
    assert result["passed"] == (winning >= 0.5)


GENERATED = Path(__file__).parent / "fixtures" / "alttest"


def _generated_rows() -> list[dict]:
    return json.loads((GENERATED / "expected.json").read_text())


@pytest.mark.parametrize("row", _generated_rows(), ids=lambda r: f"{r['dataset']}-{r['llm']}")
def test_reproduces_the_reference_procedure_on_generated_tables(row: dict) -> None:
    """Catches any drift from the authors' procedure (scores, ties, the 30-unit skip, BY) on
    panels with 2-5 categories, partial overlap and skipped annotators."""
    folder = GENERATED / row["dataset"]
    humans = json.loads((folder / "human_annotations.json").read_text())
    judge = json.loads((folder / "llm_annotations.json").read_text())[row["llm"]]
    result = alt_test(humans, judge, epsilon=row["epsilon"], min_reviewers=2)
    assert len(result["reviewers"]) == row["annotators_tested"]
    assert result["winning_rate"] == pytest.approx(row["winning_rate"], abs=1e-12)
    assert result["advantage_probability"] == pytest.approx(row["advantage_probability"], abs=1e-12)
    assert result["passed"] == (row["winning_rate"] >= 0.5)


def test_the_generated_tables_are_what_their_script_makes() -> None:
    spec = importlib.util.spec_from_file_location("make_tables", GENERATED / "make_tables.py")
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    made = script.tables()
    assert {path: (GENERATED / path).read_text() for path in made} == made
    rates = {row["winning_rate"] for row in json.loads(made["expected.json"])}
    assert {0.0, 0.5, 1.0} < rates  # the table spans the range and the pass boundary
    humans = json.loads(made["panel_small/human_annotations.json"])
    assert min(len(units) for units in humans.values()) < 30  # a skipped annotator is exercised


# A hand-worked panel: reviewers A, B, C; every reviewer gives the true label on `agree` units;
# then each reviewer in turn is the lone dissenter on a few units (the other two give the truth).
def truth(unit: int) -> str:
    return "yes" if unit % 2 == 0 else "no"


def flip(label: str) -> str:
    return "no" if label == "yes" else "yes"


def panel(agree: int, dissent: dict[str, int]) -> tuple[dict[str, dict[int, str]], list[str]]:
    humans: dict[str, dict[int, str]] = {r: {u: truth(u) for u in range(agree)} for r in dissent}
    unit = agree
    dissenter = []
    for reviewer, count in dissent.items():
        for _ in range(count):
            for other in dissent:
                humans[other][unit] = flip(truth(unit)) if other == reviewer else truth(unit)
            dissenter.append(reviewer)
            unit += 1
    return humans, dissenter


DISSENT = {"A": 4, "B": 3, "C": 3}


def majority_judge(units: int) -> dict[int, str]:
    return {u: truth(u) for u in range(units)}


def hand_t_p(n: int, k: int, epsilon: float) -> float:
    """d = -1 on k of n units, 0 elsewhere: the one-sample t statistic written out, then p."""
    mean = -k / n
    variance = (k * (-1 - mean) ** 2 + (n - k) * (0 - mean) ** 2) / (n - 1)
    t = (mean - epsilon) / math.sqrt(variance / n)
    return float(stats.t.cdf(t, df=n - 1))


def test_alignment_scores_and_differences_by_hand() -> None:
    humans, dissenter = panel(30, DISSENT)
    judge = majority_judge(40)
    units = list(humans["A"])
    by_judge, by_a = scores(humans, judge, "A", units)
    # S = share of the other two reviewers' labels matched (the reference's 'accuracy').
    assert (by_judge[:30] == 1).all() and (by_a[:30] == 1).all()  # unanimous units
    assert (by_judge[30:34] == 1).all() and (by_a[30:34] == 0).all()  # A alone dissents
    assert (by_judge[34:] == 0.5).all() and (by_a[34:] == 0.5).all()  # B or C dissents: a tie
    assert dissenter[:4] == ["A"] * 4
    result = alt_test(humans, judge)
    a, b, c = result["reviewers"]
    # W_judge = 1 everywhere (ties count for both), d = W_A - W_judge = -1 only where A dissents.
    assert (a["units"], a["mean_difference"], a["judge_advantage"]) == (40, -0.1, 1.0)
    assert (b["mean_difference"], c["mean_difference"]) == (-0.075, -0.075)
    assert a["test"] == b["test"] == "t"
    assert a["p_value"] == pytest.approx(hand_t_p(40, 4, 0.15), rel=1e-9)
    assert b["p_value"] == pytest.approx(hand_t_p(40, 3, 0.15), rel=1e-9)
    assert c["p_value"] == pytest.approx(hand_t_p(40, 3, 0.15), rel=1e-9)
    d_a = np.array([0.0] * 30 + [-1.0] * 4 + [0.0] * 6)
    assert a["p_value"] == stats.ttest_1samp(d_a, 0.15, alternative="less").pvalue


def test_judge_equal_to_the_majority_passes() -> None:
    humans, _ = panel(30, DISSENT)
    result = alt_test(humans, majority_judge(40))
    assert all(row["rejected"] for row in result["reviewers"])
    assert result["winning_rate"] == 1.0
    assert result["advantage_probability"] == 1.0  # mean over reviewers of mean W_judge
    assert result["passed"] is True
    assert result["units"] == 40
    assert result["verdict"].startswith("The judge can stand in for a reviewer here")
    assert result["reason"] is None  # callers show `verdict or reason`
    json.dumps(result, allow_nan=False)


def test_judge_opposite_to_the_majority_fails() -> None:
    humans, _ = panel(30, DISSENT)
    judge = {u: flip(label) for u, label in majority_judge(40).items()}
    result = alt_test(humans, judge)
    # Unanimous units: the judge matches no one, the reviewer everyone: d = +1 (30 of 40).
    # Dissent units: the judge sides with the dissenter, so the scores tie: d = 0, W_judge = 1.
    for row in result["reviewers"]:
        assert (row["mean_difference"], row["judge_advantage"]) == (0.75, 0.25)
        assert row["p_value"] > 0.99 and not row["rejected"]
    assert (result["winning_rate"], result["advantage_probability"]) == (0.0, 0.25)
    assert result["passed"] is False
    assert result["verdict"].startswith("The judge cannot stand in for a reviewer here")


def test_random_judge_fails() -> None:
    humans, _ = panel(30, DISSENT)
    rng = np.random.default_rng(7)
    judge = {u: str(rng.choice(["yes", "no"])) for u in range(40)}
    result = alt_test(humans, judge)
    assert result["winning_rate"] == 0.0
    assert result["passed"] is False


def test_a_reviewer_below_thirty_units_is_skipped_with_the_reason() -> None:
    # The authors' code (alt_test, min_instances_per_human=30) skips such an annotator: an exact
    # Wilcoxon test would test symmetry around epsilon, not mean(d) >= epsilon.
    humans, _ = panel(15, {"A": 2, "B": 2, "C": 1})
    result = alt_test(humans, majority_judge(20))
    assert result["reviewers"] == [] and result["passed"] is None
    assert result["min_units"] == 30
    assert (
        "Reviewer A skipped: 20 units shared with the judge and another reviewer, fewer than "
        "the 30 a t-test needs (the authors' minimum per annotator)."
    ) in result["notes"]
    assert "at least 3 reviewers with 30 or more units" in result["reason"]
    small = alt_test(humans, majority_judge(20), min_units=20)
    assert [row["test"] for row in small["reviewers"]] == ["t", "t", "t"]


def test_constant_differences_have_a_limit_p_value() -> None:
    # A t-test on a constant d has no spread; the p is its limit (older scipy returns NaN).
    assert p_value(np.zeros(40), 0.15) == 0.0
    assert p_value(-np.ones(40), 0.15) == 0.0
    assert p_value(np.ones(40), 0.15) == 1.0
    assert p_value(np.zeros(40), 0.0) == 1.0  # mean equal to epsilon: no evidence
    humans = {r: {u: truth(u) for u in range(40)} for r in "ABC"}
    result = alt_test(humans, majority_judge(40))  # everyone agrees with everyone
    assert [row["p_value"] for row in result["reviewers"]] == [0.0, 0.0, 0.0]
    assert result["passed"] is True


def test_fewer_than_three_reviewers_does_not_run() -> None:
    humans, _ = panel(30, {"A": 4, "B": 3})
    result = alt_test(humans, majority_judge(37))
    assert result["passed"] is None
    assert result["winning_rate"] is None and result["reviewers"] == []
    assert result["verdict"] is None  # callers show `verdict or reason`
    assert "at least 3 reviewers" in result["reason"] and "found 2" in result["reason"]
    assert alt_test(humans, majority_judge(37), min_reviewers=2)["passed"] is not None
    json.dumps(result, allow_nan=False)


def test_reviewer_without_shared_units_is_left_out_with_a_note() -> None:
    humans, _ = panel(30, DISSENT)
    judge = majority_judge(40)
    lonely = {**humans, "D": {100: "yes", 101: "no"}}
    judge_lonely = {**judge, 100: "yes", 101: "yes"}
    result = alt_test(lonely, judge_lonely)
    assert [row["reviewer"] for row in result["reviewers"]] == ["A", "B", "C"]
    assert any("Reviewer D left out" in note for note in result["notes"])
    assert any("2 units labelled by only one reviewer" in note for note in result["notes"])
    assert result["reviewers"] == alt_test(humans, judge)["reviewers"]


def test_units_without_a_judge_label_are_skipped() -> None:
    humans, _ = panel(30, DISSENT)
    judge = majority_judge(40)
    extra = {r: {**labels, **{u: "yes" for u in range(40, 50)}} for r, labels in humans.items()}
    result, plain = alt_test(extra, judge), alt_test(humans, judge)
    assert result["units"] == plain["units"] == 40
    assert result["reviewers"] == plain["reviewers"]
    assert result["notes"] == [
        "10 units with reviewer labels but no judge label to compare (not judged, an "
        "abstention, or outside the part scored): skipped."
    ]
    unlabelled = alt_test(humans, {**judge, 0: None})  # None is no label
    assert unlabelled["units"] == 39


LABELS = st.sampled_from([0, 1, 2])


@st.composite
def labelled_panels(draw: st.DrawFn) -> tuple[dict[str, dict[int, int]], dict[int, int]]:
    units = draw(st.integers(min_value=8, max_value=40))
    reviewers = draw(st.integers(min_value=3, max_value=4))
    humans = {
        f"r{r}": {u: draw(LABELS) for u in range(units) if draw(st.booleans()) or r < 2}
        for r in range(reviewers)
    }
    return humans, {u: draw(LABELS) for u in range(units)}


@settings(max_examples=40, deadline=None)
@given(labelled_panels(), st.permutations(["x", "y", "z"]))
def test_renaming_the_categories_changes_nothing(panel_, names: list[str]) -> None:
    humans, judge = panel_
    rename = dict(zip([0, 1, 2], names, strict=True))
    renamed = {r: {u: rename[x] for u, x in labels.items()} for r, labels in humans.items()}
    assert alt_test(renamed, {u: rename[x] for u, x in judge.items()}) == alt_test(humans, judge)


@settings(max_examples=40, deadline=None)
@given(labelled_panels())
def test_result_is_well_formed(panel_) -> None:
    humans, judge = panel_
    result = alt_test(humans, judge)
    json.dumps(result, allow_nan=False)
    if result["passed"] is None:
        return
    rows = result["reviewers"]
    assert [row["p_adjusted"] for row in rows] == by_adjust([row["p_value"] for row in rows])
    assert result["winning_rate"] == sum(row["rejected"] for row in rows) / len(rows)
    assert result["passed"] == (result["winning_rate"] >= 0.5)
    assert 0 <= result["advantage_probability"] <= 1


# Benjamini & Yekutieli (2001), Theorem 1.3: with c(m) = sum_{k<=m} 1/k, reject the hypotheses
# of the k smallest p-values, k = max{i : p_(i) <= i q / (m c(m))}. Adjusted p-values:
# p_(i) m c(m) / i, made monotone from the largest down, capped at 1.
def test_by_adjustment_by_hand() -> None:
    c5 = 1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5  # 137/60
    p = [0.04, 0.001, 0.3, 0.01, 0.02]
    expected = [0.04 * 5 * c5 / 4, 0.001 * 5 * c5, 0.3 * 5 * c5 / 5, 0.01 * 5 * c5 / 2]
    expected.append(0.02 * 5 * c5 / 3)  # already increasing in rank, so no monotone step
    assert by_adjust(p) == pytest.approx(expected, rel=1e-12)
    assert [a <= 0.05 for a in by_adjust(p)] == [False, True, False, False, False]
    c3 = 1 + 1 / 2 + 1 / 3
    # 0.01 * 3 c3 = 0.055 > 0.05 alone, but the step-up carries it: min(0.055, 0.011 * 3 c3 / 2).
    assert by_adjust([0.01, 0.011, 0.5]) == pytest.approx(
        [0.011 * 3 * c3 / 2, 0.011 * 3 * c3 / 2, 0.5 * 3 * c3 / 3], rel=1e-12
    )
    assert by_adjust([0.01, 0.011, 0.5])[0] <= 0.05


def test_by_adjustment_is_scipys_and_caps_at_one() -> None:
    """Catches a cap above 1 or none (adjusted p-values of 2.75 would be printed)."""
    rng = np.random.default_rng(3)
    for m in range(1, 12):
        p = rng.random(m) ** 2
        expected = stats.false_discovery_control(p, method="by")
        assert by_adjust(list(p)) == [float(x) for x in expected]
    c3 = 1 + 1 / 2 + 1 / 3
    assert by_adjust([0.5, 0.6, 0.9]) == [1.0, 1.0, 1.0]  # 0.5 * 3 * c3 = 2.75 before the cap
    assert by_adjust([0.1, 0.9]) == pytest.approx([0.1 * 2 * 1.5, 1.0])
    assert by_adjust([0.2]) == [0.2]
    assert by_adjust([0.01, 0.02, 0.03]) == pytest.approx([0.03 * c3] * 3)


def step_up(p: list[float], q: float) -> set[int]:
    m = len(p)
    c = sum(1 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda i: p[i])
    passing = [r for r in range(1, m + 1) if p[order[r - 1]] <= r * q / (m * c)]
    return set(order[: max(passing, default=0)])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=12),
    st.sampled_from([0.01, 0.05, 0.1]),
)
def test_by_adjusted_threshold_matches_the_step_up_definition(p: list[float], q: float) -> None:
    m = len(p)
    c = sum(1 / k for k in range(1, m + 1))
    ranks = range(1, m + 1)
    assume(all(abs(x - r * q / (m * c)) > 1e-12 for x in p for r in ranks))  # off the boundary
    adjusted = by_adjust(p)
    assert {i for i, a in enumerate(adjusted) if a <= q} == step_up(p, q)


def test_bad_arguments_raise_usage_errors() -> None:
    humans, _ = panel(30, DISSENT)
    for kwargs in ({"q": 0.0}, {"q": 1.5}, {"epsilon": math.nan}, {"min_reviewers": 1}):
        with pytest.raises(UsageError):
            alt_test(humans, majority_judge(40), **kwargs)


def test_a_test_not_run_has_every_field_of_one_that_ran():
    """Catches a field renamed or dropped when there are too few reviewers: readers of the JSON
    (README, "Alt-test") find every field of a run, empty, and the reason."""
    from annotate.stats.alt_test import _not_run

    not_run = _not_run(1, 3, 40, 30)
    assert set(not_run) == {
        "reviewers", "winning_rate", "advantage_probability", "passed", "verdict", "reason",
    }  # fmt: skip
    assert not_run["advantage_probability"] is None and not_run["passed"] is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": math.nan}, "epsilon must be a finite number, not nan."),
        ({"q": 1.0}, "q must be between 0 and 1, not 1.0."),
        ({"q": 0.0}, "q must be between 0 and 1, not 0.0."),
        ({"min_reviewers": 1}, "min_reviewers must be at least 2 (leave-one-out), not 1."),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(kwargs: dict, message: str) -> None:
    """Catches a setting refused without saying which, and q = 1 let through."""
    humans, _ = panel(30, DISSENT)
    with pytest.raises(UsageError) as raised:
        alt_test(humans, majority_judge(40), **kwargs)
    assert str(raised.value) == message


def test_a_run_reports_its_settings_and_each_reviewers_adjusted_p() -> None:
    """Catches the settings missing from the JSON and the Benjamini-Yekutieli adjusted p not
    stored per reviewer (statsmodels' fdr_by on the same p-values)."""
    from statsmodels.stats.multitest import multipletests

    humans, _ = panel(30, DISSENT)
    result = alt_test(humans, majority_judge(40), epsilon=0.1, q=0.1)
    assert (result["epsilon"], result["q"], result["min_units"]) == (0.1, 0.1, 30)
    p = [row["p_value"] for row in result["reviewers"]]
    want = multipletests(p, method="fdr_by")[1]
    assert [row["p_adjusted"] for row in result["reviewers"]] == pytest.approx(list(want))


def test_a_reviewer_with_exactly_the_minimum_of_units_is_tested_and_too_few_say_how_many() -> None:
    """Catches `<=` for `<` at the minimum of units, and the not-run reason's count lost."""
    humans, _ = panel(30, DISSENT)
    judge = majority_judge(40)
    at_minimum = alt_test(humans, judge, min_units=40)
    assert len(at_minimum["reviewers"]) == len(DISSENT) and not at_minimum["notes"]
    too_few = alt_test(humans, judge, min_units=41)
    assert too_few["passed"] is None and "over 40 such units" in too_few["reason"]
    alone = {"ann": {999: "a"}, **humans}  # a unit nobody else labelled
    notes = alt_test(alone, judge)["notes"]
    assert "Reviewer ann left out: none of their 1 labelled units was labelled by the judge and " \
        "another reviewer." in notes  # fmt: skip
