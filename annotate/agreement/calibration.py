"""The judge against human gold: the calibration document, slices, readiness, alt-test.

Positive means unsupported. The numbers come from `stats.judge`; this module reads the
store, pairs verdicts with gold and assembles. A slice with too few gold units says so.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from operator import countOf
from typing import Any

from annotate.accounts.activity import Actor, record_act
from annotate.agreement.reliability import check_scope
from annotate.agreement.tables import ranks, rating_table, trace_of
from annotate.errors import UsageError
from annotate.ingest.collector import collector_paused
from annotate.judge.labels import ABSTAINED
from annotate.labelling.evidence import judge_labels, judged_units, load_evidence
from annotate.sampling.samples import known_sample
from annotate.stats import coefficients as stats
from annotate.stats.gold import (
    UNSUPPORTED,
    Evidence,
    claim_gold,
    response_gold,
    reviewer_labels,
    unresolved,
)
from annotate.stats.judge import (
    JUDGE_STATISTICS,
    Pair,
    calibration_stats,
    confusion,
    coverage,
    draw_calibration_ahead,
)
from annotate.store import Store
from annotate.store import assignments as settings_sql
from annotate.store import evidence as sql

__all__ = ["JUDGE_STATISTICS", "Pair", "calibration", "calibration_stats", "confusion"]
MIN_GOLD = 20
READINESS_KEY = "readiness"
DEFAULT_THRESHOLDS: dict[str, float | None] = {
    "cohen_kappa": 0.6,
    "sensitivity": 0.8,
    "specificity": None,
}
EPSILON = 0.15


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


def threshold_floor(name: str) -> int:
    """The least a readiness threshold may be: kappa can go to -1; sensitivity and
    specificity are shares (0)."""
    return -1 if name == "cohen_kappa" else 0


def save_thresholds(
    store: Store, thresholds: Mapping[str, float | None], actor: Actor | str | None = None
) -> None:
    """Save the readiness thresholds (a lead's act, recorded with its actor)."""
    for name, value in thresholds.items():
        if name not in DEFAULT_THRESHOLDS:
            raise UsageError(f"unknown readiness statistic {name!r}")
        low = threshold_floor(name)
        if value is not None and not low <= value <= 1:
            raise UsageError(f"threshold for {name} must be between {low} and 1, got {value}")
    with store.transaction():
        settings_sql.put_setting(store, READINESS_KEY, json.dumps(dict(thresholds)))
        record_act(store, actor, "setting", READINESS_KEY, value=dict(thresholds))


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


def slice_members(
    pairs: Sequence[Pair], by: Sequence[str]
) -> list[tuple[tuple[Any, ...], list[Pair]]]:
    """Each slice's values and its pairs, in the slice table's order (none without `by`)."""
    if not by:
        return []
    groups: dict[tuple[Any, ...], list[Pair]] = defaultdict(list)
    for pair in pairs:
        groups[tuple(pair.slice_values.get(c) for c in by)].append(pair)
    return sorted(groups.items(), key=lambda item: repr(item[0]))


def slice_table(
    pairs: Sequence[Pair],
    by: Sequence[str],
    thresholds: Mapping[str, float | None],
    seed: int,
    repetitions: int,
    strata: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    rows = []
    for key, members in slice_members(pairs, by):
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
    rank = ranks(units)
    units = [
        u
        for u, row in zip(units, table, strict=True)
        if u in judged and judged[u]["outcome"] != ABSTAINED and len(row) - countOf(row, None) >= 2
    ]
    kept = {r: {u: given[u] for u in units if u in given} for r, given in labels.items()}
    with_judge = {**kept, "judge": {u: judged[u]["outcome"] for u in units}}
    weights = stats.resample_weights([trace_of(u) for u in units], repetitions, seed)
    found: dict[str, Any] = {"units": len(units)}
    for name, raters in (("reviewers", kept), ("reviewers_and_judge", with_judge)):
        _, _, table = rating_table(raters, rank=rank)
        measure = stats.krippendorff_measure(table)
        point = stats.krippendorff_alpha(table, measure=measure)
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
        known = ", ".join(judges) or (
            "none yet (import traces with judge verdicts, or run a rubric as the judge: "
            "annotate judge --sample NAME)"
        )
        raise UsageError(f"no verdicts from judge {judge!r}; judges in the store: {known}")
    if sample is not None:
        known_sample(store, sample)


@collector_paused()  # its ~30,000 small objects hold no cycles (see rates.view)
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
    units: Collection[Any] | None = None,
) -> dict[str, Any]:
    """The `annotate calibration --json` document; positive means unsupported.

    `units`: only these claims are scored (a rubric's held-out or tuning part)."""
    check_scope(level, "binary")
    check_names(store, judge, sample)
    evidence = load_evidence(store, sample)
    judged = judge_labels(store, evidence, judge, level)
    if units is not None:
        judged = {u: v for u, v in judged.items() if u in units}
    traces = sorted({trace_of(u) for u in judged})
    values = settings_sql.slice_values(store, traces, [c for c in by if c != "error_type"])
    return calibration_document(
        evidence, judge, judged, level, by, values, seed, repetitions,
        dict(thresholds or load_thresholds(store)), epsilon, sql.strata(store, sample),
        judged_units(store, evidence, judge, level),
    )  # fmt: skip


@stats.shared_resamples()
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
    judged_total: int | None = None,
) -> dict[str, Any]:
    """Every calibration number from the evidence and the judge's mapped verdicts.

    `judged` may hold only the units of labelled traces; `judged_total` then counts every
    unit the judge judged in scope (None: len(judged))."""
    claims = claim_gold(evidence)
    gold: dict[Any, Any]
    full: dict[Any, str | None]
    error_types: dict[Any, str | None]
    if level == "claim":
        gold = {k: g.binary for k, g in claims.items() if g.binary in ("supported", UNSUPPORTED)}
        full = {k: g.full for k, g in claims.items()}
        error_types = {k: g.error_type for k, g in claims.items()}
    else:
        gold, full, error_types = response_gold(evidence), {}, {}
    pairs = judge_pairs(judged, gold, slice_values, error_types)
    for _, members in slice_members(pairs, by):  # their resamples drawn on the other core
        if len(members) >= MIN_GOLD:  # while the statistics over every pair run here
            draw_calibration_ahead(members, seed, repetitions, strata)
    labels = reviewer_labels(evidence, level, "binary")
    document: dict[str, Any] = {"judge": judge, "level": level, "sample": evidence.sample}
    document.update(calibration_stats(pairs, seed, repetitions, strata))
    document["coverage"] = coverage(judged, gold, seed, repetitions, strata)
    document["readiness"] = readiness(document, thresholds)
    document["thresholds"] = dict(thresholds)
    document["slices"] = slice_table(pairs, by, thresholds, seed, repetitions, strata)
    total = len(judged) if judged_total is None else judged_total
    document["gold"] = gold_summary(claims, gold, judged, level, total)
    document["judge_as_rater"] = judge_as_rater(labels, judged, seed, repetitions)
    judge_votes = {u: v["outcome"] for u, v in judged.items() if v["outcome"] != ABSTAINED}
    from annotate.stats.alt_test import alt_test  # scipy loads only when a calibration runs

    document["alt_test"] = alt_test(labels, judge_votes, epsilon=epsilon)
    document["disagreements"] = disagreements(evidence, judged, gold, full)
    return document


