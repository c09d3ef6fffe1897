"""SQL for claims, claim flags and the record of LLM calls. Claims are inserted once per trace."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from annotate.store import Store


def claim_counts(store: Store, trace_ids: Sequence[str]) -> dict[str, int]:
    rows = store.fetch_with_batch(
        "SELECT c.trace_id, count(*) FROM claims c JOIN _batch USING (trace_id) GROUP BY c.trace_id",
        pa.table({"trace_id": list(trace_ids)}),
    )
    return {trace_id: int(count) for trace_id, count in rows}


def response_text(store: Store, trace_id: str) -> str:
    return str(store.scalar("SELECT response FROM traces WHERE trace_id = ?", [trace_id]) or "")


def insert_claims(
    store: Store, trace_id: str, spans: Sequence[tuple[str, int | None, int | None]], origin: str
) -> None:
    if store.scalar("SELECT count(*) FROM claims WHERE trace_id = ?", [trace_id]):
        return  # created once: a rerun never duplicates or overwrites
    for index, (text, start, end) in enumerate(spans):
        store.execute(
            "INSERT INTO claims VALUES (?, ?, ?, ?, ?, ?)",
            [trace_id, index, text, start, end, origin],
        )


def trace_claims(store: Store, trace_id: str) -> list[dict[str, Any]]:
    return store.fetch_dicts(
        "SELECT claim_index AS index, text, start_offset AS start, end_offset AS end, origin "
        "FROM claims WHERE trace_id = ? ORDER BY claim_index",
        [trace_id],
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
        "SELECT f.trace_id, f.claim_index, c.text, f.reviewer, f.reason, f.note, f.created_at "
        "FROM claim_flags f LEFT JOIN claims c USING (trace_id, claim_index) "
        f"{where} ORDER BY f.created_at",
        params,
    )


def record_llm_call(store: Store, row: dict[str, Any]) -> None:
    store.execute(
        "INSERT INTO llm_calls (purpose, trace_id, model, prompt_version, request_id, input_tokens, "
        "output_tokens, raw_response, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        ],
    )
