"""Rules that turn labels into numbers, pinned case by case.

Written from the mutants `make mutate` left alive (tests/MUTATION.md): each test names the
mistake it catches. Gold and response outcomes follow README "Gold" and "Response level"; the
widened interval is the one readiness reads.
"""

from __future__ import annotations

import numpy as np
import pytest
from bca_reference import bca_widened
from sklearn import metrics
from statsmodels.stats.proportion import proportion_confint

from annotate.stats import judge as judge_stats
from annotate.stats.gold import (
    EXCLUDED,
    SUPPORTED,
    UNSUPPORTED,
    ClaimGold,
    Evidence,
    claim_gold,
    gold_without_each,
    response_gold,
    response_labels,
    response_outcome,
    reviewer_labels,
    unresolved,
)
from annotate.stats.judge import Pair, calibration_stats, coverage, widened

BINARY = {
    "supported": SUPPORTED,
    "unsupported": UNSUPPORTED,
    "not_in_context": UNSUPPORTED,
    "not_a_claim": EXCLUDED,
}


def vote(reviewer: str, trace: str, index: int, label: str) -> dict:
    return {
        "reviewer": reviewer,
        "trace_id": trace,
        "claim_index": index,
        "label": label,
        "error_type": None,
    }


def test_a_response_is_supported_only_when_every_kept_claim_is_known_and_supported() -> None:
    """Catches `kept or all(...)`: an unknown claim, or a response of excluded claims only,
    called supported."""
    assert response_outcome({0: SUPPORTED, 1: SUPPORTED}, [0, 1]) == SUPPORTED
    assert response_outcome({0: SUPPORTED, 1: EXCLUDED}, [0, 1]) == SUPPORTED
    assert response_outcome({0: SUPPORTED, 1: None}, [0, 1]) is None  # one claim unresolved
    assert response_outcome({0: SUPPORTED}, [0, 1]) is None  # one claim not labelled
    assert response_outcome({0: EXCLUDED, 1: EXCLUDED}, [0, 1]) is None  # nothing to judge
    assert response_outcome({}, []) is None
    assert response_outcome({0: None, 1: UNSUPPORTED}, [0, 1]) == UNSUPPORTED  # any one decides


def test_an_adjudication_settles_the_claim_for_every_reviewer_at_response_level() -> None:
    """Catches response gold read without the adjudications, an adjudicated label not mapped
    to its binary outcome, and claims of another trace used."""
    evidence = Evidence(
        sample="s",
        binary=BINARY,
        votes=[
            vote("ana", "t1", 0, "supported"),
            vote("ana", "t1", 1, "supported"),
            vote("ben", "t1", 0, "supported"),
            vote("ben", "t1", 1, "not_in_context"),
            vote("ana", "t2", 0, "supported"),
            vote("ben", "t2", 0, "supported"),
        ],
        adjudications={("t1", 1): {"label": "not_in_context", "error_type": None}},
        claims={"t1": [0, 1], "t2": [0, 1]},  # t2's claim 1 was never labelled
    )
    before = response_labels(evidence)
    assert before == {"ana": {"t1": SUPPORTED}, "ben": {"t1": UNSUPPORTED}}
    after = response_labels(evidence, adjudicated=True)
    assert after == {"ana": {"t1": UNSUPPORTED}, "ben": {"t1": UNSUPPORTED}}
    # The reviewers disagreed on t1 until the adjudication; t2 has an unlabelled claim.
    assert response_gold(evidence) == {"t1": UNSUPPORTED}
    gold = claim_gold(evidence)
    assert (gold[("t1", 1)].binary, gold[("t1", 1)].source) == (UNSUPPORTED, "adjudicated")


def test_without_a_claim_list_a_response_is_the_claims_its_reviewer_labelled() -> None:
    """Catches the fallback to the labelled claims lost when the store gave no claim list."""
    evidence = Evidence(
        sample=None,
        binary=BINARY,
        votes=[vote("ana", "t1", 0, "supported"), vote("ana", "t1", 3, "supported")],
        adjudications={},
    )
    assert response_labels(evidence) == {"ana": {"t1": SUPPORTED}}


WILSON = {"value": 0.8, "low": 0.6, "high": 0.9, "method": "Wilson"}


def test_the_widened_interval_takes_the_wider_bound_on_each_side() -> None:
    """Catches a bound left at the bootstrap's (or Wilson's) when the other reaches further:
    readiness reads the low bound."""
    narrow = {"value": 0.8, "low": 0.7, "high": 0.85, "method": "BCa trace bootstrap"}
    got = widened(narrow, WILSON)
    assert (got["low"], got["high"], got["value"]) == (0.6, 0.9, 0.8)
    assert got["method"] == "BCa trace bootstrap, widened to Wilson's bounds where those are wider"
    wide = {"value": 0.8, "low": 0.5, "high": 0.95, "method": "BCa trace bootstrap"}
    assert (widened(wide, WILSON)["low"], widened(wide, WILSON)["high"]) == (0.5, 0.95)
    mixed = {"value": 0.8, "low": 0.55, "high": 0.88, "method": "BCa trace bootstrap"}
    assert (widened(mixed, WILSON)["low"], widened(mixed, WILSON)["high"]) == (0.55, 0.9)


