"""Agreement between reviewers: the `annotate agreement` document, per reviewer and over time.

Builds rating tables from `gold.Evidence` and asks `agreement` for the statistics; every
interval resamples traces, so the claims of one trace move together.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from annotate import agreement as stats
from annotate.errors import UsageError
from annotate.gold import (
    EXCLUDED,
    Evidence,
    claim_gold,
    load_evidence,
    response_gold,
    reviewer_labels,
)
from annotate.store import Store
from annotate.store import evidence as sql

LEVELS, SCALES = ("claim", "response"), ("binary", "full")
HIGH_AGREEMENT, LOW_KAPPA = 0.8, 0.6
PACE_BREAK = timedelta(minutes=15)  # a longer gap between two labels is a break, not labelling
FAST_FACTOR = 1 / 3  # flagged when a reviewer's seconds per label is below this share of the rest
GROUP_STATS = {
    "percent_agreement": stats.percent_agreement_measure,
    "krippendorff_alpha": stats.krippendorff_measure,
    "fleiss_kappa": stats.fleiss_measure,
    "gwet_ac1": stats.gwet_measure,
}

STATISTICS = tuple(GROUP_STATS)
Labels = Mapping[str, Mapping[Any, Any]]  # reviewer -> unit -> label


def check_scope(level: str, scale: str) -> None:
    if level not in LEVELS:
        raise UsageError(f"--level must be one of {', '.join(LEVELS)}, got {level!r}")
    if scale not in SCALES:
        raise UsageError(f"--scale must be one of {', '.join(SCALES)}, got {scale!r}")
    if level == "response" and scale == "full":
        raise UsageError(
            "a response has a binary outcome only: use --scale binary with --level response"
        )


def trace_of(unit: Any) -> str:
    return unit[0] if isinstance(unit, tuple) else unit


def rating_table(labels: Labels, min_ratings: int = 2) -> tuple[list[Any], list[str], list[list]]:
    """Units rated by at least `min_ratings` reviewers x reviewers (None = not rated)."""
    reviewers = sorted(labels)
    units = sorted({u for given in labels.values() for u in given}, key=repr)
    table = [[labels[r].get(u) for r in reviewers] for u in units]
    kept = [i for i, row in enumerate(table) if sum(v is not None for v in row) >= min_ratings]
    return [units[i] for i in kept], reviewers, [table[i] for i in kept]


def group_statistics(
    table: Sequence[Sequence[Any]], units: Sequence[Any], repetitions: int, seed: int
) -> dict[str, dict[str, Any]]:
    """The four many-rater statistics, sharing one set of trace resamples."""
    weights = stats.resample_weights([trace_of(u) for u in units], repetitions, seed)
    found = {}
    for name, build in GROUP_STATS.items():
        point = stats.krippendorff_alpha(table) if name == "krippendorff_alpha" else None
        stat = stats.interval(build(table), [], repetitions, seed, weights=weights, point=point)
        found[name] = stat.as_json()
    return found


def pairwise_kappa(
    table: Sequence[Sequence[Any]],
    units: Sequence[Any],
    reviewers: Sequence[str],
    repetitions: int,
    seed: int,
) -> list[dict[str, Any]]:
    pairs = []
    for i, a in enumerate(reviewers):
        for j in range(i + 1, len(reviewers)):
            shared = [k for k, row in enumerate(table) if row[i] is not None and row[j] is not None]
            if not shared:
                continue
            measure = stats.cohen_measure(
                [table[k][i] for k in shared], [table[k][j] for k in shared]
            )
            groups = [trace_of(units[k]) for k in shared]
            stat = stats.interval(measure, groups, repetitions, seed)
            pairs.append({"a": a, "b": reviewers[j], **stat.as_json()})
    return pairs


def prevalence(labels: Labels, document: Mapping[str, Any]) -> dict[str, Any]:
    """Label shares; when agreement is high but kappa low, the note says why."""
    counts = Counter(label for given in labels.values() for label in given.values())
    total = sum(counts.values())
    shares = {str(k): v / total for k, v in sorted(counts.items(), key=lambda kv: -kv[1])}
    note = None
    agreement = document["percent_agreement"].get("value")
    kappa = document["krippendorff_alpha"].get("value")
    if (
        agreement is not None
        and agreement >= HIGH_AGREEMENT
        and (kappa is None or kappa < LOW_KAPPA)
    ):
        top, share = next(iter(shares.items()))
        note = (
            f"agreement is high ({agreement:.0%}) but alpha is low because {share:.0%} of ratings "
            f"are {top!r}: when one label dominates, agreement by chance is high and "
            "chance-corrected statistics fall"
        )
    return {"labels": shares, "ratings": total, "note": note}


def agreement_document(
    evidence: Evidence,
    level: str = "claim",
    scale: str = "binary",
    seed: int = 0,
    repetitions: int = 1000,
    times: Sequence[tuple[str, Any]] = (),
) -> dict[str, Any]:
    check_scope(level, scale)
    labels = reviewer_labels(evidence, level, scale)
    units, reviewers, table = rating_table(labels)
    document: dict[str, Any] = {
        "level": level,
        "scale": scale,
        "sample": evidence.sample,
        "units": len(units),
        "reviewers": reviewers,
        **group_statistics(table, units, repetitions, seed),
        "cohen_kappa": pairwise_kappa(table, units, reviewers, repetitions, seed),
    }
    document["prevalence"] = prevalence(labels, document)
    gold = {r: _gold_on_scale(without(evidence, r), level, scale) for r in reviewers}
    document["per_reviewer"] = per_reviewer(labels, gold, times, repetitions, seed)
    document["over_time"] = over_time(evidence, labels, level, min(repetitions, 400), seed)
    return document


def agreement(
    store: Store,
    sample: str | None = None,
    level: str = "claim",
    scale: str = "binary",
    seed: int = 0,
    repetitions: int = 1000,
) -> dict[str, Any]:
    """The `annotate agreement --json` document; `sample=None` means every labelled trace."""
    check_scope(level, scale)
    evidence = load_evidence(store, sample)
    times = sql.label_times(store, sample)
    return agreement_document(evidence, level, scale, seed, repetitions, times)


def without(evidence: Evidence, reviewer: str) -> Evidence:
    """The evidence minus one reviewer's votes: gold that reviewer is scored against."""
    return replace(evidence, votes=[v for v in evidence.votes if v["reviewer"] != reviewer])


