"""The judge against human gold: confusion, rates with intervals, slices, readiness, alt-test.

Positive means unsupported. Proportions get Wilson intervals; balanced accuracy and
Cohen's kappa a seeded bootstrap over traces. A slice with too few gold units says so.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotate import agreement as stats
from annotate.errors import UsageError
from annotate.gold import (
    UNSUPPORTED,
    Evidence,
    claim_gold,
    judge_labels,
    load_evidence,
    response_gold,
    reviewer_labels,
    unresolved,
)
from annotate.judge_labels import ABSTAINED
from annotate.reliability import check_scope, rating_table, trace_of
from annotate.store import Store
from annotate.store import assignments as settings_sql
from annotate.store import evidence as sql
from annotate.store.samples import sample_row

MIN_GOLD = 20
JUDGE_STATISTICS = (
    "sensitivity",
    "specificity",
    "precision",
    "accuracy",
    "balanced_accuracy",
    "cohen_kappa",
)
READINESS_KEY = "readiness"
DEFAULT_THRESHOLDS: dict[str, float | None] = {
    "cohen_kappa": 0.6,
    "sensitivity": 0.8,
    "specificity": None,
}
EPSILON = 0.15


@dataclass(frozen=True)
class Pair:
    trace_id: str
    judge_unsupported: bool
    gold_unsupported: bool
    slice_values: dict[str, Any] = field(default_factory=dict)


def _proportion(hits: int, n: int, what: str) -> dict[str, Any]:
    return stats.proportion(hits, n, f"no {what} in the denominator").as_json()


def _cell(pair: Pair) -> str:
    if pair.judge_unsupported:
        return "tp" if pair.gold_unsupported else "fp"
    return "fn" if pair.gold_unsupported else "tn"


def _one_hot(pairs: Sequence[Pair], cells: Sequence[str]) -> np.ndarray:
    """units x cells: 1 where the unit falls in that cell of the confusion matrix."""
    rows = [[_cell(p) == c for c in cells] for p in pairs]
    return np.array(rows, dtype=float).reshape(-1, len(cells))


def confusion(pairs: Sequence[Pair]) -> dict[str, int]:
    found = Counter(_cell(p) for p in pairs)
    return {cell: found[cell] for cell in ("tp", "fp", "tn", "fn")}


def balanced_accuracy_measure(pairs: Sequence[Pair]) -> stats.Measure:
    """Per unit one-hot [tp, fn, tn, fp]: the mean of sensitivity and specificity."""
    features = _one_hot(pairs, ("tp", "fn", "tn", "fp"))

    def value(s: np.ndarray) -> np.ndarray:
        sensitivity = stats.ratio(s[..., 0], s[..., 0] + s[..., 1])
        specificity = stats.ratio(s[..., 2], s[..., 2] + s[..., 3])
        return (sensitivity + specificity) / 2

    totals = features.sum(axis=0)
    reason = None
    if not (totals[0] + totals[1]) or not (totals[2] + totals[3]):
        reason = "needs both supported and unsupported gold"
    return stats.Measure(features, value, len(pairs), reason)


def _rate_measure(pairs: Sequence[Pair], hit: str, miss: str, reason: str) -> stats.Measure:
    """hit / (hit + miss) as per-unit sums, for the bootstrap."""
    features = _one_hot(pairs, (hit, miss))
    totals = features.sum(axis=0)
    return stats.Measure(
        features,
        lambda s: stats.ratio(s[..., 0], s[..., 0] + s[..., 1]),
        int(totals.sum()),
        None if totals.sum() else reason,
    )


def accuracy_measure(pairs: Sequence[Pair]) -> stats.Measure:
    features = _one_hot(pairs, ("tp", "tn", "fp", "fn"))
    value = lambda s: stats.ratio(s[..., 0] + s[..., 1], s.sum(axis=-1))  # noqa: E731
    return stats.Measure(features, value, len(pairs), None if pairs else "no units")


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

    def value(s: np.ndarray) -> np.ndarray:
        tp, fp, tn, fn = (s[..., i] for i in range(4))
        n = tp + fp + tn + fn
        gold_u, judge_u = tp + fn, tp + fp
        with np.errstate(divide="ignore", invalid="ignore"):
            observed = (tp + tn) / n
            expected = (gold_u * judge_u + (n - gold_u) * (n - judge_u)) / n**2
            kappa = (observed - expected) / (1 - expected)
        both = (gold_u > 0) & (gold_u < n)
        return np.where(both & (expected < 1 - 1e-12), kappa, np.nan)

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
    return stats.Measure(features, value, len(pairs), reason)


def is_independent(pairs: Sequence[Pair]) -> bool:
    """One unit per trace: Wilson's independence holds (response level, one claim a trace)."""
    return len({p.trace_id for p in pairs}) == len(pairs)


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
    traces = [p.trace_id for p in pairs]
    weights = stats.resample_weights(
        traces, repetitions, seed, [(strata or {}).get(t) for t in traces]
    )
    measures = {name: _rate_measure(pairs, *cells) for name, cells in RATES.items()}
    measures["accuracy"] = accuracy_measure(pairs)
    measures["balanced_accuracy"] = balanced_accuracy_measure(pairs)
    measures["cohen_kappa"] = kappa_measure(pairs)
    independent = is_independent(pairs)
    found: dict[str, Any] = {"n": len(pairs), "confusion": counts}
    for name in JUDGE_STATISTICS:
        if name not in (*RATES, "accuracy"):
            found[name] = _interval(measures[name], weights, seed)
        elif independent:
            found[name] = _wilson(name, counts, len(pairs))
        else:
            found[name] = widened(
                _interval(measures[name], weights, seed), _wilson(name, counts, len(pairs))
            )
    return found