def test_a_missing_interval_on_either_side_is_said_not_invented() -> None:
    """Catches an undefined Wilson treated as defined, and a missing bootstrap hidden."""
    undefined = {"value": None, "low": None, "high": None, "reason": "no positives"}
    boot = {"value": 0.8, "low": 0.7, "high": 0.85, "method": "BCa trace bootstrap"}
    assert widened(boot, undefined) == boot
    failed = {"value": None, "low": None, "high": None, "reason": "every resample agrees"}
    got = widened(failed, WILSON)
    assert (got["low"], got["high"]) == (0.6, 0.9)
    assert got["method"] == "Wilson (no bootstrap interval: every resample agrees)"


def random_pairs(seed: int, traces: int = 30) -> list[Pair]:
    rng = np.random.default_rng(seed)
    pairs = []
    for t in range(traces):
        for _ in range(int(rng.integers(1, 5))):
            gold = bool(rng.random() < 0.3)
            judge = gold if rng.random() < 0.8 else not gold
            pairs.append(Pair(f"t{t}", judge, gold))
    return pairs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_judge_statistic_equals_scikit_learns(seed: int) -> None:
    """Catches a confusion cell swapped or a statistic's formula changed (balanced accuracy
    had no check of its value); positive means unsupported."""
    pairs = random_pairs(seed)
    gold = [p.gold_unsupported for p in pairs]
    judge = [p.judge_unsupported for p in pairs]
    found = calibration_stats(pairs, seed=0, repetitions=200)
    expected = {
        "sensitivity": metrics.recall_score(gold, judge),
        "specificity": metrics.recall_score(gold, judge, pos_label=False),
        "precision": metrics.precision_score(gold, judge),
        "accuracy": metrics.accuracy_score(gold, judge),
        "balanced_accuracy": metrics.balanced_accuracy_score(gold, judge),
        "cohen_kappa": metrics.cohen_kappa_score(gold, judge),
    }
    for name, value in expected.items():
        assert found[name]["value"] == pytest.approx(value, abs=1e-12), name
        assert found[name]["low"] <= found[name]["value"] <= found[name]["high"], name
        assert found[name]["method"].endswith("200 resamples, seed 0") or name in (
            "sensitivity",
            "specificity",
            "precision",
            "accuracy",
            "balanced_accuracy",  # MOVER from its two components' intervals
        )
    assert found["balanced_accuracy"]["method"].startswith("MOVER (Zou & Donner 2008)")
    for name in ("balanced_accuracy", "cohen_kappa"):
        assert found[name]["units"] == len(pairs), name
    defaults = calibration_stats(pairs)
    assert defaults["cohen_kappa"]["method"].endswith("1000 resamples, seed 0")
    tn, fp, fn, tp = metrics.confusion_matrix(gold, judge).ravel()
    assert found["confusion"] == {"tp": tp, "fp": fp, "tn": tn, "fn": fn}


def test_balanced_accuracy_needs_both_gold_outcomes() -> None:
    """Catches the undefined case decided on one gold outcome only (or on the judge's). Two
    units are too few for an interval: the defined value keeps its number and says so, the
    undefined one keeps its own reason; with five of each gold outcome the interval is there."""
    only_supported = [Pair("a", False, False), Pair("b", True, False)]
    only_unsupported = [Pair("a", True, True), Pair("b", False, True)]
    one_verdict = [Pair("a", True, True), Pair("b", True, False)]  # judge says one thing
    for pairs in (only_supported, only_unsupported):
        found = calibration_stats(pairs, repetitions=50)["balanced_accuracy"]
        assert found["value"] is None
        assert found["reason"] == "needs both supported and unsupported gold"
    found = calibration_stats(one_verdict, repetitions=50)["balanced_accuracy"]
    assert found["value"] == 0.5 and found["low"] is None
    assert found["reason"] == "too few to say: 1 supported gold unit (< 5)"
    one_verdict = [Pair(f"{t}{i}", True, t == "u") for t in "us" for i in range(5)]
    found = calibration_stats(one_verdict, repetitions=50)["balanced_accuracy"]
    assert found["value"] == 0.5 and found.get("reason") is None
    assert 0.0 < found["low"] < 0.5 < found["high"] < 1.0


def test_the_judges_abstentions_are_counted_on_units_with_gold() -> None:
    """Catches abstentions counted on the wrong units, the wrong way round, or with a wrong
    interval (coverage had no direct test)."""
    judged = {
        ("t1", 0): {"outcome": "abstained", "label": "unsure"},
        ("t2", 0): {"outcome": "unsupported", "label": "bad"},
        ("t3", 0): {"outcome": "abstained", "label": "unsure"},
        ("t4", 0): {"outcome": "abstained", "label": "no idea"},  # no gold: not counted
        ("t5", 0): {"outcome": "supported", "label": "fine"},
    }
    gold = {("t1", 0): "supported", ("t2", 0): "unsupported", ("t3", 0): "supported"}
    gold[("t5", 0)] = "supported"
    found = coverage(judged, gold, seed=0, repetitions=100)
    assert (found["units"], found["answered"], found["abstained"]) == (4, 2, 2)
    assert found["abstained_labels"] == {"unsure": 2}
    low, high = proportion_confint(2, 4, method="wilson")
    share = found["abstained_share"]
    assert share["value"] == 0.5
    assert (share["low"], share["high"]) == pytest.approx((low, high), abs=1e-12)
    clustered = {(t, i): v for (t, _), v in judged.items() for i in range(2)}
    cluster_gold = {(t, i): g for (t, _), g in gold.items() for i in range(2)}
    found = coverage(clustered, cluster_gold, seed=0, repetitions=200)
    assert (found["units"], found["abstained"]) == (8, 4)
    share = found["abstained_share"]
    low, high = proportion_confint(4, 8, method="wilson")
    assert share["value"] == 0.5 and share["low"] <= low and share["high"] >= high
    assert "widened to Wilson" in share["method"]
    empty = coverage(judged, {}, seed=0, repetitions=50)
    assert empty["units"] == 0 and empty["abstained_share"]["reason"] == "no units with gold"


