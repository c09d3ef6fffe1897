"""The judge's statistics on (verdict, gold) pairs: confusion, rates, kappa, coverage, intervals.

Pure numbers, no store. Positive means unsupported. Claim-level intervals resample traces
within strata (BCa); proportions never narrower than Wilson, kappa never narrower than the
interval Wilson's on its observed agreement implies (tests/test_coverage_simulation.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotate.stats import coefficients as stats

ABSTAINED = "abstained"  # a judge outcome that is never a class (mapped in annotate.judge.labels)
JUDGE_STATISTICS = (
    "sensitivity",
    "specificity",
    "precision",
    "accuracy",
    "balanced_accuracy",
    "cohen_kappa",
)


@dataclass(frozen=True)
class Pair:
    trace_id: str
    judge_unsupported: bool
    gold_unsupported: bool
    slice_values: dict[str, Any] = field(default_factory=dict)


def _cell(pair: Pair) -> str:
    if pair.judge_unsupported:
        return "tp" if pair.gold_unsupported else "fp"
    return "fn" if pair.gold_unsupported else "tn"


def _one_hot(pairs: Sequence[Pair], cells: Sequence[str]) -> np.ndarray:
    """units x cells: 1 where the unit falls in that cell of the confusion matrix."""
    found = np.array([_cell(p) for p in pairs], dtype=object).reshape(-1, 1)
    return (found == np.array(cells, dtype=object).reshape(1, -1)).astype(float)


def confusion(pairs: Sequence[Pair]) -> dict[str, int]:
    found = Counter(_cell(p) for p in pairs)
    return {cell: found[cell] for cell in ("tp", "fp", "tn", "fn")}


# A statistic whose denominator holds fewer units than this gets no interval: "too few to
# say" (a slice of 13 claims showed sensitivity [0.000, 1.000]). Each statistic's denominator:
# sensitivity the unsupported gold units, specificity the supported, precision the judge's
# unsupported verdicts, accuracy all; balanced accuracy and kappa the smaller gold class.
MIN_DENOMINATOR = 5
DENOMINATORS = {
    "sensitivity": (("tp", "fn"), "unsupported gold unit"),
    "specificity": (("tn", "fp"), "supported gold unit"),
    "precision": (("tp", "fp"), "judge 'unsupported' verdict"),
    "accuracy": (("tp", "fn", "tn", "fp"), "unit"),
}
BALANCED = (
    "MOVER (Zou & Donner 2008): the mean of sensitivity and specificity, each bound from "
    "their own intervals, sqrt((p1 - l1)^2 + (p2 - l2)^2) / 2 below and likewise above"
)


def balanced_accuracy(
    sensitivity: Mapping[str, Any], specificity: Mapping[str, Any]
) -> dict[str, Any]:
    """The mean of sensitivity and specificity, its interval recovered from theirs (MOVER for
    a sum of independent estimates: they count disjoint units, the unsupported and the
    supported gold); each component's is Wilson's, or the trace bootstrap's reaching out to it."""
    parts = (sensitivity, specificity)
    units = sum(int(p.get("units") or 0) for p in parts)
    if any(p.get("value") is None for p in parts):
        return {"value": None, "low": None, "high": None, "units": units,
                "reason": "needs both supported and unsupported gold"}  # fmt: skip
    value = (sensitivity["value"] + specificity["value"]) / 2
    found = {"value": value, "low": None, "high": None, "units": units}
    if any(p.get("low") is None for p in parts):
        return {**found, "reason": "no interval for sensitivity or specificity"}
    below = np.hypot(*(p["value"] - p["low"] for p in parts)) / 2
    above = np.hypot(*(p["high"] - p["value"] for p in parts)) / 2
    low, high = max(0.0, value - below), min(1.0, value + above)
    return {**found, "low": float(low), "high": float(high), "method": BALANCED}


def too_few_to_say(found: dict[str, Any], counts: Mapping[str, int]) -> dict[str, Any]:
    """Withholds the interval of each statistic whose denominator holds fewer than
    MIN_DENOMINATOR units: the number stays, the interval says "too few to say"."""
    positives, negatives = counts["tp"] + counts["fn"], counts["tn"] + counts["fp"]
    smaller = min((positives, "unsupported gold unit"), (negatives, "supported gold unit"))
    for name in JUDGE_STATISTICS:
        cells, noun = DENOMINATORS.get(name, ((), ""))
        n, what = (sum(counts[c] for c in cells), noun) if cells else smaller
        stat = found[name]
        if n < MIN_DENOMINATOR and stat.get("value") is not None:
            reason = f"too few to say: {n} {what}{'' if n == 1 else 's'} (< {MIN_DENOMINATOR})"
            found[name] = {**stat, "low": None, "high": None, "reason": reason}
    return found


