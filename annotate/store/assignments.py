"""SQL for assignments, the reviewer's queue, label/skip events and adjudications.

Label, skip and adjudication events are append-only: INSERT only, never UPDATE or DELETE.
Assignments may be deactivated (a reviewer leaves); their done work stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from annotate.errors import UsageError
from annotate.store import Store, id_batch


def active_assignments(store: Store, sample: str) -> list[tuple[str, str, int]]:
    """(trace_id, reviewer, position) of the sample's active assignments."""
    return [
        (t, r, int(p))
        for t, r, p in store.fetchall(
            "SELECT trace_id, reviewer, position FROM assignments WHERE sample = ? AND active",
            [sample],
        )
    ]


def done_traces(store: Store, sample: str, reviewer: str) -> set[str]:
    """Traces where the reviewer has a verdict or a skip for every claim."""
    rows = store.fetchall(
        "SELECT a.trace_id FROM assignments a JOIN claims c USING (trace_id) "
        "WHERE a.sample = ? AND a.reviewer = ? AND a.active "
        "GROUP BY a.trace_id HAVING bool_and("
        "  EXISTS (SELECT 1 FROM label_events e WHERE e.trace_id = c.trace_id "
        "          AND e.claim_index = c.claim_index AND e.reviewer = a.reviewer) OR "
        "  EXISTS (SELECT 1 FROM skip_events s WHERE s.trace_id = c.trace_id "
        "          AND s.claim_index = c.claim_index AND s.reviewer = a.reviewer))",
        [sample, reviewer],
    )
    return {row[0] for row in rows}


def deactivate(store: Store, sample: str, trace_id: str, reviewer: str) -> None:
    store.execute(
        "UPDATE assignments SET active = FALSE WHERE sample = ? AND trace_id = ? AND reviewer = ?",
        [sample, trace_id, reviewer],
    )


def add_assignments(
    store: Store, sample: str, rows: Sequence[tuple[str, str, int]], by: str
) -> None:
    if not rows:
        return
    now = datetime.now()
    table = pa.table(
        {
            "sample": [sample] * len(rows),
            "trace_id": [r[0] for r in rows],
            "reviewer": [r[1] for r in rows],
            "position": pa.array([r[2] for r in rows], pa.int32()),
            "active": [True] * len(rows),
            "assigned_at": pa.array([now] * len(rows), pa.timestamp("us")),
            "assigned_by": [by] * len(rows),
        }
    )
    store.insert_arrow("assignments", table.column_names, table)


def queue(store: Store, reviewer: str, sample: str) -> list[dict[str, Any]]:
    """The reviewer's claims in order, with their latest label and whether skipped."""
    return store.fetch_dicts(
        "WITH latest AS (SELECT trace_id, claim_index, arg_max(label, event_id) AS label "
        "  FROM label_events WHERE reviewer = ? GROUP BY trace_id, claim_index), "
        "skipped AS (SELECT DISTINCT trace_id, claim_index FROM skip_events WHERE reviewer = ?) "
        "SELECT a.trace_id, c.claim_index, a.position, l.label, "
        "  (s.trace_id IS NOT NULL) AS skipped "
        "FROM assignments a JOIN claims c USING (trace_id) "
        "LEFT JOIN latest l ON l.trace_id = c.trace_id AND l.claim_index = c.claim_index "
        "LEFT JOIN skipped s ON s.trace_id = c.trace_id AND s.claim_index = c.claim_index "
        "WHERE a.reviewer = ? AND a.sample = ? AND a.active "
        "ORDER BY a.position, c.claim_index",
        [reviewer, reviewer, reviewer, sample],
    )


def is_assigned(store: Store, reviewer: str, trace_id: str) -> bool:
    return bool(
        store.scalar(
            "SELECT count(*) FROM assignments WHERE reviewer = ? AND trace_id = ? AND active",
            [reviewer, trace_id],
        )
    )


def insert_label_event(store: Store, row: dict[str, Any]) -> int:
    return int(
        store.scalar(
            "INSERT INTO label_events (trace_id, claim_index, reviewer, label, error_type, note, "
            "rubric_version, shown_at, created_at, origin, based_on, claim_version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'app', ?, ?) RETURNING event_id",
            [
                row["trace_id"],
                row["claim_index"],
                row["reviewer"],
                row["label"],
                row.get("error_type"),
                row.get("note"),
                row["rubric_version"],
                row.get("shown_at"),
                row.get("created_at") or datetime.now(),
                row.get("based_on"),
                row.get("claim_version"),
            ],
        )
    )