def test_unresolved_claims_depend_on_the_scale() -> None:
    """Catches the full scale's unresolved list read from the binary gold: two different
    unsupported labels agree on the binary scale and disagree on the full one."""
    evidence = Evidence(
        sample="s",
        binary={**BINARY, "contradicted": UNSUPPORTED},
        votes=[
            vote("ana", "t1", 0, "contradicted"),
            vote("ben", "t1", 0, "not_in_context"),
            vote("ana", "t1", 1, "supported"),
            vote("ben", "t1", 1, "not_in_context"),
        ],
        adjudications={},
    )
    gold = claim_gold(evidence)
    assert unresolved(gold) == [("t1", 1)]
    assert unresolved(gold, "binary") == [("t1", 1)]
    assert unresolved(gold, "full") == [("t1", 0), ("t1", 1)]


def test_resamples_where_gold_has_one_class_say_nothing_about_kappa() -> None:
    """Catches such resamples counted as kappa 0: a judge that is right on every claim, with
    5 unsupported claims (enough for an interval) in 2 of 31 traces, has kappa 1 in every
    resample where it is defined; about one resample in eight draws neither of the 2."""
    pairs = [Pair("t0", True, True)] * 3 + [Pair("t30", True, True)] * 2
    pairs += [Pair(f"t{i}", False, False) for i in range(1, 30)]
    kappa = calibration_stats(pairs, repetitions=500)["cohen_kappa"]
    # Every defined resample is 1, so the interval is the floor Wilson's implies and no lower
    # (resamples counted as 0 pull the low end to -0.06): p_o = 34/34, p_e from the margins.
    from statsmodels.stats.proportion import proportion_confint

    chance = (5 * 5 + 29 * 29) / 34**2
    floor = (proportion_confint(34, 34, method="wilson")[0] - chance) / (1 - chance)
    assert kappa["value"] == 1.0 and kappa["high"] == 1.0
    assert kappa["low"] == pytest.approx(floor) and floor > 0.05


def test_kappa_on_every_resample_is_scikit_learns_or_undefined_when_gold_has_one_class() -> None:
    """Catches the one-class guard loosened or tightened (`>= 0`, `> 1`, `<= n`, `|`): each
    resample's kappa is scikit-learn's on the units drawn (with their multiplicities), and
    undefined, not 0, exactly where the drawn gold has one class, even when the judge raised a
    false alarm there (where scikit-learn says 0)."""
    pairs = [Pair("a", True, True), Pair("b", True, False), Pair("c", False, False)]
    pairs += [Pair("d", False, True), Pair("e", False, False), Pair("f", True, False)]
    measure = judge_stats.kappa_measure(pairs)
    judge = np.array([p.judge_unsupported for p in pairs])
    gold = np.array([p.gold_unsupported for p in pairs])
    rng = np.random.default_rng(7)
    draws = [rng.integers(0, 3, len(pairs)) for _ in range(300)]
    draws += [np.array(w) for w in ([0, 1, 1, 0, 1, 0], [1, 1, 0, 0, 1, 0], [0, 0, 1, 1, 0, 1])]
    one_class = 0
    for w in draws:
        got = float(measure.value(w @ measure.features))
        kept = w > 0
        if len(set(gold[kept])) < 2:
            one_class += 1
            assert np.isnan(got), w
        else:
            want = metrics.cohen_kappa_score(gold, judge, sample_weight=w)
            assert got == pytest.approx(want), w
    assert one_class >= 3


@pytest.mark.parametrize(
    ("pairs", "reason"),
    [
        ([], "no units with gold and a verdict"),
        ([Pair("a", True, False), Pair("b", False, False)], "no unsupported claims in gold"),
        ([Pair("a", True, True), Pair("b", False, True)], "no supported claims in gold"),
        ([Pair("a", True, True), Pair("b", True, False)], "the judge gave one verdict only"),
        ([Pair("a", False, True), Pair("b", False, False)], "the judge gave one verdict only"),
    ],
)
def test_kappa_says_why_it_is_undefined(pairs: list[Pair], reason: str) -> None:
    """Catches an undefined kappa shown as a number, or with another case's reason."""
    kappa = calibration_stats(pairs, repetitions=50)["cohen_kappa"]
    assert kappa["value"] is None and kappa["reason"].startswith(reason)