def _gold_on_scale(evidence: Evidence, level: str, scale: str) -> dict[Any, Any]:
    gold = claim_gold(evidence)
    if level == "response":
        return dict(response_gold(evidence, gold))
    if scale == "full":
        return {k: g.full for k, g in gold.items() if g.full is not None}
    return {k: g.binary for k, g in gold.items() if g.binary not in (None, EXCLUDED)}


def _agreement_with_others(labels: Labels, reviewer: str) -> tuple[stats.Measure, list[str]]:
    """Per unit the reviewer shares with others: the share of the others who gave the same label.

    Also the traces of those units, for the bootstrap."""
    features, traces = [], []
    for unit, label in labels[reviewer].items():
        others = [given[unit] for r, given in labels.items() if r != reviewer and unit in given]
        if others:
            features.append([1.0, sum(o == label for o in others) / len(others)])
            traces.append(trace_of(unit))
    reason = None if features else "shares no claims with another reviewer"
    measure = stats.Measure(
        np.array(features).reshape(-1, 2),
        lambda s: stats.ratio(s[..., 1], s[..., 0]),
        len(features),
        reason,
    )
    return measure, traces


def pace(times: Sequence[Any]) -> float | None:
    """Median seconds between consecutive labels, ignoring breaks longer than PACE_BREAK."""
    gaps = [
        (b - a).total_seconds()
        for a, b in zip(times, times[1:], strict=False)
        if isinstance(a, datetime) and isinstance(b, datetime) and b - a <= PACE_BREAK
    ]
    gaps = [g for g in gaps if g > 0]
    return statistics.median(gaps) if gaps else None


