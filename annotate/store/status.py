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


def trace_detail(store: Store, trace_id: str) -> dict[str, Any] | None:
    """One trace with its contexts, claims and judge verdicts, for display."""
    found = store.fetch_dicts("SELECT * FROM traces WHERE trace_id = ?", [trace_id])
    if not found:
        return None
    detail = found[0]
    detail["contexts"] = store.fetch_dicts(
        "SELECT position, source, text FROM contexts WHERE trace_id = ? ORDER BY position",
        [trace_id],
    )
    detail["claims"] = store.fetch_dicts(
        "SELECT claim_index, text, start_offset, end_offset, origin FROM claims "
        "WHERE trace_id = ? ORDER BY claim_index",
        [trace_id],
    )
    detail["judge_verdicts"] = store.fetch_dicts(
        "SELECT judge, level, claim_index, label, score, explanation FROM judge_verdicts "
        "WHERE trace_id = ? ORDER BY level, claim_index",
        [trace_id],
    )
    return detail
