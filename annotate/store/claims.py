"""SQL for claims, claim flags and the record of LLM calls (claim extraction now, the judge later).

A trace's claims are inserted once: an insert never adds to a trace that already has claims.
The one exception is a lead's new version of a claim (split, merge, correct): the old rows move
to `retired_claims` and the new ones get indexes the trace never had.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from annotate.store import Store, id_batch

CLAIM_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
        ("claim_index", pa.int32()),
        ("text", pa.string()),
        ("start_offset", pa.int32()),
        ("end_offset", pa.int32()),
        ("origin", pa.string()),
    ]
)


def claim_counts(store: Store, trace_ids: Sequence[str]) -> dict[str, int]:
    rows = store.fetch_with_batch(
        "SELECT c.trace_id, count(*) FROM claims c JOIN _batch USING (trace_id) GROUP BY c.trace_id",
        id_batch(trace_ids),
    )
    return {trace_id: int(count) for trace_id, count in rows}


def trace_texts(store: Store, trace_ids: Sequence[str]) -> dict[str, tuple[str | None, str]]:
    """trace_id -> (request, response)."""
    rows = store.fetch_with_batch(
        "SELECT t.trace_id, t.request, t.response FROM traces t JOIN _batch USING (trace_id)",
        id_batch(trace_ids),
    )
    return {trace_id: (request, response or "") for trace_id, request, response in rows}


def insert_claims(store: Store, rows: Sequence[dict[str, Any]]) -> int:
    """Insert claim rows, skipping every trace that already has claims; the number inserted."""
    if not rows:
        return 0
    result = store.fetch_with_batch(
        "INSERT INTO claims SELECT * FROM _batch b "
        "WHERE NOT EXISTS (SELECT 1 FROM claims c WHERE c.trace_id = b.trace_id)",
        pa.Table.from_pylist(list(rows), schema=CLAIM_SCHEMA),
    )
    return int(result[0][0]) if result else 0


def trace_claims(store: Store, trace_id: str) -> list[dict[str, Any]]:
    return store.fetch_dicts(
        'SELECT claim_index AS "index", text, start_offset AS start, end_offset AS "end", origin '
        "FROM claims WHERE trace_id = ? ORDER BY claim_index",
        [trace_id],
    )


def has_claim(store: Store, trace_id: str, claim_index: int) -> bool:
    return bool(
        store.scalar(
            "SELECT count(*) FROM claims WHERE trace_id = ? AND claim_index = ?",
            [trace_id, claim_index],
        )
    )


def insert_flag(
    store: Store, trace_id: str, claim_index: int, reviewer: str, reason: str, note: str | None
) -> None:
    store.execute(
        "INSERT INTO claim_flags VALUES (?, ?, ?, ?, ?, ?)",
        [trace_id, claim_index, reviewer, reason, note, datetime.now()],
    )


def flags(store: Store, sample: str | None) -> list[dict[str, Any]]:
    where, params = (
        ("", [])
        if sample is None
        else ("WHERE f.trace_id IN (SELECT trace_id FROM sample_units WHERE sample = ?)", [sample])
    )
    return store.fetch_dicts(
        "SELECT f.trace_id, f.claim_index, coalesce(c.text, r.text) AS text, "
        "coalesce(c.origin, r.origin) AS origin, f.reviewer, f.reason, f.note, f.created_at, "
        "CASE WHEN c.trace_id IS NOT NULL THEN 'open' ELSE coalesce(r.action, 'gone') END AS status "
        "FROM claim_flags f LEFT JOIN claims c USING (trace_id, claim_index) "
        "LEFT JOIN retired_claims r USING (trace_id, claim_index) "
        f"{where} ORDER BY f.created_at, f.trace_id, f.claim_index",
        params,
    )


def record_llm_call(store: Store, row: dict[str, Any]) -> int:
    """Insert one call's record; its id (judge verdicts and failures point at it)."""
    found = store.fetchone(
        "INSERT INTO llm_calls (purpose, trace_id, model, prompt_version, request_id, input_tokens, "
        "output_tokens, raw_response, error, created_at, attempts, cache_read_tokens, "
        "cache_write_tokens, batch_id, sample, rubric_version) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        [
            row["purpose"],
            row.get("trace_id"),
            row["model"],
            row["prompt_version"],
            row.get("request_id"),
            row.get("input_tokens"),
            row.get("output_tokens"),
            row.get("raw_response"),
            row.get("error"),
            datetime.now(),
            row.get("attempts"),
            row.get("cache_read_tokens"),
            row.get("cache_write_tokens"),
            row.get("batch_id"),
            row.get("sample"),
            row.get("rubric_version"),
        ],
    )
    return int(found[0]) if found else 0


# --- claim versions: a lead's split, merge or correction retires claims and adds new ones ---


def current_claims(
    store: Store, trace_id: str, claim_indexes: Sequence[int]
) -> list[dict[str, Any]]:
    """The named claims of a trace that are current (in `claims`), in index order."""
    if not claim_indexes:
        return []
    marks = ", ".join("?" for _ in claim_indexes)
    return store.fetch_dicts(
        "SELECT trace_id, claim_index, text, start_offset, end_offset, origin FROM claims "
        f"WHERE trace_id = ? AND claim_index IN ({marks}) ORDER BY claim_index",
        [trace_id, *claim_indexes],
    )


def next_claim_index(store: Store, trace_id: str) -> int:
    """One past the highest index the trace ever had, current or retired: indexes are never reused."""
    found = store.scalar(
        "SELECT max(i) FROM (SELECT claim_index AS i FROM claims WHERE trace_id = ? "
        "UNION ALL SELECT claim_index FROM retired_claims WHERE trace_id = ?)",
        [trace_id, trace_id],
    )
    return 0 if found is None else int(found) + 1


def retire_claims(
    store: Store,
    trace_id: str,
    claim_indexes: Sequence[int],
    action: str,
    replaced_by: Sequence[int],
    by: str,
) -> None:
    """Move claims from `claims` to `retired_claims` (inside the caller's transaction)."""
    marks = ", ".join("?" for _ in claim_indexes)
    store.execute(
        "INSERT INTO retired_claims SELECT trace_id, claim_index, text, start_offset, end_offset, "
        f"origin, ?, ?, ?, ? FROM claims WHERE trace_id = ? AND claim_index IN ({marks})",
        [action, json.dumps(list(replaced_by)), by, datetime.now(), trace_id, *claim_indexes],
    )
    store.execute(
        f"DELETE FROM claims WHERE trace_id = ? AND claim_index IN ({marks})",
        [trace_id, *claim_indexes],
    )


def add_claim_rows(store: Store, rows: Sequence[dict[str, Any]]) -> None:
    """Insert new versions of a trace's claims (the trace already has claims)."""
    store.fetch_with_batch(
        "INSERT INTO claims SELECT * FROM _batch",
        pa.Table.from_pylist(list(rows), schema=CLAIM_SCHEMA),
    )


def retired_claims(store: Store, trace_id: str | None = None) -> list[dict[str, Any]]:
    where, params = ("", []) if trace_id is None else ("WHERE trace_id = ?", [trace_id])
    return store.fetch_dicts(
        "SELECT trace_id, claim_index, text, start_offset, end_offset, origin, action, "
        f"replaced_by, retired_by, retired_at FROM retired_claims {where} "
        "ORDER BY retired_at, trace_id, claim_index",
        params,
    )
