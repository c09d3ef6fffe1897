"""Agreement between reviewers: the `annotate agreement` document, per reviewer and over time.

Builds rating tables from `gold.Evidence` and asks `agreement` for the statistics; every
interval resamples traces, so the claims of one trace move together.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from annotate.accounts.activity import Actor, record_act
from annotate.agreement.measures import NOMINAL_STATS, SCORE_STATS, scale_of
from annotate.agreement.tables import Labels, paired_units, ranks, rating_table, trace_of
from annotate.errors import UsageError
from annotate.ingest.collector import collector_paused
from annotate.labelling.evidence import load_evidence
from annotate.stats import coefficients as stats
from annotate.stats.gold import (
    Evidence,
    gold_without_each,
    response_gold,
    reviewer_labels,
)
from annotate.stats.ratings import Table, is_numeric
from annotate.store import Store
from annotate.store import assignments as settings_sql
from annotate.store import evidence as sql

LEVELS, SCALES = ("claim", "response"), ("binary", "full")
HIGH_AGREEMENT, LOW_KAPPA = 0.8, 0.6
PACE_BREAK = timedelta(minutes=15)  # a longer gap between two labels is a break, not labelling
FAST_FACTOR = 1 / 3  # flagged when a reviewer's seconds per label is below this share of the rest
MIN_SHARED_KEY, MIN_SHARED_DEFAULT = "min_shared_units", 20
GROUP_STATS = {**NOMINAL_STATS, **SCORE_STATS}
PAIR_STATS: dict[str, Callable[[Sequence[Any], Sequence[Any]], stats.Measure]] = {
    "cohen_kappa": stats.cohen_measure,
    "scott_pi": stats.scott_measure,
    "cohen_kappa_linear": lambda a, b: stats.cohen_measure(a, b, "linear"),
    "cohen_kappa_quadratic": lambda a, b: stats.cohen_measure(a, b, "quadratic"),
}
STATISTICS = tuple(GROUP_STATS)
NO_PACE = "no two consecutive labels within 15 minutes of each other: no pace"
NOT_SCORES = "needs numeric ratings (scores such as 1-5); these labels are categories"


def check_scope(level: str, scale: str) -> None:
    if level not in LEVELS:
        raise UsageError(f"--level must be one of {', '.join(LEVELS)}, got {level!r}")
    if scale not in SCALES:
        raise UsageError(f"--scale must be one of {', '.join(SCALES)}, got {scale!r}")
    if level == "response" and scale == "full":
        raise UsageError(
            "a response has a binary outcome only: use --scale binary with --level response"
        )


def _point(name: str, table: Table, measure: stats.Measure | None = None) -> stats.Stat | None:
    """Alpha's point value comes from the `krippendorff` package; the rest from the sums."""
    if name.startswith("krippendorff_alpha"):
        level = name.removeprefix("krippendorff_alpha").strip("_") or "nominal"
        return stats.krippendorff_alpha(table, level, measure)
    return None