def per_reviewer(
    labels: Labels,
    gold: Mapping[str, Mapping[Any, Any]],
    times: Sequence[tuple[str, Any]],
    repetitions: int,
    seed: int,
) -> list[dict[str, Any]]:
    by_reviewer: dict[str, list[Any]] = defaultdict(list)
    for reviewer, moment in times:
        by_reviewer[reviewer].append(moment)
    rows = []
    for reviewer in sorted(labels):
        own = labels[reviewer]
        measure, traces = _agreement_with_others(labels, reviewer)
        others = stats.interval(measure, traces, repetitions, seed)
        theirs = gold.get(reviewer, {})
        judged = [u for u in own if u in theirs]
        hits = sum(own[u] == theirs[u] for u in judged)
        seconds = pace(by_reviewer.get(reviewer, []))
        rows.append(
            {
                "reviewer": reviewer,
                "labels": len(own),
                "distribution": dict(Counter(str(v) for v in own.values()).most_common()),
                "agreement_with_others": others.as_json(),
                "agreement_with_gold": stats.proportion(
                    hits, len(judged), "no claims with gold"
                ).as_json(),
                "seconds_per_label": seconds,
                "labels_per_hour": 3600 / seconds if seconds else None,
            }
        )
    return flag_outliers(rows)


def flag_outliers(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flag a reviewer far from the rest (needs three or more reviewers to say 'the rest')."""
    for row in rows:
        row["flags"] = []
    if len(rows) < 3:
        return rows
    for row in rows:
        rest = [r for r in rows if r is not row]
        values = [r["agreement_with_others"]["value"] for r in rest]
        values = [v for v in values if v is not None]
        high = row["agreement_with_others"].get("high")
        if values and high is not None and high < statistics.median(values):
            row["flags"].append(
                f"agrees with the others less than they agree with each other: upper bound "
                f"{high:.2f} < the others' median {statistics.median(values):.2f}"
            )
        paces = [r["seconds_per_label"] for r in rest if r["seconds_per_label"]]
        mine = row["seconds_per_label"]
        if paces and mine and mine < FAST_FACTOR * statistics.median(paces):
            row["flags"].append(
                f"labels much faster than the others: {mine:.0f}s per label against "
                f"a median of {statistics.median(paces):.0f}s"
            )
    return rows


def _bucket(moment: datetime, weekly: bool) -> str:
    if weekly:
        monday = moment.date() - timedelta(days=moment.weekday())
        return f"week of {monday.isoformat()}"
    return moment.date().isoformat()


def over_time(
    evidence: Evidence, labels: Labels, level: str, repetitions: int, seed: int
) -> list[dict[str, Any]]:
    """Percent agreement and alpha by the day (or ISO week, over 14+ days) of a unit's last label."""
    last: dict[Any, datetime] = {}
    for vote in evidence.votes:
        key = (vote["trace_id"], vote["claim_index"])
        unit = key if level == "claim" else key[0]
        moment = vote["created_at"]
        if isinstance(moment, datetime) and (unit not in last or moment > last[unit]):
            last[unit] = moment
    if not last:
        return []
    weekly = max(last.values()) - min(last.values()) >= timedelta(days=14)
    buckets: dict[str, dict[str, Mapping[Any, Any]]] = defaultdict(dict)
    for unit, moment in last.items():
        bucket = buckets[_bucket(moment, weekly)]
        for reviewer, given in labels.items():
            if unit in given:
                bucket.setdefault(reviewer, {})[unit] = given[unit]  # type: ignore[index]
    rows = []
    for name in sorted(buckets):
        units, _, table = rating_table(buckets[name])
        weights = stats.resample_weights([trace_of(u) for u in units], repetitions, seed)
        row: dict[str, Any] = {"period": name, "units": len(units)}
        for statistic in ("percent_agreement", "krippendorff_alpha"):
            measure = GROUP_STATS[statistic](table)
            row[statistic] = stats.interval(
                measure, [], repetitions, seed, weights=weights
            ).as_json()
        rows.append(row)
    return rows