def widened(boot: dict[str, Any], wilson: dict[str, Any]) -> dict[str, Any]:
    """The trace bootstrap's interval, reaching out to Wilson's bounds where those are wider.

    Clustering within traces can only widen the honest interval beyond Wilson's (which
    assumes independent claims); the bootstrap alone collapses when a proportion is 0 or 1
    in the sample (every resample agrees) and runs short with few positives.
    """
    if boot.get("low") is None or wilson.get("low") is None:
        return boot
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


def readiness(
    document: Mapping[str, Any], thresholds: Mapping[str, float | None]
) -> dict[str, Any]:
    """Ready only if every set threshold is met by the statistic's lower bound, not its point."""
    checks, ready = [], True
    for name, threshold in thresholds.items():
        if threshold is None:
            continue
        low = document.get(name, {}).get("low")
        passed = low is not None and low >= threshold
        ready = ready and passed
        checks.append({"statistic": name, "threshold": threshold, "low": low, "passed": passed})
    if not checks:
        return {"ready": None, "checks": [], "verdict": "no thresholds set"}
    failed = [str(c["statistic"]) for c in checks if not c["passed"]]
    verdict = (
        "ready: every lower bound meets its threshold"
        if ready
        else "not ready: lower bound below threshold or undefined for " + ", ".join(failed)
    )
    return {"ready": ready, "checks": checks, "verdict": verdict}


def load_thresholds(store: Store) -> dict[str, float | None]:
    raw = settings_sql.get_setting(store, READINESS_KEY)
    saved = json.loads(raw) if raw else {}
    return {**DEFAULT_THRESHOLDS, **{k: v for k, v in saved.items() if k in DEFAULT_THRESHOLDS}}


def save_thresholds(store: Store, thresholds: Mapping[str, float | None]) -> None:
    for name, value in thresholds.items():
        if name not in DEFAULT_THRESHOLDS:
            raise UsageError(f"unknown readiness statistic {name!r}")
        if value is not None and not -1 <= value <= 1:
            raise UsageError(f"threshold for {name} must be between -1 and 1, got {value}")
    settings_sql.put_setting(store, READINESS_KEY, json.dumps(dict(thresholds)))