def claim_text(store: Store, trace_id: str, claim_index: int) -> str | None:
    return store.scalar(
        "SELECT text FROM claims WHERE trace_id = ? AND claim_index = ?", [trace_id, claim_index]
    )


def latest_label_event(
    store: Store, reviewer: str, trace_id: str, claim_index: int
) -> dict[str, Any] | None:
    """The reviewer's current verdict on one claim (its latest event), if any."""
    rows = store.fetch_dicts(
        "SELECT event_id, label, error_type, note, created_at FROM label_events "
        "WHERE reviewer = ? AND trace_id = ? AND claim_index = ? ORDER BY event_id DESC LIMIT 1",
        [reviewer, trace_id, claim_index],
    )
    return rows[0] if rows else None


def insert_skip(store: Store, trace_id: str, claim_index: int, reviewer: str, reason: str) -> None:
    store.execute(
        "INSERT INTO skip_events (trace_id, claim_index, reviewer, reason, created_at) VALUES (?, ?, ?, ?, ?)",
        [trace_id, claim_index, reviewer, reason, datetime.now()],
    )


def open_skip_reason(store: Store, reviewer: str, trace_id: str, claim_index: int) -> str | None:
    """The reason of the reviewer's newest skip of the claim, while they have no verdict on it."""
    return store.scalar(
        "SELECT arg_max(reason, event_id) FROM skip_events s "
        "WHERE reviewer = ? AND trace_id = ? AND claim_index = ? "
        "AND NOT EXISTS (SELECT 1 FROM label_events e WHERE e.reviewer = s.reviewer "
        "  AND e.trace_id = s.trace_id AND e.claim_index = s.claim_index)",
        [reviewer, trace_id, claim_index],
    )


def last_label_event(store: Store, reviewer: str, sample: str) -> dict[str, Any] | None:
    rows = store.fetch_dicts(
        "SELECT e.* FROM label_events e SEMI JOIN claims c USING (trace_id, claim_index) "
        "WHERE e.reviewer = ? AND e.origin = 'app' AND e.trace_id IN "
        "(SELECT trace_id FROM assignments WHERE sample = ? AND reviewer = ?) "
        "ORDER BY e.event_id DESC LIMIT 1",
        [reviewer, sample, reviewer],
    )
    return rows[0] if rows else None


def insert_adjudication(store: Store, row: dict[str, Any]) -> None:
    store.execute(
        "INSERT INTO adjudications (trace_id, claim_index, adjudicator, label, error_type, reason, "
        "rubric_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            row["trace_id"],
            row["claim_index"],
            row["adjudicator"],
            row["label"],
            row.get("error_type"),
            row["reason"],
            row["rubric_version"],
            datetime.now(),
        ],
    )


def get_setting(store: Store, key: str) -> Any:
    return store.scalar("SELECT value FROM settings WHERE key = ?", [key])


def put_setting(store: Store, key: str, value_json: str) -> None:
    store.execute(
        "INSERT INTO settings VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [key, value_json],
    )


def reviewer_samples(store: Store, reviewer: str) -> list[str]:
    rows = store.fetchall(
        "SELECT DISTINCT sample FROM assignments WHERE reviewer = ? AND active ORDER BY sample",
        [reviewer],
    )
    return [row[0] for row in rows]


def sample_load(store: Store, sample: str) -> list[dict[str, Any]]:
    """Per reviewer: traces assigned and claims labelled in this sample."""
    return store.fetch_dicts(
        "SELECT a.reviewer, count(DISTINCT a.trace_id) AS traces, "
        "(SELECT count(DISTINCT (e.trace_id, e.claim_index)) FROM label_events e "
        " SEMI JOIN claims c USING (trace_id, claim_index) "
        " JOIN assignments b ON b.trace_id = e.trace_id AND b.reviewer = e.reviewer "
        " WHERE b.sample = ? AND e.reviewer = a.reviewer AND b.active) AS claims_labelled "
        "FROM assignments a WHERE a.sample = ? AND a.active GROUP BY a.reviewer ORDER BY a.reviewer",
        [sample, sample],
    )


def sample_claim_verdicts(store: Store, sample: str) -> list[dict[str, Any]]:
    """The judge's claim-level verdicts on the sample's claims (the latest per judge)."""
    return store.fetch_dicts(
        "SELECT v.trace_id, v.claim_index, v.judge, v.label, v.score, v.explanation "
        "FROM judge_verdicts v JOIN sample_units u ON u.trace_id = v.trace_id AND u.sample = ? "
        "WHERE v.level = 'claim' ORDER BY v.trace_id, v.claim_index",
        [sample],
    )