def group_statistics(
    table: Table,
    weights: stats.Weights,
    seed: int,
    names: Sequence[str] = STATISTICS,
    scale: Sequence[Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """The many-rater statistics, sharing one set of trace resamples (`weights`); `scale`: the
    rubric's categories (None: the categories used, said in each method)."""
    scores = is_numeric({label for row in table for label in row if label is not None})
    found = {}
    paired = paired_units(table) if not scores else 0
    for name in names:
        if name in SCORE_STATS and not scores:
            found[name] = stats.Stat(None, paired, reason=NOT_SCORES).as_json()
            continue
        measure = GROUP_STATS[name](table, scale)
        point = _point(name, table, measure)
        found[name] = stats.interval(measure, [], 0, seed, weights=weights, point=point).as_json()
    return found


def pairwise(
    table: Table,
    units: Sequence[Any],
    reviewers: Sequence[str],
    strata: Mapping[str, Any],
    repetitions: int,
    seed: int,
) -> dict[str, list[dict[str, Any]]]:
    """Each two-rater statistic for each pair of reviewers with shared units."""
    scores = is_numeric({label for row in table for label in row if label is not None})
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in PAIR_STATS}
    for i, a in enumerate(reviewers):
        for j in range(i + 1, len(reviewers)):
            shared = [k for k, row in enumerate(table) if row[i] is not None and row[j] is not None]
            if not shared:
                continue
            traces = [trace_of(units[k]) for k in shared]
            weights = stats.resample_weights(
                traces, repetitions, seed, [strata.get(t) for t in traces]
            )
            ratings = [table[k][i] for k in shared], [table[k][j] for k in shared]
            for name, build in PAIR_STATS.items():
                if "_kappa_" in name and not scores:
                    stat = stats.Stat(None, len(shared), reason=NOT_SCORES)
                else:
                    stat = stats.interval(build(*ratings), [], 0, seed, weights=weights)
                found[name].append({"a": a, "b": reviewers[j], **stat.as_json()})
    return found


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


@stats.shared_resamples()
def agreement_document(
    evidence: Evidence,
    level: str = "claim",
    scale: str = "binary",
    seed: int = 0,
    repetitions: int = 1000,
    times: Sequence[tuple[str, Any]] = (),
    strata: Mapping[str, Any] | None = None,
    min_shared: int = MIN_SHARED_DEFAULT,
) -> dict[str, Any]:
    """Agreement between reviewers; intervals resample traces within `strata` (trace -> stratum)."""
    strata = strata or {}
    check_scope(level, scale)
    labels = reviewer_labels(evidence, level, scale)
    units, reviewers, table = rating_table(labels)
    traces = [trace_of(u) for u in units]
    trace_strata = [strata.get(t) for t in traces]
    # The traces' resamples are drawn on the other core (stats.draw_ahead) while the parts
    # that do not use them are computed here; the same numbers in the same document.
    stats.draw_ahead(traces, repetitions, seed, trace_strata)
    gold = _gold_without_each(evidence, reviewers, level, scale)
    reviewer_rows = per_reviewer(labels, gold, times, repetitions, seed, min_shared)
    periods = over_time(evidence, labels, level, min(repetitions, 400), seed, ranks(units))
    weights = stats.resample_weights(traces, repetitions, seed, trace_strata)
    paired = paired_units(table)
    document: dict[str, Any] = {
        "level": level,
        "scale": scale,
        "sample": evidence.sample,
        "units": paired,
        "single_rated_units": len(units) - paired,
        "reviewers": reviewers,
        **group_statistics(table, weights, seed, scale=scale_of(evidence, level, scale)),
        **pairwise(table, units, reviewers, strata, repetitions, seed),
        "min_shared_units": min_shared,
    }
    document["prevalence"] = prevalence(labels, document)
    document["per_reviewer"] = reviewer_rows
    document["over_time"] = periods
    return document


@collector_paused()  # its ~30,000 small objects hold no cycles (see rates.view)
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
    strata = sql.strata(store, sample)
    return agreement_document(
        evidence, level, scale, seed, repetitions, times, strata, load_min_shared(store)
    )


def load_min_shared(store: Store) -> int:
    """The fewest shared units on which a reviewer may be flagged (a setting, default 20)."""
    raw = settings_sql.get_setting(store, MIN_SHARED_KEY)
    return int(json.loads(raw)) if raw else MIN_SHARED_DEFAULT


def save_min_shared(store: Store, value: int, actor: Actor | str | None = None) -> None:
    if value < 1:
        raise UsageError(f"the minimum of shared units must be 1 or more, got {value}")
    with store.transaction():
        settings_sql.put_setting(store, MIN_SHARED_KEY, json.dumps(int(value)))
        record_act(store, actor, "setting", MIN_SHARED_KEY, value=int(value))


def without(evidence: Evidence, reviewer: str) -> Evidence:
    """The evidence minus one reviewer's votes: gold that reviewer is scored against."""
    return replace(evidence, votes=[v for v in evidence.votes if v["reviewer"] != reviewer])


def _gold_without_each(
    evidence: Evidence, reviewers: Sequence[str], level: str, scale: str
) -> dict[str, dict[Any, Any]]:
    """reviewer -> the gold they are scored against (from the others' votes), on the scale."""
    if level == "response":
        return {r: response_gold(without(evidence, r)) for r in reviewers}
    each = gold_without_each(evidence)
    field = "full" if scale == "full" else "binary"
    return {
        r: {
            k: value for k, g in each.get(r, {}).items() if (value := getattr(g, field)) is not None
        }
        for r in reviewers
    }


def _agreement_with_others(labels: Labels, reviewer: str) -> tuple[stats.Measure, list[str]]:
    """Per unit the reviewer shares with others: the share of the others who gave the same label.

    Also the traces of those units, for the bootstrap."""
    features, traces = [], []
    rest = [given for r, given in labels.items() if r != reviewer]
    for unit, label in labels[reviewer].items():
        others = [given[unit] for given in rest if unit in given]
        if others:
            features.append([1.0, others.count(label) / len(others)])
            traces.append(unit[0] if isinstance(unit, tuple) else unit)  # trace_of, inlined
    reason = None if features else "shares no claims with another reviewer"

    share = lambda s: stats.ratio(s[..., 1], s[..., 0])  # noqa: E731
    measure = stats.Measure(  # a share, chance 0: at least Wilson's ([1, 1] on full agreement)
        np.array(features).reshape(-1, 2), share, len(features), reason, floor=0.0,
        agreement=lambda s: (share(s), 0 * share(s), share(s)), comparisons=len(features),
    )  # fmt: skip
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
    min_shared: int = MIN_SHARED_DEFAULT,
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
                "shared_units": measure.units,
                "agreement_with_gold": stats.proportion(
                    hits, len(judged), "no claims with gold"
                ).as_json(),
                "seconds_per_label": seconds,
                "labels_per_hour": 3600 / seconds if seconds else None,
                "pace_reason": None if seconds else NO_PACE,
            }
        )
    return flag_outliers(rows, min_shared)


