"""An OTLP call's trace_id across imports: a call keeps the id it was first stored under, and
two calls of one OTel trace never share one.

The reader names a call by its OTel traceId when its file holds no other call of that OTel
trace, else `<traceId>-<spanId>`. Exporters write a file per batch, so the calls of one OTel
trace can come in several files, each alone in its file: the second was a conflict with the
first (rejected), and a call stored as `<traceId>` came back as `<traceId>-<spanId>` beside
other calls (stored twice). Against the store, a call whose span is stored takes that row's
id (a duplicate, or a conflict if its content changed), and a call whose `<traceId>` is taken
by another call, or by a row of another format, takes `<traceId>-<spanId>`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from annotate.store import Store
from annotate.store import imports as sql
from annotate.traces import Record, RowError


def resolve_call_ids(store: Store, batch: list[Record | RowError]) -> list[Record | RowError]:
    """The batch with each call's trace_id settled against the calls already stored."""
    calls = [(item, _otel_ids(item)) for item in batch]
    traces = sorted({ids[0] for _, ids in calls if ids is not None})
    if not traces:
        return batch
    stored = sql.otel_trace_rows(store, traces)
    by_span = {(trace, span): trace_id for trace_id, trace, span in stored if trace and span}
    taken = {trace_id for trace_id, _, _ in stored}
    return [item if ids is None else _settled(item, ids, by_span, taken) for item, ids in calls]


def _otel_ids(item: Record | RowError) -> tuple[str, str] | None:
    """(OTel trace id, span id) of a call record the OTLP reader made; None for the rest."""
    if not isinstance(item, Record) or item.kind != "trace" or not isinstance(item.data, dict):
        return None
    attributes: Any = item.data.get("attributes")
    if not isinstance(attributes, dict):
        return None
    trace, span = attributes.get("otel_trace_id"), attributes.get("otel_span_id")
    return (trace, span) if isinstance(trace, str) and isinstance(span, str) else None


def _settled(
    record: Record | RowError,
    ids: tuple[str, str],
    by_span: dict[tuple[str, str], str],
    taken: set[str],
) -> Record | RowError:
    if isinstance(record, RowError):  # never: only a call record has ids
        return record
    proposed = record.data.get("trace_id")
    trace_id = by_span.get(ids)
    if trace_id is None and proposed in taken:
        trace_id = f"{ids[0]}-{ids[1]}"
    if trace_id is None or trace_id == proposed:
        return record
    return replace(record, data={**record.data, "trace_id": trace_id})
