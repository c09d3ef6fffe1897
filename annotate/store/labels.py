"""SQL for rubrics, users and label events. Label events are append-only: never UPDATE or DELETE."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from annotate.store import Store, id_batch

EVENT_COLUMNS = (
    "trace_id",
    "claim_index",
    "reviewer",
    "label",
    "error_type",
    "note",
    "rubric_version",
    "shown_at",
    "created_at",
    "origin",
    "import_id",
    "content_hash",
)


def active_rubric(store: Store) -> tuple[int, list[dict[str, Any]]]:
    row = store.fetchone("SELECT version, labels FROM rubrics WHERE active ORDER BY version DESC")
    if row is None:
        return 0, []
    return int(row[0]), json.loads(row[1])


def existing_claims(store: Store, trace_ids: Sequence[str]) -> dict[str, list[int]]:
    """trace_id -> its current claim indexes, ascending, for the ids that exist ([] when a trace
    has none yet). After a lead revises a claim the indexes need not run from 0 without gaps."""
    if not trace_ids:
        return {}
    rows = store.fetch_with_batch(
        "SELECT t.trace_id, list(c.claim_index ORDER BY c.claim_index) "
        "FILTER (WHERE c.claim_index IS NOT NULL) FROM traces t "
        "JOIN _batch USING (trace_id) LEFT JOIN claims c USING (trace_id) "
        "GROUP BY t.trace_id",
        id_batch(trace_ids),
    )
    return {trace_id: list(indexes or []) for trace_id, indexes in rows}


def account_states(store: Store, names: Sequence[str]) -> dict[str, bool]:
    """name -> active, for the names among `names` that have an account (external or not)."""
    if not names:
        return {}
    rows = store.fetch_with_batch(
        "SELECT name, active FROM users WHERE name IN (SELECT name FROM _batch)",
        pa.table({"name": pa.array(list(names), pa.string())}),
    )
    return {name: bool(active) for name, active in rows}


def add_external_reviewers(store: Store, names: Sequence[str]) -> None:
    """Reviewers whose labels were made elsewhere: recorded, but with no password to log in."""
    now = datetime.now()
    for name in names:
        store.execute(
            "INSERT INTO users (name, role, password_hash, external, active, created_at) "
            "VALUES (?, 'reviewer', NULL, TRUE, TRUE, ?)",
            [name, now],
        )


def stored_event_hashes(store: Store, hashes: Sequence[str]) -> set[str]:
    if not hashes:
        return set()
    rows = store.fetch_with_batch(
        "SELECT DISTINCT e.content_hash FROM label_events e JOIN _batch USING (content_hash)",
        pa.table({"content_hash": list(hashes)}),
    )
    return {row[0] for row in rows}


def insert_label_events(store: Store, rows: Sequence[dict[str, Any]]) -> None:
    if not rows:
        return
    types = {
        "claim_index": pa.int32(),
        "rubric_version": pa.int32(),
        "import_id": pa.int32(),
        "shown_at": pa.timestamp("us"),
        "created_at": pa.timestamp("us"),
    }
    table = pa.table(
        {
            name: pa.array([row.get(name) for row in rows], types.get(name, pa.string()))
            for name in EVENT_COLUMNS
        }
    )
    store.insert_arrow("label_events", EVENT_COLUMNS, table)
