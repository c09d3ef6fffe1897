"""SQL of the tracing-server connectors: the traces pulled from each server (under the tool's
ids) and what was last pushed back to each. Identifiers are fixed; values are parameters."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from annotate.store import Store, id_batch


def pulled_ids(store: Store, source: str, tool_ids: Sequence[str]) -> set[str]:
    """The tool trace ids among `tool_ids` already pulled from `source`."""
    if not tool_ids:
        return set()
    rows = store.fetch_with_batch(
        "SELECT c.tool_trace_id FROM connector_traces c JOIN _batch b "
        "ON c.tool_trace_id = b.trace_id WHERE c.source = ?",
        id_batch(tool_ids),
        [source],
    )
    return {row[0] for row in rows}


def record_pulled(
    store: Store,
    source: str,
    rows: Sequence[tuple[str, str | None, datetime | None]],
    import_id: int | None,
) -> None:
    """(tool trace id, OTel trace id, start) of traces pulled from `source` by one import."""
    if not rows:
        return
    now = datetime.now(UTC).replace(tzinfo=None)
    table = pa.table(
        {
            "source": pa.array([source] * len(rows), pa.string()),
            "tool_trace_id": pa.array([r[0] for r in rows], pa.string()),
            "otel_trace_id": pa.array([r[1] for r in rows], pa.string()),
            "started_at": pa.array([_naive(r[2]) for r in rows], pa.timestamp("us")),
            "import_id": pa.array([import_id] * len(rows), pa.int64()),
            "pulled_at": pa.array([now] * len(rows), pa.timestamp("us")),
        }
    )
    store.fetch_with_batch(
        "INSERT OR IGNORE INTO connector_traces SELECT source, tool_trace_id, otel_trace_id, "
        "started_at, import_id, pulled_at FROM _batch",
        table,
    )


def _naive(moment: datetime | None) -> datetime | None:
    if moment is None or moment.tzinfo is None:
        return moment
    return moment.astimezone(UTC).replace(tzinfo=None)


def server_links(store: Store, sample: str, source: str) -> dict[str, tuple[Any, ...]]:
    """sample trace -> (tool trace id or None, OTel trace id, OTel span id): None when the
    trace did not come from `source`."""
    rows = store.fetchall(
        "SELECT t.trace_id, c.tool_trace_id, json_extract_string(t.attributes, '$.otel_trace_id'), "
        "json_extract_string(t.attributes, '$.otel_span_id') "
        "FROM traces t LEFT JOIN connector_traces c ON c.source = ? "
        "AND c.otel_trace_id = json_extract_string(t.attributes, '$.otel_trace_id') "
        "WHERE t.trace_id IN (SELECT trace_id FROM sample_units WHERE sample = ?) "
        "ORDER BY t.trace_id",
        [source, sample],
    )
    return {row[0]: tuple(row[1:]) for row in rows}


def sent_digests(store: Store, destination: str) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(target, name) -> (digest, remote id) of what was last sent to `destination`."""
    rows = store.fetchall(
        "SELECT target, name, digest, remote_id FROM connector_pushes WHERE destination = ?",
        [destination],
    )
    return {(r[0], r[1]): (r[2], r[3]) for r in rows}


def record_sent(
    store: Store, destination: str, target: str, name: str, digest: str, remote_id: str | None
) -> None:
    store.execute(
        "INSERT OR REPLACE INTO connector_pushes VALUES (?, ?, ?, ?, ?, ?)",
        [destination, target, name, digest, remote_id, datetime.now(UTC).replace(tzinfo=None)],
    )
