"""OTLP JSON traces: the OpenTelemetry file-exporter JSON Lines, or one JSON document.

Owns grouping spans into OTel traces, the span tree and the trace rows; OTLP's encoding is
otlp_values, what GenAI attributes mean is otlp_messages. Never raises on bad content: a
row that cannot become a trace is yielded as a RowError.

Shape: if the first line parses as a complete JSON object the file is JSON Lines (one
export object a line, `resourceSpans` and `resourceLogs` lines mixed); otherwise the whole
file is one export document, possibly pretty-printed, all of it reported as line 1.

Which spans are calls, their request, answer and context: annotate.ingest.otlp_calls (one
call, one trace; every convention in annotate.ingest.conventions). GenAI message events sent
as log records (OpenLLMetry's events mode) are joined to their span by traceId/spanId.
A call whose traceId, spanId or startTimeUnixNano cannot be read, or with no answer text, is
rejected naming the attribute and what is wrong with it.
The trace_id is the OTel traceId when that OTel trace has exactly one answered call, else
`<traceId>-<spanId>`; the import then settles it against the calls already stored
(annotate.ingest.otlp_ids), as the calls of one OTel trace may come in several files.

Verdicts: gen_ai.evaluation.result span events and log records, linked by traceId/spanId
(or by gen_ai.response.id when the record names no span); a verdict on a span that is not
itself a call (the request's root span, an agent) applies to every call beneath it. Reading
and attaching them is otlp_evaluations.

Spans and logs are grouped by traceId across the whole file, so the file is held in
memory: OTLP exports are per-batch files, not the million-trace case.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import IO, Any

from annotate.ingest.call_context import ALL_CONTEXT
from annotate.ingest.conventions.genai import MESSAGE_EVENTS
from annotate.ingest.otlp_calls import SDK_SCOPE, is_llm_span, records_of_spans
from annotate.ingest.otlp_evaluations import (
    Evaluation,
    Span,
    attach_verdicts,
    evaluations_of,
    raw_spans,
)
from annotate.ingest.otlp_values import (
    NOT_AN_EXPORT,
    any_value,
    attributes_of,
    export_documents,
    is_export,
    nanos_of,
    normalise_id,
    objects,
)
from annotate.traces import Record, RowError, describe_type, shown

__all__ = ["looks_like", "read_records", "records_of_spans"]


def looks_like(first: Any) -> bool:
    """Format detection: the file's first JSON value is an OTLP export object."""
    return is_export(first)


def read_records(
    fh: IO[bytes], context: frozenset[str] = ALL_CONTEXT
) -> Iterator[Record | RowError]:
    """Every call span as a Record, every unusable line or verdict as a RowError, by line."""
    documents, errors = export_documents(fh.read())
    found: list[Record | RowError] = list(errors)
    spans: list[Span] = []
    evaluations: list[Evaluation] = []
    logs: list[MessageLog] = []
    for line, document in documents:
        if not is_export(document):
            found.append(RowError(line, "", NOT_AN_EXPORT))
            continue
        problems = list(_shape_problems(document, line))
        new_spans = list(_spans(document, line))
        new_evaluations = list(evaluations_of(document, line))
        new_logs = list(_message_logs(document))
        if not (problems or new_spans or new_evaluations or new_logs):
            problems.append(RowError(line, "", _NOTHING))
        found.extend(problems)
        spans.extend(new_spans)
        evaluations.extend(new_evaluations)
        logs.extend(new_logs)
    traces = _by_trace(spans)
    _attach_message_logs(traces, logs)
    found.extend(attach_verdicts(traces, evaluations))
    found.extend(records_of_spans(traces, context))
    yield from sorted(found, key=lambda item: item.line)


_NOTHING = (
    "holds no spans and no gen_ai.evaluation.result log records: there is nothing to import "
    "on this line; check the exporter's output or delete the line"
)
_SHAPES = {
    "resourceSpans": "resource spans ({resource, scopeSpans: [{spans: [...]}]})",
    "resourceLogs": "resource logs ({resource, scopeLogs: [{logRecords: [...]}]})",
}


def _shape_problems(document: dict[str, Any], line: int) -> Iterator[RowError]:
    for key, shape in _SHAPES.items():
        value = document.get(key)
        if key in document and not isinstance(value, list):
            yield RowError(
                line, key, f"must be a list of {shape}, got {describe_type(value)}; re-export it"
            )