def test_equal_cells_and_a_perfect_judge_are_defined() -> None:
    """Catches the undefined checks of balanced accuracy and kappa written with a difference
    where a sum belongs (a cell count equal to its neighbour is not zero)."""
    one_each = [Pair("a", True, True), Pair("b", False, True), Pair("c", False, False)]
    one_each.append(Pair("d", True, False))  # tp = fn = tn = fp = 1
    found = calibration_stats(one_each, repetitions=50)
    assert found["balanced_accuracy"]["value"] == 0.5
    assert found["cohen_kappa"]["value"] == 0.0
    perfect = [Pair("a", True, True), Pair("b", False, False)]  # fp = fn = 0
    found = calibration_stats(perfect, repetitions=50)
    assert found["balanced_accuracy"]["value"] == 1.0 and found["cohen_kappa"]["value"] == 1.0


def test_clustered_rates_count_their_units_and_say_why_they_are_undefined() -> None:
    """Catches a rate's unit count or its reason lost on the bootstrap route (claims of one
    trace, so the interval is the widened bootstrap)."""
    pairs = [Pair(f"t{t}", t % 3 == 0, False) for t in range(10) for _ in range(2)]
    found = calibration_stats(pairs, repetitions=100)
    assert found["specificity"]["units"] == 20 and found["specificity"]["value"] == 12 / 20
    assert found["accuracy"]["units"] == 20
    assert found["sensitivity"]["value"] is None
    assert found["sensitivity"]["reason"] == "no unsupported gold in the denominator"
    assert found["precision"]["value"] == 0.0 and found["precision"]["units"] == 8
    none = calibration_stats([], repetitions=50)
    assert none["accuracy"]["value"] is None and none["accuracy"]["reason"] == "no units"


def test_abstentions_are_seeded_stratified_and_per_trace() -> None:
    """Catches the abstention interval unseeded or unstratified, and trace ids (response
    level) cut to their first character as if they were (trace, claim) pairs."""
    judged = {
        (f"t{t}", i): {"outcome": "abstained" if (t + i) % 4 == 0 else "supported"}
        for t in range(12)
        for i in range(3)
    }
    for unit in judged.values():
        unit["label"] = "unsure" if unit["outcome"] == "abstained" else "ok"
    gold = dict.fromkeys(judged, "supported")
    first = coverage(judged, gold, seed=3, repetitions=300)
    assert first == coverage(judged, gold, seed=3, repetitions=300)
    assert first["abstained_share"]["units"] == 36
    strata = {f"t{t}": "a" if t < 2 else "b" for t in range(12)}
    assert coverage(judged, gold, seed=3, repetitions=300, strata=strata) != first
    responses = {
        f"t{t}": {"outcome": "abstained" if t < 3 else "supported", "label": "x"} for t in range(12)
    }
    found = coverage(responses, dict.fromkeys(responses, "supported"), seed=0, repetitions=50)
    low, high = proportion_confint(3, 12, method="wilson")
    share = found["abstained_share"]
    assert (share["low"], share["high"]) == pytest.approx((low, high), abs=1e-12)
    assert "bootstrap" not in share.get("method", "")


def test_few_traces_widen_intervals_only_as_far_as_each_statistic_can_go() -> None:
    """Catches a floor lost: with three traces the widening for few groups pushes the bootstrap
    bound past what the statistic can take (below 0 for a proportion, below -1 for kappa; without
    the floors -0.38 to -1.07 and -2.47). Eight claims a trace give every denominator at least 5
    units, so each statistic has an interval; balanced accuracy's (MOVER) stays within its
    components' bounds."""
    rng = np.random.default_rng(0)
    pairs = [
        Pair(f"t{t}", bool(rng.random() < 0.5), bool(rng.random() < 0.5))
        for t in range(3)
        for _ in range(8)
    ]
    found = calibration_stats(pairs, repetitions=300)
    assert found["confusion"] == {"tp": 3, "fp": 4, "tn": 7, "fn": 10}  # precision's 7 the least
    for name in ("sensitivity", "specificity", "precision", "accuracy"):
        assert found[name]["low"] == 0.0, name  # reached, and held, by the floor
    assert found["cohen_kappa"]["low"] == -1.0
    balanced = found["balanced_accuracy"]
    assert 0.0 <= balanced["low"] < balanced["value"] < balanced["high"] <= 1.0
    assert all(found[name]["high"] <= 1.0 for name in judge_stats.JUDGE_STATISTICS)


def test_a_good_judges_clustered_accuracy_interval_is_not_dragged_to_zero() -> None:
    """Catches the bootstrap's per-resample denominators summed over all resamples."""
    found = calibration_stats(random_pairs(1), repetitions=200)
    assert found["accuracy"]["value"] > 0.7 and found["accuracy"]["low"] > 0.5


def test_agreement_coefficients_with_missing_ratings_have_no_floor_of_minus_one() -> None:
    """Catches a floor of -1 put on the generalised coefficients (as kappa of the judge has):
    with missing ratings Fleiss' chance agreement counts units rated once, so 100 units rated
    'A' once and one unit rated (A, B) give pa = 0 and pe near 1. By Gwet (2014) eq. 2.26,
    pi_A = (100 + 1/2) / 101, pe = pi_A^2 + pi_B^2, kappa = (0 - pe) / (1 - pe), about -100."""
    from annotate.stats.coefficients import fleiss_measure

    pi_a = 100.5 / 101
    pe = pi_a**2 + (1 - pi_a) ** 2
    got = fleiss_measure([["A", None]] * 100 + [["A", "B"]]).point().value
    assert got == pytest.approx(-pe / (1 - pe)) and got < -100


