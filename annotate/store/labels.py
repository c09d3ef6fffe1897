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


# --- the reviewer's press path (annotate.labelling.desk_state) ---------------------------------


# What moves when anything a reviewer's Label desk holds may have changed: every act of the
# app (claims, assignments, accounts, questions and answers, rubrics, settings) is in
# `activity`; the reviewer's own label and skip events are counted (another tab's show up);
# settings, claims and the reviewer's active assignments are read as they are (a write
# without an act shows too). $1 is the reviewer. Metadata-sized work.
_DESK_MARK = (
    "(SELECT max(id) FROM activity)",
    "(SELECT count(*) FROM label_events WHERE reviewer = $1)",
    "(SELECT count(*) FROM skip_events WHERE reviewer = $1)",
    "(SELECT count(*) FROM assignments WHERE reviewer = $1 AND active)",
    "(SELECT count(*) FROM claims)",
    "(SELECT md5(coalesce(string_agg(key || '=' || value, '|' ORDER BY key), '')) FROM settings)",
)


def desk_mark(store: Store, reviewer: str) -> tuple[Any, ...]:
    """The reviewer's desk mark (_DESK_MARK), in one statement."""
    return tuple(store.fetchone(f"SELECT {', '.join(_DESK_MARK)}", [reviewer]) or ())


def verdict_state(store: Store, reviewer: str, trace_id: str, claim_index: int) -> dict[str, Any]:
    """Everything a verdict is checked against, in one statement: the active rubric, whether
    the account may label and the trace is in its queue, the claim's text, the reviewer's
    latest event on the claim and whether they have seen the judge on the trace; and the
    reviewer's desk mark as it stood (the page then needs no statement of its own to know
    whether its desk is still the store's)."""
    rows = store.fetch_dicts(
        "SELECT (SELECT version FROM rubrics WHERE active ORDER BY version DESC LIMIT 1) "
        "  AS rubric_version, "
        "(SELECT labels FROM rubrics WHERE active ORDER BY version DESC LIMIT 1) AS labels, "
        "coalesce((SELECT active AND NOT coalesce(external, FALSE) FROM users "
        "  WHERE name = $1), FALSE) AS may_label, "
        "EXISTS (SELECT 1 FROM assignments WHERE reviewer = $1 AND trace_id = $2 AND active) "
        "  AS assigned, "
        "(SELECT text FROM claims WHERE trace_id = $2 AND claim_index = $3) AS claim_text, "
        "(SELECT {'event_id': event_id, 'label': label, 'error_type': error_type, "
        "  'note': note, 'created_at': created_at} FROM label_events "
        "  WHERE reviewer = $1 AND trace_id = $2 AND claim_index = $3 "
        "  ORDER BY event_id DESC LIMIT 1) AS latest, "
        "EXISTS (SELECT 1 FROM judge_reveals WHERE reviewer = $1 AND trace_id = $2) AS revealed, "
        + ", ".join(f"{part} AS mark_{n}" for n, part in enumerate(_DESK_MARK)),
        [reviewer, trace_id, claim_index],
    )
    state = rows[0]
    state["mark"] = tuple(state.pop(f"mark_{n}") for n in range(len(_DESK_MARK)))
    state["labels"] = json.loads(state["labels"]) if state["labels"] else []
    return state


# A scan's filter on trace_id alone, then the rows by their row ids: a filter on a list of ids
# read every row's text before dropping it (a 10-trace read cost 10 one-trace reads).
_ROWS_OF = "rowid IN (SELECT rowid FROM {table} WHERE trace_id = ANY($1))"
_BLIND_TRACES = (
    "SELECT t.*, coalesce(x.contexts, []) AS contexts, coalesce(c.claims, []) AS claims "
    "FROM traces t "
    "LEFT JOIN (SELECT trace_id, list({'position': position, 'source': source, 'text': text} "
    "  ORDER BY position) AS contexts FROM contexts WHERE "
    + _ROWS_OF.format(table="contexts")
    + " GROUP BY trace_id) x USING (trace_id) "
    "LEFT JOIN (SELECT trace_id, list({'claim_index': claim_index, 'text': text, "
    "  'start_offset': start_offset, 'end_offset': end_offset, 'origin': origin} "
    "  ORDER BY claim_index) AS claims FROM claims WHERE "
    + _ROWS_OF.format(table="claims")
    + " GROUP BY trace_id) c USING (trace_id) "
    "WHERE t.trace_id = ANY($1)"
)


def blind_traces(store: Store, trace_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Several traces at once, each as status.trace_detail(judge=False) gives one (its row,
    contexts and claims; never a judge verdict): one scan of contexts and claims serves them
    all, where one trace at a time scanned both for each."""
    if not trace_ids:
        return {}
    rows = store.fetch_dicts(_BLIND_TRACES, [list(dict.fromkeys(trace_ids))])
    return {row["trace_id"]: row for row in rows}