def gold_summary(
    claims: Mapping[Any, Any],
    gold: Mapping[Any, str],
    judged: Mapping[Any, Any],
    level: str,
    judged_total: int,
) -> dict[str, Any]:
    left_open = unresolved(claims)
    unsupported = sum(v == UNSUPPORTED for v in gold.values())
    rate = stats.proportion(unsupported, len(gold), "no units with gold")
    return {
        "rate": {**rate.as_json(), "of": f"{level}s with gold"},
        "units_with_gold": len(gold),
        "judged_without_gold": judged_total - sum(u in gold for u in judged),
        "unresolved_claims": len(left_open),
        "unresolved": [{"trace_id": t, "claim_index": i} for t, i in left_open],
        "excluded_claims": sum(g.binary == "excluded" for g in claims.values()),
        "level": level,
    }


def slice_summary(slices: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The per-slice table a page shows: units, sensitivity, specificity and kappa with their
    lower bounds, the readiness verdict, and why a number is missing."""
    rows = []
    for entry in slices:
        row = {
            "slice": ", ".join(f"{k}={v}" for k, v in entry["slice"].items()),
            "units": entry["n"],
        }
        if entry.get("reason"):
            row["note"] = entry["reason"]
        else:
            for name in ("sensitivity", "specificity", "cohen_kappa"):
                row[name] = entry[name].get("value")
                row[f"{name} low"] = entry[name].get("low")
                if entry[name].get("reason"):
                    row["note"] = entry[name]["reason"]
        row["readiness"] = entry["readiness"]["verdict"]
        rows.append(row)
    return rows
