"""SQL for the store at a glance: counts of traces, claims, verdicts and labels, by slice."""

from __future__ import annotations

from typing import Any

from annotate.store import Store
from annotate.store.imports import list_imports

NO_VALUE = "(none)"
_SLICE_COLUMNS = ("feature", "risk_category", "model")  # closed set: safe as identifiers


def count_by(store: Store, column: str) -> dict[str, int]:
    if column not in _SLICE_COLUMNS:
        raise ValueError(f"cannot count by {column!r}")
    rows = store.fetchall(
        f"SELECT {column}, count(*) AS n FROM traces GROUP BY {column} ORDER BY n DESC, {column}"
    )
    return {(value if value is not None else NO_VALUE): int(n) for value, n in rows}


def store_status(store: Store) -> dict[str, Any]:
    """The `annotate status --json` document; its names are a contract."""
    traces, judgeable = store.fetchone(
        "SELECT count(*), count(*) FILTER (WHERE judgeable) FROM traces"
    ) or (0, 0)
    with_claims = store.scalar("SELECT count(DISTINCT trace_id) FROM claims")
    with_verdicts = store.scalar("SELECT count(DISTINCT trace_id) FROM judge_verdicts")
    return {
        "traces": int(traces),
        "judgeable": int(judgeable),
        "claims": int(store.scalar("SELECT count(*) FROM claims")),
        "judge_verdicts": int(store.scalar("SELECT count(*) FROM judge_verdicts")),
        "judge_verdicts_by_origin": {
            origin: int(n)
            for origin, n in store.fetchall(
                "SELECT origin, count(*) FROM judge_verdicts GROUP BY origin ORDER BY origin"
            )
        },
        "label_events": int(store.scalar("SELECT count(*) FROM label_events")),
        "traces_with_claims": int(with_claims),
        "traces_with_judge_verdicts": int(with_verdicts),
        "by_feature": count_by(store, "feature"),
        "by_risk_category": count_by(store, "risk_category"),
        "by_model": count_by(store, "model"),
        "imports": [
            {
                "id": row["id"],
                "kind": row["kind"],
                "path": row["path"],
                "format": row["format"],
                "imported": row["imported"],
                "rejected": row["rejected"],
                "duplicates": row["duplicates"],
                "conflicts": row["conflicts"],
                "finished_at": row["finished_at"].isoformat(timespec="seconds"),
            }
            for row in list_imports(store)
        ],
    }


# What change_mark reads, by name: every act is in `activity`, every event table has a growing
# id, and the bulk tables are counted.
_MARKS = (
    ("acts", "(SELECT max(id) FROM activity)"),
    ("labels", "(SELECT max(event_id) FROM label_events)"),
    ("skips", "(SELECT max(event_id) FROM skip_events)"),
    ("adjudications", "(SELECT max(event_id) FROM adjudications)"),
    ("label_map", "(SELECT max(id) FROM judge_label_map)"),
    ("imports", "(SELECT max(id) FROM imports)"),
    ("traces", "(SELECT count(*) FROM traces)"),
    ("claims", "(SELECT count(*) FROM claims)"),
    ("verdicts", "(SELECT count(*) FROM judge_verdicts)"),
    ("units", "(SELECT count(*) FROM sample_units)"),
    ("assignments", "(SELECT count(*) FROM assignments)"),
    ("users", "(SELECT count(*) FROM users)"),
    ("settings", "(SELECT md5(coalesce(string_agg(key || '=' || value, '|' ORDER BY key), '')) "
     "FROM settings)"),
    ("rubrics", "(SELECT md5(coalesce(string_agg(version || ':' || active, '|' ORDER BY "
     "version), '')) FROM rubrics)"),
)  # fmt: skip
# A reviewer's verdict, skip or a lead's final label: events that no act records.
REVIEW_EVENTS = ("labels", "skips", "adjudications")


def change_mark(store: Store) -> tuple[Any, ...]:
    """Changes whenever anything a page's statistics read changes. Cheap (metadata-sized work),
    so a page can key its cached statistics on it."""
    return _mark(store, ())


def frame_mark(store: Store) -> tuple[Any, ...]:
    """change_mark without the review events: it moves with what a sample's frame reads
    (traces, claims, verdicts, units, label mappings, settings, any act), not with a verdict."""
    return _mark(store, REVIEW_EVENTS)


# Every mark in one statement, the ones a caller leaves out dropped here: DuckDB 2.0 ran the
# frame mark's subset (no review event) in 18 ms at 300,000 traces and the whole set in 2 ms.
_ALL_MARKS = "SELECT " + ", ".join(sql for _, sql in _MARKS)


def _mark(store: Store, without: tuple[str, ...]) -> tuple[Any, ...]:
    (row,) = store.fetchall(_ALL_MARKS)
    return tuple(value for (name, _), value in zip(_MARKS, row, strict=True) if name not in without)


def recent_traces(store: Store, limit: int = 50) -> list[dict[str, Any]]:
    rows = store.fetchall(
        "SELECT trace_id, timestamp, feature, risk_category, model, judgeable, response "
        "FROM traces ORDER BY timestamp DESC NULLS LAST, trace_id LIMIT ?",
        [limit],
    )
    keys = ("trace_id", "timestamp", "feature", "risk_category", "model", "judgeable", "response")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def list_trace_ids(
    store: Store, feature: str | None = None, prefix: str = "", limit: int = 500
) -> list[str]:
    rows = store.fetchall(
        "SELECT trace_id FROM traces WHERE (? IS NULL OR feature = ?) AND starts_with(trace_id, ?) "
        "ORDER BY trace_id LIMIT ?",
        [feature, feature, prefix, limit],
    )
    return [row[0] for row in rows]


_CONTEXTS = (
    "coalesce((SELECT list({'position': position, 'source': source, 'text': text} "
    "ORDER BY position) FROM contexts x WHERE x.trace_id = t.trace_id), []) AS contexts"
)
_CLAIMS = (
    "coalesce((SELECT list({'claim_index': claim_index, 'text': text, "
    "'start_offset': start_offset, 'end_offset': end_offset, 'origin': origin} "
    "ORDER BY claim_index) FROM claims c WHERE c.trace_id = t.trace_id), []) AS claims"
)
_JUDGE = (
    "coalesce((SELECT list({'judge': judge, 'level': level, 'claim_index': claim_index, "
    "'label': label, 'score': score, 'explanation': explanation} ORDER BY level, claim_index) "
    "FROM judge_verdicts j WHERE j.trace_id = t.trace_id), []) AS judge_verdicts"
)


def trace_detail(store: Store, trace_id: str, judge: bool = True) -> dict[str, Any] | None:
    """One trace with its contexts, claims and (unless `judge` is False) judge verdicts, for
    display. One query: it is read on every verdict of the Label page."""
    parts = [_CONTEXTS, _CLAIMS, *([_JUDGE] if judge else [])]
    found = store.fetch_dicts(
        f"SELECT t.*, {', '.join(parts)} FROM traces t WHERE t.trace_id = ?", [trace_id]
    )
    return found[0] if found else None


def holds_nothing(store: Store) -> bool:
    """No trace, import, sample, account, label or act: a store as it is made, nothing more
    (the migrations' own rows, such as the first rubric, do not count)."""
    return not store.scalar(
        "SELECT (SELECT count(*) FROM traces) + (SELECT count(*) FROM imports) "
        "+ (SELECT count(*) FROM samples) + (SELECT count(*) FROM users) "
        "+ (SELECT count(*) FROM label_events) + (SELECT count(*) FROM activity)"
    )