def _spans(document: dict[str, Any], line: int) -> Iterator[Span]:
    for raw, resource, scope in raw_spans(document):
        trace_id = normalise_id(raw.get("traceId"), 16)
        span_id = normalise_id(raw.get("spanId"), 8)
        name = str(raw.get("name") or "")
        start = nanos_of(raw.get("startTimeUnixNano"))
        problem = _id_problem(raw, trace_id, span_id)
        if problem is None and isinstance(start, str):
            problem = ("startTimeUnixNano", f"of LLM span {name!r} ({span_id}) {start}")
        yield Span(
            line,
            trace_id or str(raw.get("traceId")),
            span_id or str(raw.get("spanId")),
            normalise_id(raw.get("parentSpanId"), 8),
            name,
            start if isinstance(start, int) else 0,
            attributes_of(raw.get("attributes")),
            resource,
            problem,
            scope=scope,
            events=_span_events(raw),
            end=_end(raw),
        )


def _end(raw: dict[str, Any]) -> int:
    end = nanos_of(raw.get("endTimeUnixNano"))
    return end if isinstance(end, int) else 0


def _span_events(raw: dict[str, Any]) -> list[tuple[str, Any]]:
    """The span's GenAI message events (the events form of the conventions), in order."""
    found = []
    for event in objects(raw.get("events")):
        if event.get("name") in MESSAGE_EVENTS:
            attributes = attributes_of(event.get("attributes"))
            found.append((event["name"], _event_body(attributes.get("body"), attributes)))
    return found


def _id_problem(
    raw: dict[str, Any], trace_id: str | None, span_id: str | None
) -> tuple[str, str] | None:
    """Why the span's traceId or spanId cannot be read; reported only if the span is a call."""
    if trace_id is None:
        return ("traceId", _bad_id(raw, "traceId", 16))
    if span_id is None:
        return ("spanId", _bad_id(raw, "spanId", 8))
    return None


def _bad_id(raw: dict[str, Any], key: str, size: int) -> str:
    shape = f"{size * 2} hex digits or the base64 of {size} bytes"
    value = raw.get(key)
    fix = "export the spans again with an OTLP exporter"
    if key not in raw:
        return f"is missing: every span needs one ({shape}); {fix}"
    if value is None or value == "":
        empty = "is empty" if value == "" else "is missing (it is null)"
        return f"{empty}: every span needs one ({shape}); {fix}"
    got = repr(value[:40]) if isinstance(value, str) else f"{describe_type(value)} ({shown(value)})"
    return f"must be {shape}, got {got}; {fix}"


def _by_trace(spans: list[Span]) -> dict[str, list[Span]]:
    traces: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        traces[span.trace_id].append(span)
    return traces


MessageLog = tuple[str | None, str | None, int, str, Any]


def _message_logs(document: dict[str, Any]) -> Iterator[MessageLog]:
    """GenAI message events sent as log records (OpenLLMetry's events mode): (traceId,
    spanId, time, event name, body)."""
    for resource_logs in objects(document.get("resourceLogs")):
        for scope in objects(resource_logs.get("scopeLogs")):
            for record in objects(scope.get("logRecords")):
                attributes = attributes_of(record.get("attributes"))
                name = record.get("eventName") or attributes.get("event.name")
                if name in MESSAGE_EVENTS:
                    body = any_value(record.get("body"))
                    time = nanos_of(
                        record.get("timeUnixNano") or record.get("observedTimeUnixNano")
                    )
                    yield (
                        normalise_id(record.get("traceId"), 16),
                        normalise_id(record.get("spanId"), 8),
                        time if isinstance(time, int) else 0,
                        name,
                        _event_body(body, attributes),
                    )


def _event_body(body: Any, attributes: dict[str, Any]) -> Any:
    """The event's fields: its body, or its attributes when the body is empty."""
    if isinstance(body, dict):
        return body
    if isinstance(body, str):
        return {"content": body}
    return {k: v for k, v in attributes.items() if k not in ("event.name", "gen_ai.system")}


def _attach_message_logs(traces: dict[str, list[Span]], logs: list[MessageLog]) -> None:
    """Each message event to the model call it belongs to: the span it names when that is a
    model call; else the one model call running when it was emitted (OpenLLMetry emits them
    in the context around its span: the parent span, or none), the anthropic SDK's own span
    aside, preferring a call of the trace it names. An event no call can be told for is left."""
    spans = [span for trace in traces.values() for span in trace]
    by_span = {(span.trace_id, span.span_id): span for span in spans}
    calls = [s for s in spans if is_llm_span(s.attributes) and s.scope != SDK_SCOPE]
    for trace_id, span_id, time, name, body in logs:
        span = by_span.get((trace_id or "", span_id or ""))
        if span is None or span not in calls:
            running = [c for c in calls if c.start <= time <= (c.end or c.start)]
            same = [c for c in running if c.trace_id == trace_id]
            span = (same or running)[0] if len(same or running) == 1 else None
        if span is not None:
            span.events.append((name, body))
