"""SQL for imports: the imports log, rejected rows, and bulk insert of validated traces.

Callers hold the transaction; these functions never commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from annotate.store import Store
from annotate.traces import RowError, Trace, to_json_bytes

TRACE_COLUMNS = (
    "trace_id",
    "import_id",
    "source_line",
    "content_hash",
    "timestamp",
    "feature",
    "risk_category",
    "model",
    "request",
    "response",
    "judgeable",
    "attributes",
)


def start_import(store: Store, kind: str, path: str, fmt: str, created_by: str) -> int:
    import_id = int(store.scalar("SELECT nextval('import_ids')"))
    store.execute(
        "INSERT INTO imports (id, kind, path, format, started_at, created_by) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [import_id, kind, path, fmt, datetime.now(), created_by],
    )
    return import_id


def finish_import(store: Store, import_id: int, counts: dict[str, int]) -> None:
    store.execute(
        "UPDATE imports SET finished_at = ?, imported = ?, rejected = ?, duplicates = ?, "
        "conflicts = ? WHERE id = ?",
        [
            datetime.now(),
            counts["imported"],
            counts["rejected"],
            counts["duplicates"],
            counts["conflicts"],
            import_id,
        ],
    )


def add_import_errors(store: Store, import_id: int, errors: Sequence[RowError]) -> None:
    if not errors:
        return
    table = pa.table(
        {
            "import_id": [import_id] * len(errors),
            "line": [e.line for e in errors],
            "field": [e.field for e in errors],
            "message": [e.message for e in errors],
        }
    )
    store.insert_arrow("import_errors", table.column_names, table)


def stored_hashes(store: Store, trace_ids: Sequence[str]) -> dict[str, tuple[str, int, int]]:
    """trace_id -> (content_hash, import_id, source_line) for the ids already stored."""
    if not trace_ids:
        return {}
    rows = store.fetch_with_batch(
        "SELECT t.trace_id, t.content_hash, t.import_id, t.source_line "
        "FROM traces t JOIN _batch USING (trace_id)",
        pa.table({"trace_id": list(trace_ids)}),
    )
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


def insert_traces(store: Store, import_id: int, traces: Sequence[Trace]) -> None:
    """Insert validated traces and their contexts, claims and judge verdicts in bulk."""
    if not traces:
        return
    store.insert_arrow("traces", TRACE_COLUMNS, _trace_table(import_id, traces))
    contexts = [(t.trace_id, i, c.source, c.text) for t in traces for i, c in enumerate(t.contexts)]
    _insert_rows(store, "contexts", ("trace_id", "position", "source", "text"), contexts)
    claims = [
        (t.trace_id, i, c.text, c.start, c.end, "provided")
        for t in traces
        for i, c in enumerate(t.claims)
    ]
    _insert_rows(
        store,
        "claims",
        ("trace_id", "claim_index", "text", "start_offset", "end_offset", "origin"),
        claims,
    )
    verdicts = [
        (
            t.trace_id,
            v.judge,
            v.level,
            v.claim,
            v.label,
            v.score,
            v.explanation,
            "import",
            import_id,
        )
        for t in traces
        for v in t.judge
    ]
    _insert_rows(
        store,
        "judge_verdicts",
        (
            "trace_id",
            "judge",
            "level",
            "claim_index",
            "label",
            "score",
            "explanation",
            "origin",
            "import_id",
        ),
        verdicts,
    )


def _trace_table(import_id: int, traces: Sequence[Trace]) -> pa.Table:
    return pa.table(
        {
            "trace_id": [t.trace_id for t in traces],
            "import_id": pa.array([import_id] * len(traces), pa.int32()),
            "source_line": pa.array([t.line for t in traces], pa.int32()),
            "content_hash": [t.content_hash for t in traces],
            "timestamp": pa.array([t.timestamp for t in traces], pa.timestamp("us")),
            "feature": pa.array([t.feature for t in traces], pa.string()),
            "risk_category": pa.array([t.risk_category for t in traces], pa.string()),
            "model": pa.array([t.model for t in traces], pa.string()),
            "request": pa.array([t.request for t in traces], pa.string()),
            "response": [t.response for t in traces],
            "judgeable": [t.is_judgeable for t in traces],
            "attributes": [to_json_bytes(t.attributes).decode() for t in traces],
        }
    )


_ARROW_TYPES: dict[str, Any] = {
    "position": pa.int32(),
    "claim_index": pa.int32(),
    "start_offset": pa.int32(),
    "end_offset": pa.int32(),
    "score": pa.float64(),
    "import_id": pa.int32(),
}


def _insert_rows(
    store: Store, table: str, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    if not rows:
        return
    arrays = {
        name: pa.array([row[i] for row in rows], _ARROW_TYPES.get(name, pa.string()))
        for i, name in enumerate(columns)
    }
    store.insert_arrow(table, columns, pa.table(arrays))


def list_imports(store: Store) -> list[dict[str, Any]]:
    rows = store.fetchall(
        "SELECT id, kind, path, format, created_by, started_at, finished_at, imported, rejected, "
        "duplicates, conflicts FROM imports WHERE finished_at IS NOT NULL ORDER BY id"
    )
    keys = (
        "id",
        "kind",
        "path",
        "format",
        "created_by",
        "started_at",
        "finished_at",
        "imported",
        "rejected",
        "duplicates",
        "conflicts",
    )
    return [dict(zip(keys, row, strict=True)) for row in rows]


def import_errors(store: Store, import_id: int) -> list[RowError]:
    rows = store.fetchall(
        "SELECT line, field, message FROM import_errors WHERE import_id = ? ORDER BY line",
        [import_id],
    )
    return [RowError(line, field, message) for line, field, message in rows]