def test_the_judge_statistics_resample_within_strata():
    """Catches the strata dropped from the judge's resamples: each trace has one unsupported and
    one supported claim, stratum A's traces are judged right and B's wrong, so resampled within
    strata every resample has accuracy 1/2 and the interval is Wilson's floor on 40 of 80
    exactly; resampled across strata it varies, wider. (Accuracy, not balanced accuracy: that is
    MOVER from its components' intervals, never a bootstrap of its own.)"""
    pairs = []
    for i in range(20):
        pairs += [Pair(f"a{i}", True, True), Pair(f"a{i}", False, False)]
        pairs += [Pair(f"b{i}", False, True), Pair(f"b{i}", True, False)]
    strata = {p.trace_id: p.trace_id[0] for p in pairs}
    within = calibration_stats(pairs, seed=3, repetitions=300, strata=strata)["accuracy"]
    across = calibration_stats(pairs, seed=3, repetitions=300)["accuracy"]
    assert within["value"] == across["value"] == 0.5
    low, high = proportion_confint(40, 80, method="wilson")
    assert (within["low"], within["high"]) == (pytest.approx(low), pytest.approx(high))
    assert across["high"] - across["low"] > (high - low) + 0.05


def test_one_unit_a_trace_keeps_wilsons_interval_exactly():
    """Catches the independence test ignored or the unit count lost: with one claim a trace,
    accuracy and sensitivity are statsmodels' Wilson intervals, not the widened bootstrap."""
    pairs = [Pair(f"t{i}", i % 3 == 0, i % 4 == 0) for i in range(40)]
    got = calibration_stats(pairs, seed=0, repetitions=200)
    counts = {c: sum(judge_stats._cell(p) == c for p in pairs) for c in ("tp", "tn", "fp", "fn")}
    low, high = proportion_confint(counts["tp"] + counts["tn"], 40, method="wilson")
    assert (got["accuracy"]["low"], got["accuracy"]["high"]) == (
        pytest.approx(low),
        pytest.approx(high),
    )
    low, high = proportion_confint(counts["tp"], counts["tp"] + counts["fn"], method="wilson")
    assert (got["sensitivity"]["low"], got["sensitivity"]["high"]) == (
        pytest.approx(low),
        pytest.approx(high),
    )


def test_the_seed_makes_the_judges_intervals_repeatable_and_is_named():
    """Catches the seed dropped from the resamples (intervals that change between runs) or
    from the method a reader is shown."""
    pairs = random_pairs(5)
    judged = {(p.trace_id, i): {"outcome": "abstained" if i % 5 == 0 else "unsupported",
                                "label": "x"} for i, p in enumerate(pairs)}  # fmt: skip
    gold = dict.fromkeys(judged, "unsupported")
    first, again = coverage(judged, gold, 7, 200), coverage(judged, gold, 7, 200)
    assert first == again
    stats7 = calibration_stats(pairs, seed=7, repetitions=200)
    assert stats7 == calibration_stats(pairs, seed=7, repetitions=200)
    assert "seed 7" in stats7["cohen_kappa"]["method"]


def test_no_units_say_so():
    """Catches an empty table given a number or another reason."""
    got = calibration_stats([], repetitions=50)
    assert got["accuracy"]["value"] is None and got["accuracy"]["reason"] == "no units"
    none = coverage({("t", 0): {"outcome": "supported", "label": "s"}}, {}, 0, 50)
    assert none["abstained_share"]["value"] is None
    assert none["abstained_share"]["reason"] == "no units with gold"


def test_response_level_reviewer_labels_are_the_response_outcomes():
    """Catches the response level read as claims."""
    evidence = Evidence(
        None,
        BINARY,
        [
            vote("ann", "t1", 0, "supported"),
            vote("ann", "t1", 1, "unsupported"),
            vote("bob", "t1", 0, "supported"),
            vote("bob", "t1", 1, "supported"),
        ],  # fmt: skip
        {},
        {"t1": [0, 1]},
    )
    assert reviewer_labels(evidence, "response", "binary") == {
        "ann": {"t1": UNSUPPORTED},
        "bob": {"t1": SUPPORTED},
    }


def _clustered_abstentions() -> tuple[dict, dict]:
    """Ten traces of four claims; the judge abstained on every claim of traces 0 and 1 only."""
    judged = {
        (f"t{t}", c): {"outcome": "abstained" if t < 2 else "supported", "label": f"l{t}"}
        for t in range(10)
        for c in range(4)
    }
    return judged, dict.fromkeys(judged, "supported")


def test_clustered_abstentions_get_a_seeded_interval_that_stays_above_zero():
    """Catches the seed dropped from the abstention share's resamples (visible here, where the
    trace bootstrap is wider than Wilson's), and the floor at 0 that few traces need."""
    judged, gold = _clustered_abstentions()
    first = coverage(judged, gold, 7, 300)["abstained_share"]
    assert first == coverage(judged, gold, 7, 300)["abstained_share"]
    wilson_low, _ = proportion_confint(8, 40, method="wilson")
    assert first["low"] < wilson_low  # the bootstrap's side, so the seed decides it
    assert "seed 7" in first["method"]
    few = {k: v for k, v in judged.items() if k[0] in ("t0", "t5", "t6")}
    share = coverage(few, gold, 7, 300)["abstained_share"]
    assert share["value"] == pytest.approx(1 / 3) and share["low"] >= 0.0


