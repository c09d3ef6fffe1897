"""The alternative annotator test (Calderon, Reichart & Dror, ACL 2025): can the LLM judge stand
in for one of the human reviewers? Follows the reference code at github.com/nitaytech/AltTest.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy import special

from annotate.errors import UsageError, counted

Labels = Mapping[Hashable, Hashable]
MIN_UNITS = 30  # the authors' code (min_instances_per_human=30) skips a reviewer with fewer
PASS_RATE = 0.5  # the judge passes when it beats at least half of the reviewers


def alt_test(
    humans: Mapping[str, Labels],
    judge: Labels,
    epsilon: float = 0.15,
    q: float = 0.05,
    min_reviewers: int = 3,
    min_units: int = MIN_UNITS,
) -> dict[str, Any]:
    """Leave-one-out alt-test on nominal labels; `humans[reviewer][unit]`, `judge[unit]`.

    Uses units the judge labelled and at least two reviewers labelled (None = not labelled).
    For each reviewer j, on j's units: S = share of the other reviewers' labels matched, for the
    judge and for j; W_judge = [S_judge >= S_j], W_j = [S_j >= S_judge], d = W_j - W_judge.
    H0: mean(d) >= epsilon, one-sided t-test, then Benjamini-Yekutieli over reviewers at level
    q. A reviewer with fewer than `min_units` such units is skipped and the notes say why, as
    the authors' code does (a t-test needs them; an exact Wilcoxon test tests another null).
    The judge "beats" j where H0 is rejected; it passes when it beats at least half of the
    tested reviewers. Too few tested reviewers: passed is None.
    """
    _check(epsilon, q, min_reviewers)
    people = {r: _given(labels) for r, labels in humans.items()}
    verdicts = _given(judge)
    units = usable_units(people, verdicts)
    own = {r: [u for u in labels if u in units] for r, labels in people.items()}
    tested = {r: mine for r, mine in own.items() if len(mine) >= min_units}
    notes = _notes(people, verdicts, own, min_units)
    head = {"epsilon": epsilon, "q": q, "units": len(units), "min_units": min_units, "notes": notes}
    if len(tested) < min_reviewers:
        return {**head, **_not_run(len(tested), min_reviewers, len(units), min_units)}
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
    mine = humans[reviewer]
    by_judge, by_reviewer = [], []
    for unit in units:
        rest = [labels[unit] for labels in others if unit in labels]
        by_judge.append(rest.count(judge[unit]) / len(rest))
        by_reviewer.append(rest.count(mine[unit]) / len(rest))
    return np.array(by_judge), np.array(by_reviewer)


def p_value(d: np.ndarray, epsilon: float) -> float:
    """One-sided t-test p for H0: mean(d) >= epsilon.

    A constant d has no spread (older scipy says NaN): p is its limit, 0 if d < epsilon, else 1.
    """
    if np.ptp(d) == 0:
        return 0.0 if d[0] < epsilon else 1.0
    # scipy.stats.ttest_1samp(d, epsilon, alternative="less") step by step, with the same
    # operations (so the same p to the last bit), without the ~0.3-0.9 s import of scipy.stats.
    n = len(d)
    mean = np.mean(d)
    variance = np.mean((d - mean) ** 2) * (n / (n - 1))
    t = (mean - epsilon) / np.sqrt(variance / n)
    return float(special.stdtr(n - 1, t))


def by_adjust(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Yekutieli adjusted p-values: adjusted <= q rejects the reference's set.

    As scipy.stats.false_discovery_control(method="by"): p_(i) m c(m) / i in rank order, made
    monotone from the largest down, capped at 1."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p)
    rank = np.arange(1, m + 1, dtype=float)
    adjusted = p[order] * (m / rank) * np.sum(1 / rank)
    adjusted = np.minimum.accumulate(adjusted[::-1])[::-1]
    found = np.empty(m)
    found[order] = adjusted
    return [float(x) for x in np.clip(found, 0.0, 1.0)]


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
    return {
        "reviewer": reviewer,
        "units": len(units),
        "test": "t",
        "p_value": p_value(d, epsilon),
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


def _not_run(found: int, needed: int, units: int, min_units: int) -> dict[str, Any]:
    reason = (
        f"The alt-test needs at least {needed} reviewers with {min_units} or more units that "
        f"the judge and another reviewer also labelled; found {found} over {units} such units."
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
    humans: Mapping[str, Labels],
    judge: Labels,
    own: Mapping[str, list[Hashable]],
    min_units: int,
) -> list[str]:
    labelled = Counter(unit for labels in humans.values() for unit in labels)
    unjudged = sum(unit not in judge for unit in labelled)
    single = sum(count == 1 and unit in judge for unit, count in labelled.items())
    notes = []
    if unjudged:
        notes.append(
            f"{counted(unjudged, 'unit')} with reviewer labels but no judge label to compare "
            "(not judged, an abstention, or outside the part scored): skipped."
        )
    if single:
        notes.append(f"{counted(single, 'unit')} labelled by only one reviewer: skipped.")
    for reviewer, mine in own.items():
        if not mine:
            notes.append(
                f"Reviewer {reviewer} left out: none of their {len(humans[reviewer])} labelled "
                "units was labelled by the judge and another reviewer."
            )
        elif len(mine) < min_units:
            notes.append(
                f"Reviewer {reviewer} skipped: {len(mine)} units shared with the judge and "
                f"another reviewer, fewer than the {min_units} a t-test needs (the authors' "
                "minimum per annotator)."
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
