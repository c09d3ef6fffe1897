"""SQL for imports: the imports log, rejected rows, and bulk insert of validated traces.

Callers hold the transaction; these functions never commit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from annotate.errors import AnnotateError, UsageError
from annotate.store import Store, id_batch
from annotate.traces import JudgeVerdict, RowError, Trace
from annotate.traces.tables import (
    CLAIM_COLUMNS,
    CONTEXT_COLUMNS,
    TRACE_COLUMNS,
    VERDICT_COLUMNS,
    TraceTables,
    judged_tables,
    trace_tables,
)


def start_import(store: Store, kind: str, path: str, fmt: str, created_by: str) -> int:
    import_id = int(store.scalar("SELECT nextval('import_ids')"))
    store.execute(
        "INSERT INTO imports (id, kind, path, format, started_at, created_by) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [import_id, kind, path, fmt, datetime.now(), created_by],
    )
    return import_id


def import_committed(store: Store, import_id: int) -> bool:
    """Whether import `import_id` is stored finished: asked after Ctrl-C interrupted its COMMIT
    (DuckDB may have made it durable before it saw the interrupt) or came right after it. A
    transaction the interrupt left open is rolled back first: it holds nothing committed."""
    query = "SELECT count(*) FROM imports WHERE id = ? AND finished_at IS NOT NULL"
    try:
        return bool(store.scalar(query, [import_id]))
    except AnnotateError:
        pass
    with contextlib.suppress(AnnotateError):  # else no transaction was open
        store.execute("ROLLBACK")
    try:
        return bool(store.scalar(query, [import_id]))
    except AnnotateError:
        return False


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
        id_batch(trace_ids),
    )
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


class KnownIds:
    """The store's trace ids as DuckDB 64-bit hashes in a temporary table, for one import's
    duplicate check (with the ids each batch adds).

    Joining a batch's ids to every stored trace id costs a scan of all of them per batch:
    25 ms a 2,000-row batch at 1,000,000 traces, and more as the store grows. Probing the
    8-byte keys costs 2.5 ms. A key that matches is only a candidate: its stored row is then
    read by id (stored_hashes), so a collision costs a lookup, never a wrong answer. The
    hashes live in this connection's transaction only; `close` drops them."""

    TABLE = "_import_known_ids"

    def __init__(self, store: Store) -> None:
        self.store = store
        store.execute(
            f"CREATE OR REPLACE TEMP TABLE {self.TABLE} AS SELECT hash(trace_id) AS k FROM traces"
        )

    def stored_hashes(self, trace_ids: Sequence[str]) -> dict[str, tuple[str, int, int]]:
        """stored_hashes(trace_ids), reading stored rows only for ids whose key is known."""
        if not trace_ids:
            return {}
        rows = self.store.fetch_with_batch(
            f"SELECT trace_id FROM _batch WHERE hash(trace_id) IN (SELECT k FROM {self.TABLE})",
            id_batch(trace_ids),
        )
        return stored_hashes(self.store, [row[0] for row in rows])

    def add(self, trace_ids: Sequence[str]) -> None:
        if trace_ids:
            self.store.fetch_with_batch(
                f"INSERT INTO {self.TABLE} SELECT hash(trace_id) FROM _batch", id_batch(trace_ids)
            )

    def close(self) -> None:
        self.store.execute(f"DROP TABLE IF EXISTS temp.{self.TABLE}")


def insert_traces(store: Store, import_id: int, traces: Sequence[Trace]) -> None:
    """Insert validated traces and their contexts, claims and judge verdicts in bulk."""
    if traces:
        insert_tables(store, trace_tables(import_id, traces))


def insert_tables(store: Store, tables: TraceTables) -> None:
    """Insert a batch's tables (trace_tables) in bulk."""
    if not tables.traces.num_rows:
        return
    store.insert_arrow("traces", TRACE_COLUMNS, tables.traces)
    _add_attribute_names(store, {name for names in tables.attribute_names for name in names})
    if tables.contexts is not None and tables.contexts.num_rows:
        store.insert_arrow("contexts", CONTEXT_COLUMNS, tables.contexts)
    if tables.claims is not None and tables.claims.num_rows:
        store.insert_arrow("claims", CLAIM_COLUMNS, tables.claims)
    _insert_judged(store, tables.verdicts, tables.ratings)