def test_clustered_accuracy_reaches_out_to_wilson_and_names_its_seed():
    """Catches the unit count lost on the clustered route (no Wilson to widen to) and the seed
    missing from its method: each trace has one right and one wrong claim, so every resample
    has accuracy 1/2 and the interval is statsmodels' Wilson on the 40 claims."""
    pairs = []
    for t in range(20):
        pairs += [Pair(f"t{t}", True, True), Pair(f"t{t}", True, False)]
    got = calibration_stats(pairs, seed=7, repetitions=200)
    low, high = proportion_confint(20, 40, method="wilson")
    assert (got["accuracy"]["low"], got["accuracy"]["high"]) == (
        pytest.approx(low),
        pytest.approx(high),
    )
    assert "seed 7" in got["precision"]["method"]


def test_an_independent_rate_without_a_denominator_says_which():
    """Catches the reason lost when one claim a trace leaves a rate with no denominator."""
    pairs = [Pair(f"t{i}", i % 2 == 0, False) for i in range(10)]
    got = calibration_stats(pairs, repetitions=50)["sensitivity"]
    assert got["value"] is None and got["reason"] == "no unsupported gold in the denominator"


def test_a_proportion_of_one_unit_and_of_none():
    """Catches n = 1 treated as empty, an empty proportion counting a unit, and the method
    name lost: Wilson's interval from statsmodels."""
    from annotate.stats.intervals import proportion, wilson_interval

    assert wilson_interval(1, 1) == pytest.approx(proportion_confint(1, 1, method="wilson"))
    one = proportion(1, 1, "empty")
    assert (one.value, one.units, one.method) == (1.0, 1, "Wilson")
    none = proportion(0, 0, "no claims")
    assert (none.value, none.units, none.reason) == (None, 0, "no claims")


def _vote_with(reviewer: str, index: int, label: str, error_type: str | None) -> dict:
    return {**vote(reviewer, "t1", index, label), "error_type": error_type}


def test_claim_gold_keeps_error_types_and_says_where_each_gold_came_from():
    """Catches the loop stopping at the first adjudicated claim, the adjudication's error type
    dropped, agreed and mixed error types, and each gold's source (README, "Gold")."""
    votes = [
        _vote_with("ann", 0, "unsupported", "fabrication"),  # adjudicated below
        _vote_with("bob", 0, "supported", None),
        _vote_with("ann", 1, "unsupported", "number"),  # same outcome, same error type
        _vote_with("bob", 1, "unsupported", "number"),
        _vote_with("ann", 2, "unsupported", "number"),  # same outcome, two error types
        _vote_with("bob", 2, "not_in_context", "entity"),
        _vote_with("ann", 3, "supported", None),  # disagree, not adjudicated
        _vote_with("bob", 3, "unsupported", "number"),
        _vote_with("ann", 4, "supported", "number"),  # supported: no error type
        _vote_with("bob", 4, "supported", None),
        _vote_with("ann", 5, "unsupported", None),  # unsupported, nobody named an error type
        _vote_with("bob", 5, "unsupported", None),
    ]
    adjudications = {("t1", 0): {"label": "unsupported", "error_type": "fabrication"}}
    gold = claim_gold(Evidence(None, BINARY, votes, adjudications, {"t1": [0, 1, 2, 3, 4, 5]}))
    assert {k: (g.binary, g.error_type, g.source) for k, g in gold.items()} == {
        ("t1", 0): (UNSUPPORTED, "fabrication", "adjudicated"),
        ("t1", 1): (UNSUPPORTED, "number", "unanimous"),
        ("t1", 2): (UNSUPPORTED, "mixed", "same outcome"),
        ("t1", 3): (None, None, "unresolved"),
        ("t1", 4): (SUPPORTED, None, "unanimous"),
        ("t1", 5): (UNSUPPORTED, None, "unanimous"),
    }


# -- the bootstrap interval's machinery (survivors of the mutation run) --------------------------


def _ratio_measure(features, method=None):
    from annotate.stats.intervals import Measure, ratio

    def value(s):
        return ratio(s[..., 0], s[..., 1])

    return Measure(np.asarray(features, float), value, len(features), method=method, floor=0.0)


def _interval_by_hand(features, groups, draws, level=0.95):
    """BCa over the groups' summed features (tests/bca_reference.py), one stratum."""
    names = list(dict.fromkeys(groups))
    group_sums = [
        np.sum([f for f, g in zip(features, groups, strict=True) if g == name], axis=0)
        for name in names
    ]
    return bca_widened(group_sums, draws, 1, level)


def test_the_bootstrap_interval_is_bca_over_groups_widened_for_few_groups():
    """Catches the jackknife taken with a group added instead of left out, the group sums
    misread, the widening or its floor and cap changed, and the default resamples and seed
    (1,000, seed 0) changed: the interval equals BCa transcribed from Efron & Tibshirani (the
    draw that repeats every group once gives the estimate itself: a tie, counted half)."""
    from annotate.stats.intervals import interval
    from annotate.stats.resamples import resample_weights

    rng = np.random.default_rng(12)
    groups = [f"t{k}" for k in range(12) for _ in range(1 + k % 3)]  # 1-3 units a group
    # continuous numerators: no resample ties the estimate (ties are counted half below)
    features = np.column_stack([rng.uniform(0, 1, len(groups)), np.ones(len(groups))])
    measure = _ratio_measure(features, method="over 24 claims")
    stat = interval(measure, groups)
    assert stat == interval(measure, groups, 1000, 0)
    assert stat.method == "over 24 claims; BCa bootstrap over 12 groups, 1000 resamples, seed 0"
    draws = resample_weights(groups, 1000, 0)[0]
    theta, low, high = _interval_by_hand(features, groups, draws)
    assert (stat.value, stat.low, stat.high) == pytest.approx((theta, low, high), rel=1e-9)
    assert stat.units == len(groups)


