"""The alternative annotator test (Calderon, Reichart & Dror, ACL 2025): can the LLM judge stand
in for one of the human reviewers? Follows the reference code at github.com/nitaytech/AltTest.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from annotate.errors import UsageError

Labels = Mapping[Hashable, Hashable]
MIN_UNITS_FOR_T = 30  # the paper's FAQ: below 30 units per reviewer, Wilcoxon signed-rank
PASS_RATE = 0.5  # the judge passes when it beats at least half of the reviewers


def alt_test(
    humans: Mapping[str, Labels],
    judge: Labels,
    epsilon: float = 0.15,
    q: float = 0.05,
    min_reviewers: int = 3,
) -> dict[str, Any]:
    """Leave-one-out alt-test on nominal labels; `humans[reviewer][unit]`, `judge[unit]`.

    Uses units the judge labelled and at least two reviewers labelled (None = not labelled).
    For each reviewer j, on j's units: S = share of the other reviewers' labels matched, for the
    judge and for j; W_judge = [S_judge >= S_j], W_j = [S_j >= S_judge], d = W_j - W_judge.
    H0: mean(d) >= epsilon, one-sided t-test (Wilcoxon signed-rank below 30 units), then
    Benjamini-Yekutieli over reviewers at level q. The judge "beats" j where H0 is rejected;
    it passes when it beats at least half of the reviewers. Too few reviewers: passed is None.
    """
    _check(epsilon, q, min_reviewers)
    people = {r: _given(labels) for r, labels in humans.items()}
    verdicts = _given(judge)
    units = usable_units(people, verdicts)
    own = {r: [u for u in labels if u in units] for r, labels in people.items()}
    tested = {r: mine for r, mine in own.items() if mine}
    head = {"epsilon": epsilon, "q": q, "units": len(units), "notes": _notes(people, verdicts, own)}
    if len(tested) < min_reviewers:
        return {**head, **_not_run(len(tested), min_reviewers, len(units))}
    rows = [_reviewer(r, mine, people, verdicts, epsilon) for r, mine in tested.items()]
    for row, adjusted in zip(rows, by_adjust([row["p_value"] for row in rows]), strict=True):
        row["p_adjusted"] = adjusted
        row["rejected"] = adjusted <= q
    return {**head, **_decision(rows, epsilon, q)}


def usable_units(humans: Mapping[str, Labels], judge: Labels) -> set[Hashable]:
    """Units with a judge label and labels from at least two reviewers."""
    reviewers = Counter(unit for labels in humans.values() for unit in labels)
    return {unit for unit, count in reviewers.items() if count >= 2 and unit in judge}


def scores(
    humans: Mapping[str, Labels], judge: Labels, reviewer: str, units: Sequence[Hashable]
) -> tuple[np.ndarray, np.ndarray]:
    """Per unit, the share of the other reviewers' labels matched by the judge and by `reviewer`."""
    others = [labels for r, labels in humans.items() if r != reviewer]
    by_judge, by_reviewer = [], []
    for unit in units:
        rest = [labels[unit] for labels in others if unit in labels]
        by_judge.append(sum(label == judge[unit] for label in rest) / len(rest))
        by_reviewer.append(sum(label == humans[reviewer][unit] for label in rest) / len(rest))
    return np.array(by_judge), np.array(by_reviewer)


def p_value(d: np.ndarray, epsilon: float) -> tuple[str, float]:
    """One-sided p for H0: mean(d) >= epsilon; the test's name and p.

    Below 30 units: the exact Wilcoxon signed-rank test on d - epsilon. A t-test on a constant
    d has no spread (older scipy says NaN): p is its limit, 0 if d < epsilon, else 1.
    """
    if len(d) < MIN_UNITS_FOR_T:
        return "wilcoxon", signed_rank_p(d - epsilon)
    if np.ptp(d) == 0:
        return "t", 0.0 if d[0] < epsilon else 1.0
    return "t", float(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)


