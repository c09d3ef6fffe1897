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


def add_external_reviewers(store: Store, names: Sequence[str]) -> None:
    """Reviewers whose labels were made elsewhere: recorded, but with no password to log in."""
    now = datetime.now()
    for name in names:
        store.execute(
            "INSERT INTO users (name, role, password_hash, external, active, created_at) "
            "VALUES (?, 'reviewer', NULL, TRUE, TRUE, ?)",
            [name, now],
        )


def stored_event_hashes(store: Store, hashes: Sequence[str], import_id: int) -> set[str]:
    """The hashes among `hashes` of events stored, or staged by import `import_id`."""
    if not hashes:
        return set()
    rows = store.fetch_with_batch(
        "SELECT DISTINCT e.content_hash FROM label_events e JOIN _batch USING (content_hash) "
        f"UNION SELECT s.content_hash FROM {_staged(import_id)} s JOIN _batch USING (content_hash)",
        pa.table({"content_hash": list(hashes)}),
    )
    return {row[0] for row in rows}


# An import's label events wait in a temporary table until the whole file is read: rows of
# one file that contradict each other are then left out together, wherever they stand in it
# (label_events itself is append-only). The table lives in the import's transaction.
_SAME_CLAIM = "PARTITION BY trace_id, claim_index, reviewer"
_SAME_VERDICT = f"{_SAME_CLAIM}, created_at"


def _staged(import_id: int) -> str:
    return f"_staged_labels_{int(import_id)}"


def start_staging(store: Store, import_id: int) -> None:
    columns = ", ".join(EVENT_COLUMNS)
    store.execute(
        f"CREATE TEMP TABLE {_staged(import_id)} AS SELECT {columns}, "
        "0::BIGINT AS pos, 0::BIGINT AS line FROM label_events LIMIT 0"
    )


def staged_conflicts(store: Store, import_id: int) -> list[dict[str, Any]]:
    """Staged rows that give one reviewer's claim different content at the same created_at,
    in file order, each with the positions (`lines`) of every row of its group."""
    return store.fetch_dicts(
        "SELECT line, trace_id, claim_index, reviewer, lines FROM (SELECT pos, line, trace_id, "
        "claim_index, reviewer, list(line ORDER BY pos) OVER w AS lines, count(*) OVER w AS n "
        f"FROM {_staged(import_id)} WINDOW w AS ({_SAME_VERDICT})) WHERE n > 1 ORDER BY pos"
    )


def commit_staged(store: Store, import_id: int) -> list[str]:
    """Append the staged events that conflict with none, in file order except that one
    reviewer's verdicts on one claim go oldest created_at first (where the first of them
    stands), so the latest is the current one; returns the reviewers of the import's events."""
    columns = ", ".join(EVENT_COLUMNS)
    staged = _staged(import_id)
    store.execute(
        f"INSERT INTO label_events ({columns}) SELECT {columns} FROM (SELECT *, "
        f"count(*) OVER ({_SAME_VERDICT}) AS n, min(pos) OVER ({_SAME_CLAIM}) AS first "
        f"FROM {staged}) WHERE n = 1 ORDER BY first, created_at, pos"
    )
    reviewers = store.fetchall(
        "SELECT DISTINCT reviewer FROM label_events WHERE import_id = ? ORDER BY reviewer",
        [import_id],
    )
    store.execute(f"DROP TABLE {staged}")
    return [row[0] for row in reviewers]


def stage_label_events(store: Store, import_id: int, rows: Sequence[dict[str, Any]]) -> None:
    if not rows:
        return
    types = {
        "claim_index": pa.int32(),
        "rubric_version": pa.int32(),
        "import_id": pa.int32(),
        "shown_at": pa.timestamp("us"),
        "created_at": pa.timestamp("us"),
        "pos": pa.int64(),
        "line": pa.int64(),
    }
    columns = (*EVENT_COLUMNS, "pos", "line")
    table = pa.table(
        {
            name: pa.array([row.get(name) for row in rows], types.get(name, pa.string()))
            for name in columns
        }
    )
    store.insert_arrow(_staged(import_id), columns, table)