def test_an_interval_refused_keeps_the_point_its_units_and_method_and_says_why():
    """Catches the reasons lost, the point, units or method dropped when there is no interval,
    and exactly half the resamples defining the statistic refused (the rule is: fewer than
    half)."""
    from annotate.stats.intervals import interval

    features = [[1.0, 2.0], [0.0, 0.0], [0.0, 0.0], [1.0, 0.0]]  # only unit 0 has a denominator
    measure = _ratio_measure(features, method="over 4 claims")
    half = np.array(  # 6 resamples of 4 groups; 3 draw unit 0, the only denominator
        [[1, 1, 1, 1], [2, 0, 1, 1], [1, 2, 1, 0], [0, 2, 1, 1], [0, 1, 2, 1], [0, 1, 1, 2]],
        dtype=float,
    )
    member = np.arange(4)
    stat = interval(measure, [], weights=(half, member, 1))
    assert stat.reason is None and stat.low is not None  # 3 of 6 resamples define it
    fewer = half.copy()
    fewer[1, 0] = 0
    stat = interval(measure, [], weights=(fewer, member, 1))
    assert (stat.value, stat.units, stat.low, stat.high) == (1.0, 4, None, None)
    assert stat.reason == "too few resamples defined the statistic for an interval"
    assert stat.method == "over 4 claims"
    alone = interval(measure, ["a", "b", "c", "d"], weights=(half, member, 4))
    assert (alone.value, alone.units, alone.method) == (1.0, 4, "over 4 claims")
    assert alone.reason == "one group per stratum: nothing to resample for an interval"


def test_bca_levels_at_their_edges():
    """Catches the tie tolerance, the clamp of the bias correction when every resample is above
    (or below) the estimate, an acceleration invented where the jackknife does not vary, and
    the fallback to the plain level where the acceleration would turn the level around."""
    import warnings
    from statistics import NormalDist

    from annotate.stats.intervals import _bca_levels

    normal = NormalDist()
    jack = np.array([0.2, 0.3, 0.4])  # symmetric: no acceleration
    above = np.full(99, 0.5 + 1.5e-9)  # 1.5e-9 above 0.5: above it, not a tie
    z0 = normal.inv_cdf(1 / 100)
    want = tuple(normal.cdf(2 * z0 + normal.inv_cdf(q)) for q in (0.025, 0.975))
    assert _bca_levels(above, 0.5, jack, 0.95) == pytest.approx(want)
    below = np.full(99, 0.4)
    z0 = normal.inv_cdf(99 / 100)
    want = tuple(normal.cdf(2 * z0 + normal.inv_cdf(q)) for q in (0.025, 0.975))
    assert _bca_levels(below, 0.5, jack, 0.95) == pytest.approx(want)
    ties = np.full(99, 0.5 + 5e-10)  # rounding: ties, half counted below, no bias correction
    assert _bca_levels(ties, 0.5, jack, 0.95) == pytest.approx((0.025, 0.975))
    for flat in (np.full(3, 0.3), np.full(3, np.nan)):  # no acceleration, no numpy warning
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert _bca_levels(ties, 0.5, flat, 0.95) == pytest.approx((0.025, 0.975))
    # One jackknife value far above the rest: acceleration near -1/6; with every one of 100,000
    # resamples above the estimate the lower level's a * z passes 1, so it stays the plain 2.5%.
    skewed = np.r_[np.zeros(200), 50.0]
    levels = _bca_levels(np.full(100_000, 0.9), 0.5, skewed, 0.95)
    assert levels[0] == pytest.approx(0.025)
    d = skewed.mean() - skewed
    a = (d**3).sum() / (6 * (d**2).sum() ** 1.5)
    z0 = normal.inv_cdf(1 / 100_001)
    z = z0 + normal.inv_cdf(0.975)
    assert levels[1] == pytest.approx(normal.cdf(z0 + z / (1 - a * z)))


def test_single_group_strata_are_pooled_and_shared_resamples_are_read_only():
    """Catches a lone group kept as a stratum of its own (it could never vary), lone groups
    pooled wrongly, the few-groups widening at one degree of freedom, and the shared resamples
    of a report not shared or left writable."""
    import math

    from scipy.stats import norm, t

    from annotate.stats.intervals import few_groups_factor
    from annotate.stats.resamples import resample_weights, shared_resamples

    draws, member, strata = resample_weights(["a", "b", "c"], 200, 1, ["A", "A", "B"])
    assert strata == 1 and member.tolist() == [0, 1, 2]
    assert (draws.sum(axis=1) == 3).all() and draws[:, 2].std() > 0  # c drawn with a and b
    draws, _, strata = resample_weights(list("abcd"), 200, 1, ["A", "A", "B", "C"])
    assert strata == 2
    assert (draws[:, :2].sum(axis=1) == 2).all() and (draws[:, 2:].sum(axis=1) == 2).all()
    draws, _, strata = resample_weights(list("ab"), 200, 1, ["A", "B"])  # all alone: one
    assert strata == 1 and (draws.sum(axis=1) == 2).all()
    with shared_resamples():
        first = resample_weights(list("abcd"), 50, 3)[0]
        assert resample_weights(list("wxyz"), 50, 3)[0] is first
        with pytest.raises(ValueError):
            first[0, 0] = 9
    assert few_groups_factor(0, 0.95) == 1.0
    assert few_groups_factor(1, 0.95) == pytest.approx(
        math.sqrt(2) * t.ppf(0.975, 1) / norm.ppf(0.975)
    )


