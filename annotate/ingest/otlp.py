"""OTLP JSON traces: the OpenTelemetry file-exporter JSON Lines, or one JSON document.

One trace per LLM call span: a span whose gen_ai.operation.name is chat,
text_completion or generate_content, or that carries gen_ai.request.model /
gen_ai.system / gen_ai.provider.name without being a tool, retrieval or embeddings
span. Request and response come from gen_ai.input.messages / gen_ai.output.messages
(or the older gen_ai.prompt / gen_ai.completion, plain, JSON or indexed). Context is
every retrieval and tool result in the same OTel trace (retrieval spans, execute_tool
spans' gen_ai.tool.call.result, tool_call_response parts of the input messages).
Judge verdicts come from gen_ai.evaluation.result span events and log records.
Spans are grouped by traceId across the file, so the file is held in memory: OTLP
exports are written in batches, not as one huge file.
"""

from __future__ import annotations

import base64
import binascii
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

import orjson

from annotate.ingest.generic import BOM, json_problem
from annotate.ingest.otlp_messages import (
    EVALUATION,
    context_of,
    is_llm_span,
    request_of,
    response_of,
    verdict_of,
)
from annotate.traces import Record, RowError


def looks_like(first: Any) -> bool:
    return isinstance(first, dict) and ("resourceSpans" in first or "resourceLogs" in first)


@dataclass
class Span:
    line: int
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    attributes: dict[str, Any]
    resource: dict[str, Any]
    evaluations: list[dict[str, Any]] = field(default_factory=list)


