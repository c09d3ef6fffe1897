"""SQL for canary-trap suites: suites, their items, replayed responses and the labelling
queue of "neither" responses (a sample of its own, so assignment and labelling are unchanged).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from annotate.store import Store
from annotate.store import samples as sample_sql

QUEUE_STRATUM = ("canary",)


def suite_row(store: Store, name: str) -> dict[str, Any] | None:
    rows = store.fetch_dicts("SELECT * FROM canary_suites WHERE name = ?", [name])
    return rows[0] if rows else None


def list_suites(store: Store) -> list[dict[str, Any]]:
    return store.fetch_dicts(
        "SELECT s.*, (SELECT count(*) FROM canary_items i WHERE i.suite = s.name) AS items, "
        "(SELECT count(*) FROM canary_responses r WHERE r.suite = s.name) AS responses "
        "FROM canary_suites s ORDER BY created_at, name"
    )


def insert_suite(store: Store, row: dict[str, Any], items: Sequence[dict[str, Any]]) -> None:
    store.execute(
        "INSERT INTO canary_suites VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            row["name"],
            row["sample"],
            row["rule"],
            row["swap_names"],
            row["seed"],
            row["date_shift_days"],
            row["queue_sample"],
            datetime.now(),
            row["created_by"],
        ],
    )
    for item in items:
        store.execute(
            "INSERT INTO canary_items VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                row["name"],
                item["canary_id"],
                item["source_trace"],
                item["question_kind"],
                item["request"],
                json.dumps(item["context"], ensure_ascii=False),
                json.dumps(item["checks"], ensure_ascii=False),
                json.dumps(item["value_map"], ensure_ascii=False),
            ],
        )


def items(store: Store, suite: str) -> list[dict[str, Any]]:
    rows = store.fetch_dicts(
        "SELECT * FROM canary_items WHERE suite = ? ORDER BY source_trace, canary_id", [suite]
    )
    for row in rows:
        for key in ("context", "checks", "value_map"):
            row[key] = json.loads(row[key])
    return rows


def source_traces(store: Store, trace_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The sampled traces to copy: request, response and context items in order."""
    rows = store.fetch_dicts(
        "SELECT t.trace_id, t.request, t.response, "
        "list({'source': c.source, 'text': c.text} ORDER BY c.position) AS context "
        "FROM traces t JOIN contexts c USING (trace_id) WHERE list_contains(?, t.trace_id) "
        "GROUP BY t.trace_id, t.request, t.response ORDER BY t.trace_id",
        [list(trace_ids)],
    )
    return rows


def imported_traces(store: Store, import_id: int) -> list[dict[str, Any]]:
    """The traces one import added, with their canary id and response."""
    return store.fetch_dicts(
        "SELECT trace_id, source_line, response, "
        "json_extract_string(attributes, '$.canary_id') AS canary_id "
        "FROM traces WHERE import_id = ? ORDER BY source_line",
        [import_id],
    )


def add_responses(store: Store, suite: str, rows: Sequence[dict[str, Any]]) -> None:
    now = datetime.now()
    for row in rows:
        store.execute(
            "INSERT INTO canary_responses VALUES (?, ?, ?, ?, ?, ?)",
            [suite, row["canary_id"], row["trace_id"], row["import_id"], row["outcome"], now],
        )


def responses(store: Store, suite: str) -> list[dict[str, Any]]:
    return store.fetch_dicts(
        "SELECT r.canary_id, r.trace_id, r.outcome, t.response, t.attributes "
        "FROM canary_responses r JOIN traces t USING (trace_id) WHERE r.suite = ? "
        "ORDER BY r.canary_id, r.trace_id",
        [suite],
    )


def has_response_traces(store: Store, trace_ids: Sequence[str]) -> set[str]:
    rows = store.fetchall(
        "SELECT trace_id FROM canary_responses WHERE list_contains(?, trace_id)", [list(trace_ids)]
    )
    return {row[0] for row in rows}


def add_to_queue(
    store: Store, suite: dict[str, Any], trace_ids: Sequence[str], created_by: str
) -> None:
    """Put "neither" responses into the suite's labelling sample (created on first use)."""
    name = suite["queue_sample"]
    if sample_sql.sample_row(store, name) is None:
        sample_sql.insert_sample(store, _queue_row(suite, created_by))
    if not trace_ids:
        return
    draw = sample_sql.next_draw(store, name)
    start = len(sample_sql.sample_units(store, name))
    units = [(t, QUEUE_STRATUM, start + i + 1) for i, t in enumerate(trace_ids)]
    sample_sql.add_units(store, name, draw, units, created_by)
    total = start + len(units)
    sample_sql.replace_strata(store, name, [(QUEUE_STRATUM, total, total, None)])
    sample_sql.refresh_probabilities(store, name)
    store.execute("UPDATE samples SET frame_size = ? WHERE name = ?", [total, name])


def _queue_row(suite: dict[str, Any], created_by: str) -> dict[str, Any]:
    return {
        "name": suite["queue_sample"],
        "seed": suite["seed"],
        "by": ["canary"],
        "allocation": "canary",
        "min_per_stratum": 0,
        "filters": {"canary_suite": [suite["name"]]},
        "frame_size": 0,
        "excluded": {},
        "max_import_id": 0,
        "hash_rule": f"every response of canary suite {suite['name']!r} scored neither",
        "created_at": datetime.now(),
        "created_by": created_by,
    }