def slice_values(
    store: Store, trace_ids: Sequence[str], columns: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Each trace's value for each slice column (feature, risk_category, model, or an attribute)."""
    from annotate.store.samples import STRATUM_COLUMNS, attribute_names, has_attribute, json_path

    for column in columns:  # a typo would be a slice where every trace has no value
        if column not in STRATUM_COLUMNS and not has_attribute(store, column):
            known = ", ".join([*STRATUM_COLUMNS, "error_type", *attribute_names(store)])
            raise UsageError(f"unknown column or attribute {column!r} to slice by; use: {known}")
    if not trace_ids or not columns:
        return {}
    selects, params = [], []
    for column in columns:
        if column in STRATUM_COLUMNS:
            selects.append(column)
        else:
            selects.append("json_extract_string(attributes, ?)")
            params.append(json_path(column))
    rows = store.fetch_with_batch(
        f"SELECT trace_id, {', '.join(selects)} FROM traces JOIN _batch USING (trace_id)",
        id_batch(trace_ids),
        params,
    )
    return {row[0]: dict(zip(columns, row[1:], strict=True)) for row in rows}


def judge_names(store: Store, sample: str | None = None) -> list[str]:
    """Every judge with verdicts, the one with the most first (then by name): a page's default
    is the judge that judged the most, not whichever name sorts first. With `sample`, the most
    verdicts on that sample's traces first."""
    if sample is None:
        rows = store.fetchall(
            "SELECT judge FROM judge_verdicts GROUP BY judge ORDER BY count(*) DESC, judge"
        )
    else:
        rows = store.fetchall(
            "SELECT judge FROM judge_verdicts GROUP BY judge ORDER BY count(*) FILTER "
            "(WHERE trace_id IN (SELECT trace_id FROM sample_units WHERE sample = ?)) DESC, "
            "count(*) DESC, judge",
            [sample],
        )
    return [row[0] for row in rows]


def judge_levels(store: Store, judge: str) -> list[str]:
    """The levels (claim, response) at which `judge` gave verdicts, claim first."""
    rows = store.fetchall(
        "SELECT DISTINCT level FROM judge_verdicts WHERE judge = ? ORDER BY level", [judge]
    )
    return [row[0] for row in rows]


def recent_label_events(
    store: Store, reviewer: str, sample: str, limit: int
) -> list[dict[str, Any]]:
    """The reviewer's current verdict on each claim of the sample, the latest `limit` first."""
    return store.fetch_dicts(
        "SELECT e.trace_id, e.claim_index, arg_max(e.label, e.event_id) AS label, "
        "  arg_max(e.error_type, e.event_id) AS error_type, arg_max(e.note, e.event_id) AS note, "
        "  max(e.created_at) AS created_at, any_value(c.text) AS claim "
        "FROM label_events e JOIN claims c USING (trace_id, claim_index) "
        "WHERE e.reviewer = ? AND e.trace_id IN "
        "  (SELECT trace_id FROM assignments WHERE sample = ? AND reviewer = ? AND active) "
        "GROUP BY e.trace_id, e.claim_index ORDER BY max(e.event_id) DESC LIMIT ?",
        [reviewer, sample, reviewer, limit],
    )


def skipped_claims(store: Store, reviewer: str, sample: str) -> list[dict[str, Any]]:
    """The reviewer's skipped claims of the sample that have no verdict from them yet."""
    return store.fetch_dicts(
        "SELECT s.trace_id, s.claim_index, arg_max(s.reason, s.event_id) AS reason, "
        "  max(s.created_at) AS created_at, any_value(c.text) AS claim "
        "FROM skip_events s JOIN claims c USING (trace_id, claim_index) "
        "WHERE s.reviewer = ? AND s.trace_id IN "
        "  (SELECT trace_id FROM assignments WHERE sample = ? AND reviewer = ? AND active) "
        "AND NOT EXISTS (SELECT 1 FROM label_events e WHERE e.reviewer = s.reviewer "
        "  AND e.trace_id = s.trace_id AND e.claim_index = s.claim_index) "
        "GROUP BY s.trace_id, s.claim_index ORDER BY max(s.event_id) DESC",
        [reviewer, sample, reviewer],
    )