def signed_rank_p(x: np.ndarray) -> float:
    """Exact P(T+ <= observed) over the 2^n sign flips; zeros dropped, ties take midranks.

    scipy's own answer with ties is exhaustive permutation up to 13 values (0.5 s at 13) and a
    normal approximation above; this counts the same null distribution in milliseconds.
    """
    x = x[x != 0]
    if len(x) == 0:
        return 1.0  # every difference zero: no evidence against H0
    doubled = np.rint(2 * stats.rankdata(np.abs(x))).astype(int)  # midranks are k/2
    ways = np.zeros(doubled.sum() + 1)
    ways[0] = 1
    for rank in doubled:
        ways[rank:] = ways[rank:] + ways[:-rank]
    return float(ways[: doubled[x > 0].sum() + 1].sum() / ways.sum())


def by_adjust(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Yekutieli adjusted p-values: adjusted <= q rejects the reference's set."""
    return [float(p) for p in stats.false_discovery_control(p_values, method="by")]


def _reviewer(
    reviewer: str,
    units: list[Hashable],
    humans: Mapping[str, Labels],
    judge: Labels,
    epsilon: float,
) -> dict[str, Any]:
    by_judge, by_reviewer = scores(humans, judge, reviewer, units)
    judge_wins = (by_judge >= by_reviewer).astype(float)
    d = (by_reviewer >= by_judge).astype(float) - judge_wins
    test, p = p_value(d, epsilon)
    return {
        "reviewer": reviewer,
        "units": len(units),
        "test": test,
        "p_value": p,
        "judge_advantage": float(judge_wins.mean()),
        "mean_difference": float(d.mean()),
    }


def _decision(rows: list[dict[str, Any]], epsilon: float, q: float) -> dict[str, Any]:
    beaten = sum(row["rejected"] for row in rows)
    rate = beaten / len(rows)
    passed = rate >= PASS_RATE
    can = "can" if passed else "cannot"
    verdict = (
        f"The judge {can} stand in for a reviewer here: it matched the other reviewers at least "
        f"as well as {beaten} of {len(rows)} reviewers did (winning rate {rate:.2f}, "
        f"{PASS_RATE:.2f} needed; epsilon {epsilon:g}, q {q:g})."
    )
    return {
        "reviewers": rows,
        "winning_rate": rate,
        "advantage_probability": float(np.mean([row["judge_advantage"] for row in rows])),
        "passed": passed,
        "verdict": verdict,
        "reason": None,
    }


def _not_run(found: int, needed: int, units: int) -> dict[str, Any]:
    reason = (
        f"The alt-test needs at least {needed} reviewers who labelled units that the judge and "
        f"another reviewer also labelled; found {found} reviewers over {units} such units."
    )
    return {
        "reviewers": [],
        "winning_rate": None,
        "advantage_probability": None,
        "passed": None,
        "verdict": None,
        "reason": reason,
    }


def _notes(
    humans: Mapping[str, Labels], judge: Labels, own: Mapping[str, list[Hashable]]
) -> list[str]:
    labelled = Counter(unit for labels in humans.values() for unit in labels)
    unjudged = sum(unit not in judge for unit in labelled)
    single = sum(count == 1 and unit in judge for unit, count in labelled.items())
    notes = []
    if unjudged:
        notes.append(f"{unjudged} units with reviewer labels have no judge label; skipped.")
    if single:
        notes.append(f"{single} units labelled by only one reviewer; skipped.")
    for reviewer, mine in own.items():
        if not mine:
            notes.append(
                f"Reviewer {reviewer} left out: none of their {len(humans[reviewer])} labelled "
                "units was labelled by the judge and another reviewer."
            )
    return notes


def _given(labels: Labels) -> dict[Hashable, Hashable]:
    return {unit: label for unit, label in labels.items() if label is not None}


def _check(epsilon: float, q: float, min_reviewers: int) -> None:
    if not math.isfinite(epsilon):
        raise UsageError(f"epsilon must be a finite number, not {epsilon!r}.")
    if not 0 < q < 1:
        raise UsageError(f"q must be between 0 and 1, not {q!r}.")
    if min_reviewers < 2:
        raise UsageError(f"min_reviewers must be at least 2 (leave-one-out), not {min_reviewers}.")