def judge_pairs(
    judged: Mapping[Any, Mapping[str, Any]],
    gold: Mapping[Any, str],
    slice_values: Mapping[str, Mapping[str, Any]],
    error_types: Mapping[Any, str | None],
) -> list[Pair]:
    pairs = []
    for unit, verdict in sorted(judged.items(), key=lambda item: repr(item[0])):
        if unit not in gold or verdict["outcome"] == ABSTAINED:
            continue
        values = {**slice_values.get(trace_of(unit), {}), "error_type": error_types.get(unit)}
        pairs.append(
            Pair(
                trace_of(unit), verdict["outcome"] == UNSUPPORTED, gold[unit] == UNSUPPORTED, values
            )
        )
    return pairs


def slice_table(
    pairs: Sequence[Pair],
    by: Sequence[str],
    thresholds: Mapping[str, float | None],
    seed: int,
    repetitions: int,
    strata: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    if not by:
        return []
    groups: dict[tuple[Any, ...], list[Pair]] = defaultdict(list)
    for pair in pairs:
        groups[tuple(pair.slice_values.get(c) for c in by)].append(pair)
    rows = []
    for key, members in sorted(groups.items(), key=lambda item: repr(item[0])):
        entry: dict[str, Any] = {"slice": dict(zip(by, key, strict=True))}
        if len(members) < MIN_GOLD:
            entry.update(
                n=len(members),
                reason=f"too few gold units ({len(members)} < {MIN_GOLD}) for a number",
                readiness={
                    "ready": False,
                    "checks": [],
                    "verdict": "not ready: too few gold units",
                },
            )
        else:
            entry.update(calibration_stats(members, seed, repetitions, strata))
            entry["readiness"] = readiness(entry, thresholds)
        rows.append(entry)
    return rows


def judge_as_rater(
    labels: Mapping[str, Mapping[Any, Any]],
    judged: Mapping[Any, Mapping[str, Any]],
    seed: int,
    repetitions: int,
) -> dict[str, Any]:
    """Alpha of the reviewers alone beside alpha with the judge as one more rater, same units."""
    units, _, table = rating_table(labels)
    units = [
        u
        for u, row in zip(units, table, strict=True)
        if u in judged
        and judged[u]["outcome"] != ABSTAINED
        and sum(v is not None for v in row) >= 2
    ]
    kept = {r: {u: given[u] for u in units if u in given} for r, given in labels.items()}
    with_judge = {**kept, "judge": {u: judged[u]["outcome"] for u in units}}
    weights = stats.resample_weights([trace_of(u) for u in units], repetitions, seed)
    found: dict[str, Any] = {"units": len(units)}
    for name, raters in (("reviewers", kept), ("reviewers_and_judge", with_judge)):
        _, _, table = rating_table(raters)
        measure = stats.krippendorff_measure(table)
        point = stats.krippendorff_alpha(table)
        found[name] = stats.interval(
            measure, [], repetitions, seed, weights=weights, point=point
        ).as_json()
    return found


def disagreements(
    evidence: Evidence,
    judged: Mapping[Any, Mapping[str, Any]],
    pairs_gold: Mapping[Any, str],
    full_gold: Mapping[Any, str | None],
) -> list[dict[str, Any]]:
    found = []
    for unit, verdict in sorted(judged.items(), key=lambda item: repr(item[0])):
        gold = pairs_gold.get(unit)
        if gold is None or verdict["outcome"] in (ABSTAINED, gold):
            continue
        claim_index = unit[1] if isinstance(unit, tuple) else None
        found.append(
            {
                "trace_id": trace_of(unit),
                "claim_index": claim_index,
                "claim": evidence.texts.get(unit) if claim_index is not None else None,
                "judge_label": verdict["label"],
                "judge_outcome": verdict["outcome"],
                "explanation": verdict.get("explanation"),
                "gold": gold,
                "gold_label": full_gold.get(unit),
                "kind": "missed" if gold == UNSUPPORTED else "false alarm",
            }
        )
    return found


def check_names(store: Store, judge: str, sample: str | None) -> None:
    judges = settings_sql.judge_names(store)
    if judge not in judges:
        known = ", ".join(judges) or "none yet (import traces with judge verdicts)"
        raise UsageError(f"no verdicts from judge {judge!r}; judges in the store: {known}")
    if sample is not None and sample_row(store, sample) is None:
        raise UsageError(f"no sample named {sample!r}; `annotate samples` lists them")


def calibration(
    store: Store,
    judge: str,
    sample: str | None = None,
    level: str = "claim",
    by: Sequence[str] = (),
    seed: int = 0,
    repetitions: int = 1000,
    thresholds: Mapping[str, float | None] | None = None,
    epsilon: float = EPSILON,
) -> dict[str, Any]:
    """The `annotate calibration --json` document; positive means unsupported."""
    check_scope(level, "binary")
    check_names(store, judge, sample)
    evidence = load_evidence(store, sample)
    judged = judge_labels(store, evidence, judge, level)
    traces = sorted({trace_of(u) for u in judged})
    values = settings_sql.slice_values(store, traces, [c for c in by if c != "error_type"])
    return calibration_document(
        evidence, judge, judged, level, by, values, seed, repetitions,
        dict(thresholds or load_thresholds(store)), epsilon, sql.strata(store, sample),
    )  # fmt: skip


def calibration_document(
    evidence: Evidence,
    judge: str,
    judged: Mapping[Any, Mapping[str, Any]],
    level: str,
    by: Sequence[str],
    slice_values: Mapping[str, Mapping[str, Any]],
    seed: int,
    repetitions: int,
    thresholds: Mapping[str, float | None],
    epsilon: float,
    strata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every calibration number from the evidence and the judge's mapped verdicts."""
    claims = claim_gold(evidence)
    gold: dict[Any, Any]
    full: dict[Any, str | None]
    error_types: dict[Any, str | None]
    if level == "claim":
        gold = {k: g.binary for k, g in claims.items() if g.binary in ("supported", UNSUPPORTED)}
        full = {k: g.full for k, g in claims.items()}
        error_types = {k: g.error_type for k, g in claims.items()}
    else:
        gold, full, error_types = dict(response_gold(evidence, claims)), {}, {}
    pairs = judge_pairs(judged, gold, slice_values, error_types)
    labels = reviewer_labels(evidence, level, "binary")
    document: dict[str, Any] = {"judge": judge, "level": level, "sample": evidence.sample}
    document.update(calibration_stats(pairs, seed, repetitions, strata))
    document["coverage"] = coverage(judged, gold, seed, repetitions, strata)
    document["readiness"] = readiness(document, thresholds)
    document["thresholds"] = dict(thresholds)
    document["slices"] = slice_table(pairs, by, thresholds, seed, repetitions, strata)
    document["gold"] = gold_summary(claims, gold, judged, level)
    document["judge_as_rater"] = judge_as_rater(labels, judged, seed, repetitions)
    judge_votes = {u: v["outcome"] for u, v in judged.items() if v["outcome"] != ABSTAINED}
    from annotate.alt_test import alt_test  # scipy loads only when a calibration runs

    document["alt_test"] = alt_test(labels, judge_votes, epsilon=epsilon)
    document["disagreements"] = disagreements(evidence, judged, gold, full)
    return document


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
    traces = [trace_of(u) for u in units]
    if len(set(traces)) == len(traces):
        share = stats.proportion(sum(abstained), len(units), "no units with gold").as_json()
    else:
        measure = stats.Measure(
            np.column_stack([np.ones(len(units)), abstained]).reshape(-1, 2).astype(float),
            lambda s: stats.ratio(s[..., 1], s[..., 0]),
            len(units),
            None if units else "no units with gold",
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


def gold_summary(
    claims: Mapping[Any, Any], gold: Mapping[Any, str], judged: Mapping[Any, Any], level: str
) -> dict[str, Any]:
    left_open = unresolved(claims)
    unsupported = sum(v == UNSUPPORTED for v in gold.values())
    rate = stats.proportion(unsupported, len(gold), "no units with gold")
    return {
        "rate": {**rate.as_json(), "of": f"{level}s with gold"},
        "units_with_gold": len(gold),
        "judged_without_gold": sum(u not in gold for u in judged),
        "unresolved_claims": len(left_open),
        "unresolved": [{"trace_id": t, "claim_index": i} for t, i in left_open],
        "excluded_claims": sum(g.binary == "excluded" for g in claims.values()),
        "level": level,
    }