def _rate_measure(pairs: Sequence[Pair], hit: str, miss: str, reason: str) -> stats.Measure:
    """hit / (hit + miss) as per-unit sums, for the bootstrap."""
    features = _one_hot(pairs, (hit, miss))
    totals = features.sum(axis=0)
    return stats.Measure(
        features,
        lambda s: stats.ratio(s[..., 0], s[..., 0] + s[..., 1]),
        int(totals.sum()),
        None if totals.sum() else reason,
        floor=0.0,
    )


def accuracy_measure(pairs: Sequence[Pair]) -> stats.Measure:
    features = _one_hot(pairs, ("tp", "tn", "fp", "fn"))
    value = lambda s: stats.ratio(s[..., 0] + s[..., 1], s.sum(axis=-1))  # noqa: E731
    return stats.Measure(features, value, len(pairs), None if pairs else "no units", floor=0.0)


RATES = {  # statistic -> (hit cell, miss cell, why undefined)
    "sensitivity": ("tp", "fn", "no unsupported gold in the denominator"),
    "specificity": ("tn", "fp", "no supported gold in the denominator"),
    "precision": ("tp", "fp", "no judge 'unsupported' verdicts in the denominator"),
}


def kappa_measure(pairs: Sequence[Pair]) -> stats.Measure:
    """Cohen's kappa of judge and gold; undefined (not 0) when gold has one class only.

    With one gold class kappa is 0 whatever the judge does: a number that says nothing.
    """
    features = _one_hot(pairs, ("tp", "fp", "tn", "fn"))

    def agreement(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        tp, fp, tn, fn = (s[..., i] for i in range(4))
        n = tp + fp + tn + fn
        gold_u, judge_u = tp + fn, tp + fp
        with np.errstate(divide="ignore", invalid="ignore"):
            observed = (tp + tn) / n
            expected = (gold_u * judge_u + (n - gold_u) * (n - judge_u)) / n**2
        return observed, expected, observed  # no weights: the agreement is exact

    def value(s: np.ndarray) -> np.ndarray:
        observed, expected, _ = agreement(s)
        gold_u, n = s[..., 0] + s[..., 3], s.sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = (observed - expected) / (1 - expected)
        both = (gold_u > 0) & (gold_u < n)
        return np.where(both, kappa, np.nan)  # with both gold classes, 1 - expected >= 1/n

    totals = features.sum(axis=0)
    reason = None
    if not len(pairs):
        reason = "no units with gold and a verdict"
    elif not totals[0] + totals[3]:
        reason = "no unsupported claims in gold: kappa is undefined"
    elif not totals[1] + totals[2]:
        reason = "no supported claims in gold: kappa is undefined"
    elif not totals[0] + totals[1] or not totals[2] + totals[3]:
        reason = "the judge gave one verdict only: kappa is undefined"
    # kappa >= -1. Its interval: the BCa bootstrap over traces, never narrower than what Wilson's
    # on the observed agreement over the len(pairs) units implies (chance agreement held), as a
    # proportion's is never narrower than Wilson's: a bootstrap of perfect agreement is [1, 1].
    # n is every unit (claim), as for the proportions: the bootstrap handles the clustering.
    n = len(pairs)
    return stats.Measure(features, value, n, reason, None, -1.0, agreement, comparisons=n)


def is_independent(pairs: Sequence[Pair]) -> bool:
    """One unit per trace: Wilson's independence holds (response level, one claim a trace)."""
    return len({p.trace_id for p in pairs}) == len(pairs)


def _pair_groups(
    pairs: Sequence[Pair], strata: Mapping[str, Any] | None, repetitions: int, seed: int
) -> tuple[list[str], int, int, list[Any]]:
    """calibration_stats' resamples: traces within their strata."""
    traces = [p.trace_id for p in pairs]
    return traces, repetitions, seed, [(strata or {}).get(t) for t in traces]


def draw_calibration_ahead(
    pairs: Sequence[Pair],
    seed: int = 0,
    repetitions: int = 1000,
    strata: Mapping[str, Any] | None = None,
) -> None:
    """Start drawing calibration_stats(pairs, ...)'s resamples on the other core
    (stats.draw_ahead): the same numbers, drawn while the statistics before it run."""
    stats.draw_ahead(*_pair_groups(pairs, strata, repetitions, seed))


def calibration_stats(
    pairs: Sequence[Pair],
    seed: int = 0,
    repetitions: int = 1000,
    strata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The judge's statistics on (verdict, gold) pairs; positive means unsupported.

    Claims of one trace are not independent (a judge's errors cluster within a trace), so
    every statistic gets a BCa bootstrap that resamples traces within strata. Only where
    each trace gives one unit do proportions keep Wilson's interval.
    """
    counts = confusion(pairs)
    weights = stats.resample_weights(*_pair_groups(pairs, strata, repetitions, seed))
    measures = {name: _rate_measure(pairs, *cells) for name, cells in RATES.items()}
    measures["accuracy"] = accuracy_measure(pairs)
    measures["cohen_kappa"] = kappa_measure(pairs)
    independent = is_independent(pairs)
    found: dict[str, Any] = {"n": len(pairs), "confusion": counts}
    for name in JUDGE_STATISTICS:
        if name == "balanced_accuracy":  # after its components: sensitivity and specificity
            found[name] = balanced_accuracy(found["sensitivity"], found["specificity"])
        elif name == "cohen_kappa":
            found[name] = _interval(measures[name], weights, seed)
        elif independent:
            found[name] = _wilson(name, counts, len(pairs))
        else:
            found[name] = widened(
                _interval(measures[name], weights, seed), _wilson(name, counts, len(pairs))
            )
    return too_few_to_say(found, counts)


def widened(boot: dict[str, Any], wilson: dict[str, Any]) -> dict[str, Any]:
    """The trace bootstrap's interval, reaching out to Wilson's bounds where those are wider.

    Clustering within traces can only widen the honest interval beyond Wilson's (which
    assumes independent claims); the bootstrap alone collapses when a proportion is 0 or 1
    in the sample (every resample agrees) and runs short with few positives.
    """
    if wilson.get("low") is None:
        return boot
    if boot.get("low") is None:
        return {**wilson, "method": f"Wilson (no bootstrap interval: {boot.get('reason')})"}
    return {
        **boot,
        "low": min(boot["low"], wilson["low"]),
        "high": max(boot["high"], wilson["high"]),
        "method": f"{boot['method']}, widened to Wilson's bounds where those are wider",
    }


def _wilson(name: str, counts: Mapping[str, int], n: int) -> dict[str, Any]:
    if name == "accuracy":
        return stats.proportion(counts["tp"] + counts["tn"], n, "no units").as_json()
    hit, miss, reason = RATES[name]
    return stats.proportion(counts[hit], counts[hit] + counts[miss], reason).as_json()


def _interval(measure: stats.Measure, weights: stats.Weights, seed: int) -> dict[str, Any]:
    return stats.interval(measure, [], 0, seed, weights=weights).as_json()


def coverage(
    judged: Mapping[Any, Mapping[str, Any]],
    gold: Mapping[Any, str],
    seed: int,
    repetitions: int,
    strata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """How often the judge abstained on units with gold: never a class, reported here instead."""
    units = sorted((u for u in judged if u in gold), key=repr)
    abstained = [judged[u]["outcome"] == ABSTAINED for u in units]
    labels = Counter(judged[u]["label"] for u, a in zip(units, abstained, strict=True) if a)
    traces = [(u[0] if isinstance(u, tuple) else u) for u in units]
    if len(set(traces)) == len(traces):
        share = stats.proportion(sum(abstained), len(units), "no units with gold").as_json()
    else:
        measure = stats.Measure(
            np.column_stack([np.ones(len(units)), abstained]).reshape(-1, 2).astype(float),
            lambda s: stats.ratio(s[..., 1], s[..., 0]),
            len(units),
            None if units else "no units with gold",
            floor=0.0,
        )
        weights = stats.resample_weights(
            traces, repetitions, seed, [(strata or {}).get(t) for t in traces]
        )
        share = widened(
            _interval(measure, weights, seed),
            stats.proportion(sum(abstained), len(units), "no units with gold").as_json(),
        )
    return {
        "units": len(units),
        "answered": len(units) - sum(abstained),
        "abstained": sum(abstained),
        "abstained_share": share,
        "abstained_labels": dict(labels.most_common()),
    }