def flag_outliers(
    rows: list[dict[str, Any]], min_shared: int = MIN_SHARED_DEFAULT
) -> list[dict[str, Any]]:
    """Flag a reviewer far from the rest (three or more reviewers, each with `min_shared` units).

    Below the minimum the row says "too few shared units" and raises no flag."""
    for row in rows:
        row["flags"] = []
        row["note"] = None
        if row["shared_units"] < min_shared:
            row["note"] = f"too few shared units ({row['shared_units']} < {min_shared}) to flag"
    enough = [r for r in rows if r["note"] is None]
    if len(rows) < 3:
        return rows
    for row in enough:
        rest = [r for r in enough if r is not row]
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
    evidence: Evidence,
    labels: Labels,
    level: str,
    repetitions: int,
    seed: int,
    rank: Mapping[Any, int] | None = None,
) -> list[dict[str, Any]]:
    """Percent agreement and alpha by the day (or ISO week, over 14+ days) of a unit's last label."""
    last: dict[Any, datetime] = {}
    by_claim = level == "claim"
    for vote in evidence.votes:
        moment = vote["created_at"]
        if not isinstance(moment, datetime):
            continue
        unit = (vote["trace_id"], vote["claim_index"]) if by_claim else vote["trace_id"]
        seen = last.get(unit)
        if seen is None or moment > seen:
            last[unit] = moment
    if not last:
        return []
    weekly = max(last.values()) - min(last.values()) >= timedelta(days=14)
    buckets: dict[str, dict[str, Mapping[Any, Any]]] = defaultdict(dict)
    names: dict[Any, str] = {}  # a day's bucket name, made once per day
    for unit, moment in last.items():
        day = moment.date()
        if day not in names:
            names[day] = _bucket(moment, weekly)
        bucket = buckets[names[day]]
        for reviewer, given in labels.items():
            if unit in given:
                bucket.setdefault(reviewer, {})[unit] = given[unit]  # type: ignore[index]
    rows = []
    for name in sorted(buckets):
        units, _, table = rating_table(buckets[name], rank=rank)
        weights = stats.resample_weights([trace_of(u) for u in units], repetitions, seed)
        row: dict[str, Any] = {"period": name, "units": paired_units(table)}
        for statistic in ("percent_agreement", "krippendorff_alpha"):
            measure = GROUP_STATS[statistic](table)
            row[statistic] = stats.interval(
                measure, [], repetitions, seed, weights=weights
            ).as_json()
        rows.append(row)
    return rows