def test_ratios_of_fractional_weights_a_point_undefined_and_an_empty_wilson_rate():
    """Catches (mutation run) a ratio whose denominator below 1 (a weighted sum) is replaced by
    1, a point undefined on the whole table losing its units or reason, and a rate with no units
    losing the name of its method."""
    from annotate.stats.intervals import Measure, ratio
    from annotate.stats.rates import wilson_rate

    got = ratio(np.array([0.25, 1.0, 0.0]), np.array([0.5, 0.0, 2.0]))
    assert got[0] == 0.5 and np.isnan(got[1]) and got[2] == 0.0
    nowhere = Measure(np.ones((3, 1)), lambda s: np.full(s.shape[:-1], np.nan), 3)
    point = nowhere.point()
    assert (point.value, point.units, point.reason) == (None, 3, "undefined on these ratings")
    empty = wilson_rate(0, 0, "claims")
    assert (empty.rate, empty.n, empty.method, empty.reason) == (None, 0, "claims", "no units")


def _gold_less(evidence: Evidence, reviewer: str) -> dict:
    """The rule as written: the claims' gold from the evidence without that reviewer's votes."""
    rest = [v for v in evidence.votes if v["reviewer"] != reviewer]
    return claim_gold(Evidence(evidence.sample, evidence.binary, rest, evidence.adjudications))


@pytest.mark.parametrize("seed", range(6))
def test_each_reviewers_gold_is_the_others_votes_gold(seed: int) -> None:
    """Catches a reviewer scored against gold that holds their own vote, an adjudication
    read for only some reviewers, a repeated vote (the latest counts) or an error type lost:
    gold_without_each, on every claim the reviewer labelled, equals claim_gold of the
    evidence less that reviewer's votes."""
    rng = np.random.default_rng(seed)
    labels = [*BINARY, "contradicted"]
    votes, adjudications = [], {}
    for trace in range(40):
        for index in range(int(rng.integers(1, 4))):
            for reviewer in rng.choice(["ana", "ben", "cy", "dee"], int(rng.integers(1, 5)), False):
                for _ in range(int(rng.integers(1, 3))):  # sometimes relabelled
                    given = vote(str(reviewer), f"t{trace}", index, str(rng.choice(labels)))
                    given["error_type"] = rng.choice([None, "", "fabricated", "misread"])
                    votes.append(given)
            if rng.random() < 0.15:
                adjudications[(f"t{trace}", index)] = {
                    "label": str(rng.choice(labels)), "error_type": rng.choice([None, "misread"])
                }  # fmt: skip
    evidence = Evidence("s", {**BINARY, "contradicted": UNSUPPORTED}, votes, adjudications)
    each = gold_without_each(evidence)
    assert set(each) <= {"ana", "ben", "cy", "dee"}
    checked = 0
    for reviewer in ("ana", "ben", "cy", "dee"):
        own = {(v["trace_id"], v["claim_index"]) for v in votes if v["reviewer"] == reviewer}
        expected = {k: g for k, g in _gold_less(evidence, reviewer).items() if k in own}
        assert each.get(reviewer, {}) == expected
        checked += len(expected)
    assert checked > 100
    assert claim_gold(evidence) == _written_out(evidence)


def _written_out(evidence: Evidence) -> dict:
    """README "Gold", claim by claim: adjudicated; else every reviewer's latest label the
    same (unanimous); else one binary outcome (same outcome); else unresolved. The error
    type only on unsupported gold: the reviewers' one error type, or "mixed"."""
    latest: dict = {}
    for v in evidence.votes:
        latest.setdefault((v["trace_id"], v["claim_index"]), {})[v["reviewer"]] = v
    found = {}
    for key, by in latest.items():
        if key in evidence.adjudications:
            d = evidence.adjudications[key]
            found[key] = ClaimGold(
                d["label"], evidence.binary.get(d["label"]), d["error_type"], "adjudicated"
            )
            continue
        labels = sorted({v["label"] for v in by.values()})
        outcomes = sorted({evidence.binary.get(label) for label in labels}, key=str)
        errors = sorted({v["error_type"] for v in by.values() if v["error_type"]})
        full = labels[0] if len(labels) == 1 else None
        binary = outcomes[0] if len(outcomes) == 1 else None
        error = (errors[0] if len(errors) == 1 else "mixed") if errors else None
        source = "unanimous" if full else "same outcome" if binary else "unresolved"
        found[key] = ClaimGold(full, binary, error if binary == UNSUPPORTED else None, source)
    for key, d in evidence.adjudications.items():
        found.setdefault(
            key,
            ClaimGold(d["label"], evidence.binary.get(d["label"]), d["error_type"], "adjudicated"),
        )
    return found