def any_value(value: Any) -> Any:
    """Decode an OTLP AnyValue ({"stringValue": ...}, {"intValue": "12"}, arrays, kvlists)."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return attributes_of(value["kvlistValue"].get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes_of(items: Any) -> dict[str, Any]:
    if not isinstance(items, list):
        return {}
    return {
        item["key"]: any_value(item.get("value"))
        for item in items
        if isinstance(item, dict) and "key" in item
    }


def normalise_id(raw: Any, size: int) -> str:
    """Hex ids pass through (lower case); base64 ids (protobuf JSON mapping) become hex."""
    text = str(raw or "")
    if len(text) == size * 2 and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        decoded = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text
    return decoded.hex() if len(decoded) == size else text


def read_records(fh: IO[bytes]) -> Iterator[Record | RowError]:
    documents, errors = _documents(fh.read())
    yield from errors
    spans: dict[str, list[Span]] = defaultdict(list)
    logs: list[tuple[str, str, dict[str, Any]]] = []
    for line, document in documents:
        if not looks_like(document):
            yield RowError(
                line,
                "",
                "is not an OTLP export: expected an object with resourceSpans or resourceLogs",
            )
            continue
        for span in _spans(document, line):
            spans[span.trace_id].append(span)
        logs.extend(_evaluation_logs(document))
    _attach_logs(spans, logs)
    for trace_spans in spans.values():
        yield from _trace_records(trace_spans)


def _documents(data: bytes) -> tuple[list[tuple[int, Any]], list[RowError]]:
    data = data.removeprefix(BOM)
    lines = data.split(b"\n")
    first = next((line for line in lines if line.strip()), b"")
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        try:
            return [(1, orjson.loads(data))], []
        except orjson.JSONDecodeError:
            text = data.decode("utf-8", "replace")
            return [], [RowError(1, "", f"the file is not valid JSON ({json_problem(text)})")]
    documents, errors = [], []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            documents.append((number, orjson.loads(raw)))
        except orjson.JSONDecodeError:
            text = raw.decode("utf-8", "replace")
            errors.append(
                RowError(
                    number,
                    "",
                    f"is not valid JSON ({json_problem(text)}); each line must hold one OTLP export",
                )
            )
    return documents, errors


def _spans(document: dict[str, Any], line: int) -> Iterator[Span]:
    for resource_spans in document.get("resourceSpans") or []:
        resource = attributes_of((resource_spans.get("resource") or {}).get("attributes"))
        scopes = (
            resource_spans.get("scopeSpans")
            or resource_spans.get("instrumentationLibrarySpans")
            or []
        )
        for scope in scopes:
            for raw in scope.get("spans") or []:
                span = Span(
                    line,
                    normalise_id(raw.get("traceId"), 16),
                    normalise_id(raw.get("spanId"), 8),
                    normalise_id(raw.get("parentSpanId"), 8),
                    str(raw.get("name", "")),
                    int(raw.get("startTimeUnixNano") or 0),
                    attributes_of(raw.get("attributes")),
                    resource,
                )
                for event in raw.get("events") or []:
                    if event.get("name") == EVALUATION:
                        span.evaluations.append(attributes_of(event.get("attributes")))
                yield span


def _evaluation_logs(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for resource_logs in document.get("resourceLogs") or []:
        for scope in resource_logs.get("scopeLogs") or []:
            for record in scope.get("logRecords") or []:
                attributes = attributes_of(record.get("attributes"))
                if EVALUATION in (record.get("eventName"), attributes.get("event.name")):
                    yield (
                        normalise_id(record.get("traceId"), 16),
                        normalise_id(record.get("spanId"), 8),
                        attributes,
                    )


def _attach_logs(spans: dict[str, list[Span]], logs: list[tuple[str, str, dict[str, Any]]]) -> None:
    for trace_id, span_id, attributes in logs:
        for span in spans.get(trace_id, []):
            if span.span_id == span_id:
                span.evaluations.append(attributes)


def _trace_records(spans: list[Span]) -> Iterator[Record | RowError]:
    llm_spans = [span for span in spans if is_llm_span(span.attributes, span.name)]
    by_id = {span.span_id: span for span in spans}
    for span in llm_spans:
        response = response_of(span.attributes)
        if response is None:
            yield RowError(
                span.line,
                "gen_ai.output.messages",
                f"LLM span {span.name!r} ({span.span_id}) has no output text: record gen_ai.output.messages (or gen_ai.completion)",
            )
            continue
        trace_id = span.trace_id if len(llm_spans) == 1 else f"{span.trace_id}-{span.span_id}"
        yield Record(span.line, _trace_row(span, spans, by_id, response, trace_id))


def _trace_row(
    span: Span, spans: list[Span], by_id: dict[str, Span], response: str, trace_id: str
) -> dict[str, Any]:
    attributes, resource = span.attributes, span.resource
    evaluations = list(span.evaluations) + _inherited_evaluations(span, by_id)
    scalars = {
        k: v
        for k, v in attributes.items()
        if k.startswith("gen_ai.usage.") or k in ("gen_ai.response.id", "gen_ai.operation.name")
    }
    return {
        "trace_id": trace_id,
        "timestamp": datetime.fromtimestamp(span.start / 1e9, UTC).isoformat()
        if span.start
        else None,
        "feature": attributes.get("app.feature")
        or attributes.get("feature")
        or resource.get("app.feature")
        or resource.get("service.name"),
        "risk_category": attributes.get("app.risk_category")
        or attributes.get("risk_category")
        or resource.get("app.risk_category"),
        "model": attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model"),
        "request": request_of(attributes),
        "context": context_of(span, spans),
        "response": response,
        "judge": [verdict_of(e) for e in evaluations if verdict_of(e)],
        "attributes": {
            "otel_trace_id": span.trace_id,
            "otel_span_id": span.span_id,
            "span_name": span.name,
            "service_name": resource.get("service.name"),
            **scalars,
        },
    }


def _inherited_evaluations(span: Span, by_id: dict[str, Span]) -> list[dict[str, Any]]:
    """Evaluations recorded on an ancestor (e.g. the request's root span) apply to this call."""
    found, parent = [], by_id.get(span.parent_id)
    while parent is not None:
        if not is_llm_span(parent.attributes, parent.name):
            found += parent.evaluations
        parent = by_id.get(parent.parent_id)
    return found
