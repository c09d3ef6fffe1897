"""SQL for ratings of whole responses on a rubric's ordinal criteria: reviewers' rating events
(append-only; the current rating of a trace, reviewer and criterion is its latest event) and
judges' ratings (imported or from a run). No statistics here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from annotate.store import Store

_EVENT_COLUMNS = (
    "trace_id",
    "criterion",
    "reviewer",
    "score",
    "rubric_version",
    "created_at",
    "origin",
    "import_id",
)
_JUDGE_COLUMNS = (
    "trace_id",
    "judge",
    "criterion",
    "score",
    "explanation",
    "origin",
    "import_id",
    "run_id",
    "rubric_version",
    "model",
    "llm_call_id",
    "created_at",
)
_TYPES = {
    "score": pa.int32(),
    "rubric_version": pa.int32(),
    "import_id": pa.int32(),
    "run_id": pa.int32(),
    "llm_call_id": pa.int64(),
    "created_at": pa.timestamp("us"),
}


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _table(columns: Sequence[str], rows: Sequence[dict[str, Any]], types: dict[str, Any]) -> Any:
    return pa.table(
        {name: pa.array([row.get(name) for row in rows], types.get(name)) for name in columns}
    )


def insert_rating_events(store: Store, rows: Sequence[dict[str, Any]]) -> None:
    """Reviewers' ratings: {trace_id, criterion, reviewer, score (None: skipped),
    rubric_version, origin, import_id?, created_at?}."""
    if not rows:
        return
    stamped = [{"created_at": now(), "import_id": None, **row} for row in rows]
    store.insert_arrow("rating_events", _EVENT_COLUMNS, _table(_EVENT_COLUMNS, stamped, _TYPES))


def insert_judge_ratings(store: Store, rows: Sequence[dict[str, Any]]) -> None:
    """A judge's ratings: {trace_id, judge, criterion, score, origin, ...}."""
    if not rows:
        return
    types = {**_TYPES, "score": pa.float64()}
    stamped = [{"created_at": now(), **row} for row in rows]
    store.insert_arrow("judge_ratings", _JUDGE_COLUMNS, _table(_JUDGE_COLUMNS, stamped, types))


def _sample_join(sample: str | None) -> tuple[str, list[Any]]:
    if sample is None:
        return "", []
    return (
        "JOIN (SELECT DISTINCT trace_id FROM sample_units WHERE sample = ?) s USING (trace_id) ",
        [sample],
    )


def reviewer_ratings(store: Store, criterion: str, sample: str | None) -> list[tuple[Any, ...]]:
    """(trace_id, reviewer, score) of each reviewer's latest rating on `criterion` (skips
    left out), for the traces of `sample` (None: every trace)."""
    join, params = _sample_join(sample)
    return store.fetchall(
        "SELECT trace_id, reviewer, score FROM ("
        "SELECT trace_id, reviewer, score, row_number() OVER (PARTITION BY trace_id, reviewer "
        "ORDER BY created_at DESC, event_id DESC) AS latest FROM rating_events "
        f"{join}WHERE criterion = ?) WHERE latest = 1 AND score IS NOT NULL "
        "ORDER BY trace_id, reviewer",
        [*params, criterion],
    )


def judge_scores(
    store: Store, judge: str, criterion: str, sample: str | None
) -> list[tuple[Any, ...]]:
    """(trace_id, score) of the judge's latest rating on `criterion` of each trace."""
    join, params = _sample_join(sample)
    return store.fetchall(
        "SELECT trace_id, arg_max(score, created_at) FROM judge_ratings "
        f"{join}WHERE judge = ? AND criterion = ? GROUP BY trace_id ORDER BY trace_id",
        [*params, judge, criterion],
    )


def own_ratings(store: Store, trace_id: str, reviewer: str) -> dict[str, int | None]:
    """criterion -> this reviewer's latest score on the trace (None: skipped)."""
    rows = store.fetchall(
        "SELECT criterion, arg_max(score, event_id) FROM rating_events "
        "WHERE trace_id = ? AND reviewer = ? GROUP BY criterion",
        [trace_id, reviewer],
    )
    return {criterion: score for criterion, score in rows}


def rated_criteria(store: Store, sample: str | None = None) -> list[str]:
    """Every criterion some reviewer or judge rated (on the traces of `sample`)."""
    join, params = _sample_join(sample)
    rows = store.fetchall(
        f"SELECT DISTINCT criterion FROM rating_events {join}UNION "
        f"SELECT DISTINCT criterion FROM judge_ratings {join}ORDER BY 1",
        params * 2,
    )
    return [row[0] for row in rows]


def rating_judges(store: Store, sample: str | None = None) -> list[str]:
    join, params = _sample_join(sample)
    rows = store.fetchall(f"SELECT DISTINCT judge FROM judge_ratings {join}ORDER BY judge", params)
    return [row[0] for row in rows]


def trace_slices(store: Store, trace_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """trace -> its feature, risk category and model (the slices ratings are cut by)."""
    if not trace_ids:
        return {}
    rows = store.fetch_dicts(
        "SELECT trace_id, feature, risk_category, model FROM traces "
        "WHERE trace_id IN (SELECT unnest(?))",
        [list(trace_ids)],
    )
    return {row.pop("trace_id"): row for row in rows}


def sample_weights(store: Store, sample: str) -> dict[str, tuple[str, float]]:
    """trace -> (stratum, design weight 1/pi) in `sample`."""
    rows = store.fetchall(
        "SELECT trace_id, first(stratum_key), first(weight) FROM sample_units "
        "WHERE sample = ? GROUP BY trace_id",
        [sample],
    )
    return {trace: (stratum, float(weight)) for trace, stratum, weight in rows}