def _insert_judged(store: Store, verdicts: pa.Table | None, ratings: list[dict[str, Any]]) -> None:
    """Verdicts with a label into judge_verdicts; ratings (a verdict may only rate) into
    judge_ratings."""
    if ratings:
        from annotate.store.ratings import insert_judge_ratings

        insert_judge_ratings(store, ratings)
    if verdicts is not None and verdicts.num_rows:
        store.insert_arrow("judge_verdicts", VERDICT_COLUMNS, verdicts)


def _add_attribute_names(store: Store, names: set[str]) -> None:
    """Record attribute keys not seen before (the pages list them without scanning traces)."""
    if names:
        store.fetch_with_batch(
            "INSERT INTO trace_attribute_names SELECT name FROM _batch "
            "WHERE name NOT IN (SELECT name FROM trace_attribute_names)",
            pa.table({"name": pa.array(sorted(names), pa.string())}),
        )


def insert_verdicts(
    store: Store, import_id: int, verdicts: Sequence[tuple[str, JudgeVerdict]]
) -> None:
    """Imported judge verdicts, each with the trace it belongs to."""
    if not verdicts:
        return
    owners = {
        "trace_id": pa.array([trace_id for trace_id, _ in verdicts], pa.string()),
        "_trace": pa.array(range(len(verdicts)), pa.int32()),
    }
    _insert_judged(store, *judged_tables(import_id, owners, [v for _, v in verdicts]))


def otel_calls(
    store: Store, span_ids: Sequence[str], response_ids: Sequence[str]
) -> list[tuple[str, str | None, str | None, str | None]]:
    """(trace_id, OTel trace id, span id, gen_ai.response.id) of stored OTLP calls that
    have one of these span ids or response ids."""
    if not span_ids and not response_ids:
        return []
    return store.fetch_with_batch(
        "WITH calls AS (SELECT trace_id, "
        "json_extract_string(attributes, '$.otel_trace_id') AS otel_trace, "
        "json_extract_string(attributes, '$.otel_span_id') AS otel_span, "
        "json_extract_string(attributes, '$.\"gen_ai.response.id\"') AS response_id "
        "FROM traces) "
        "SELECT trace_id, otel_trace, otel_span, response_id FROM calls "
        "WHERE otel_span IN (SELECT id FROM _batch) OR response_id IN (SELECT id FROM _batch)",
        pa.table({"id": pa.array([*span_ids, *response_ids], pa.string())}),
    )


def otel_trace_rows(
    store: Store, otel_trace_ids: Sequence[str]
) -> list[tuple[str, str | None, str | None]]:
    """(trace_id, OTel trace id, span id) of the stored rows whose trace_id is one of these
    OTel trace ids, alone or followed by `-` (an OTLP call's id, annotate.ingest.otlp_ids)."""
    return store.fetch_with_batch(
        "SELECT trace_id, json_extract_string(attributes, '$.otel_trace_id'), "
        "json_extract_string(attributes, '$.otel_span_id') FROM traces "
        "WHERE split_part(trace_id, '-', 1) IN (SELECT trace_id FROM _batch) "
        "ORDER BY trace_id",
        id_batch(otel_trace_ids),
    )


def stored_verdict_keys(store: Store, trace_ids: Sequence[str]) -> set[tuple[Any, ...]]:
    """(trace_id, judge, level, label, score, explanation) of the verdicts these traces hold."""
    if not trace_ids:
        return set()
    rows = store.fetch_with_batch(
        "SELECT v.trace_id, v.judge, v.level, v.label, v.score, v.explanation "
        "FROM judge_verdicts v JOIN _batch USING (trace_id)",
        id_batch(trace_ids),
    )
    return {tuple(row) for row in rows}


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
    """The rows import `import_id` rejected; an id no import has is a usage error."""
    if not store.scalar("SELECT count(*) FROM imports WHERE id = ?", [import_id]):
        last = store.scalar("SELECT max(id) FROM imports")
        raise UsageError(
            f"no import {import_id}; "
            + (f"the imports are numbered 1 to {last}" if last else "nothing was imported yet")
        )
    rows = store.fetchall(
        "SELECT line, field, message FROM import_errors WHERE import_id = ? ORDER BY line, rowid",
        [import_id],
    )
    return [RowError(line, field, message) for line, field, message in rows]
