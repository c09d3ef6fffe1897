"""OTLP JSON traces: the OpenTelemetry file-exporter JSON Lines, or one JSON document.

Owns grouping spans into OTel traces, the span tree and the trace rows; OTLP's encoding is
otlp_values, what GenAI attributes mean is otlp_messages. Never raises on bad content: a
row that cannot become a trace is yielded as a RowError.

Shape: if the first line parses as a complete JSON object the file is JSON Lines (one
export object a line, `resourceSpans` and `resourceLogs` lines mixed); otherwise the whole
file is one export document, possibly pretty-printed, all of it reported as line 1.

One trace per LLM call span: a span whose gen_ai.operation.name is chat, text_completion,
generate_content or invoke_agent, or, without a well-known operation name, a span carrying
gen_ai.request.model, gen_ai.system or gen_ai.provider.name (tool, retrieval, embeddings,
agent-creation and memory operations never count). Only the innermost such span counts:
one with another LLM span beneath it (an agent, a framework wrapper) is not a second trace.
A call whose output is only tool calls is an agent step with no answer yet and is skipped;
one whose traceId, spanId or startTimeUnixNano cannot be read, or with no answer text, is
rejected naming the attribute and what is wrong with it.
The trace_id is the OTel traceId when that OTel trace has exactly one answered call, else
`<traceId>-<spanId>`; the import then settles it against the calls already stored
(annotate.ingest.otlp_ids), as the calls of one OTel trace may come in several files.

Context: the tool results (execute_tool spans' gen_ai.tool.call.result) and retrieved
documents (gen_ai.retrieval.documents, OpenInference retrieval.documents.N.document.*) of
the spans in the same OTel trace that started no later than the call, then the tool results
in the call's own input messages; duplicate texts are kept once. None found gives [].

Verdicts: gen_ai.evaluation.result span events and log records, linked by traceId/spanId
(or by gen_ai.response.id when the record names no span); a verdict on a span that is not
itself a call (the request's root span, an agent) applies to every call beneath it. Reading
and attaching them is otlp_evaluations.

Spans and logs are grouped by traceId across the whole file, so the file is held in
memory: OTLP exports are per-batch files, not the million-trace case.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import IO, Any

from annotate.ingest.otlp_evaluations import (
    EVALUATION,
    Evaluation,
    Span,
    attach_verdicts,
    evaluations_of,
    raw_spans,
)
from annotate.ingest.otlp_messages import (
    OUTPUT,
    is_content_key,
    is_llm_span,
    message_tool_results,
    output_problem,
    request_of,
    requested_tools_only,
    response_of,
    span_context,
)
from annotate.ingest.otlp_values import (
    NOT_AN_EXPORT,
    attributes_of,
    export_documents,
    is_export,
    nanos_of,
    normalise_id,
    timestamp_of,
)
from annotate.traces import Record, RowError, describe_type, shown, unexpected_error


def looks_like(first: Any) -> bool:
    """Format detection: the file's first JSON value is an OTLP export object."""
    return is_export(first)


def read_records(fh: IO[bytes]) -> Iterator[Record | RowError]:
    """Every call span as a Record, every unusable line or verdict as a RowError, by line."""
    documents, errors = export_documents(fh.read())
    found: list[Record | RowError] = list(errors)
    spans: list[Span] = []
    evaluations: list[Evaluation] = []
    for line, document in documents:
        if not is_export(document):
            found.append(RowError(line, "", NOT_AN_EXPORT))
            continue
        problems = list(_shape_problems(document, line))
        new_spans = list(_spans(document, line))
        new_evaluations = list(evaluations_of(document, line))
        if not (problems or new_spans or new_evaluations):
            problems.append(RowError(line, "", _NOTHING))
        found.extend(problems)
        spans.extend(new_spans)
        evaluations.extend(new_evaluations)
    traces = _by_trace(spans)
    found.extend(attach_verdicts(traces, evaluations))
    found.extend(records_of_spans(traces))
    yield from sorted(found, key=lambda item: item.line)


def records_of_spans(traces: dict[str, list[Span]]) -> list[Record | RowError]:
    """Every call of these OTel traces (trace id -> its spans, verdicts already attached) as a
    Record, or a RowError naming why it cannot be one. The one route from spans to trace rows,
    for OTLP files and for the tracing tools' own tables (Phoenix, MLflow) alike."""
    found: list[Record | RowError] = []
    for trace_spans in traces.values():
        found.extend(_guarded_records(trace_spans))
    return found


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


def _guarded_records(spans: list[Span]) -> list[Record | RowError]:
    """One OTel trace's rows; a bug while building them costs that trace, never the file."""
    try:
        return list(_trace_records(spans))
    except Exception as exc:
        first = min(spans, key=lambda span: span.line)
        return [unexpected_error(Record(first.line, None), exc)]


def _spans(document: dict[str, Any], line: int) -> Iterator[Span]:
    for raw, resource in raw_spans(document):
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
        )


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


def _ancestors(span: Span, by_id: dict[str, Span]) -> Iterator[Span]:
    seen = {span.span_id}
    parent = by_id.get(span.parent_id or "")
    while parent is not None and parent.span_id not in seen:  # a cycle must not hang us
        seen.add(parent.span_id)
        yield parent
        parent = by_id.get(parent.parent_id or "")


def _llm_calls(spans: list[Span], by_id: dict[str, Span]) -> list[Span]:
    """The innermost LLM spans that answered in text (or failed to answer at all)."""
    candidates = [span for span in spans if is_llm_span(span.attributes)]
    wrappers = {parent.span_id for span in candidates for parent in _ancestors(span, by_id)}
    return [
        span
        for span in candidates
        if span.span_id not in wrappers
        and (response_of(span.attributes) is not None or not requested_tools_only(span.attributes))
    ]


def _trace_records(spans: list[Span]) -> Iterator[Record | RowError]:
    by_id = {span.span_id: span for span in spans}
    calls = _llm_calls(spans, by_id)
    handed_on = {id(span): span_context(span.attributes, span.name) for span in spans}
    for span in calls:
        response = response_of(span.attributes)
        if span.problem is not None:
            yield RowError(span.line, *span.problem)
        elif response is None:
            yield RowError(span.line, OUTPUT, _no_output(span))
        else:
            trace_id = span.trace_id if len(calls) == 1 else f"{span.trace_id}-{span.span_id}"
            context = _context(span, spans, handed_on)
            yield Record(span.line, _trace_row(span, by_id, response, trace_id, context))
    yield from _stray_verdicts(spans, calls, by_id)


def _stray_verdicts(
    spans: list[Span], calls: list[Span], by_id: dict[str, Span]
) -> Iterator[RowError]:
    """Verdicts on a span with no call at or beneath it (a tool, a retrieval) judge nothing."""
    covered = {s.span_id for call in calls for s in (call, *_ancestors(call, by_id))}
    for span in spans:
        for line, verdict in span.verdicts if span.span_id not in covered else []:
            yield RowError(
                line,
                EVALUATION,
                f"from {verdict['judge']!r} is on span {span.name!r} ({span.span_id}), which is "
                "not an LLM call nor above one; attach the evaluation to the LLM span it judged",
            )


def _no_output(span: Span) -> str:
    """Why the call has no answer: its output messages unreadable, textless, or not recorded."""
    error = span.attributes.get("error.type")
    failed = f" (it failed: error.type={error})" if error else ""
    problem = output_problem(span.attributes, f"LLM span {span.name!r} ({span.span_id}){failed}")
    if problem is not None:
        return problem
    return (
        f"is missing: LLM span {span.name!r} ({span.span_id}) has no output text{failed}; "
        "enable message content capture (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) "
        "so spans record gen_ai.output.messages or gen_ai.completion"
    )


def _trace_row(
    span: Span, by_id: dict[str, Span], response: str, trace_id: str, context: list[Any]
) -> dict[str, Any]:
    attributes = span.attributes
    row = {
        "trace_id": trace_id,
        "timestamp": timestamp_of(span.start),
        "feature": _first(span, "app.feature", "feature") or span.resource.get("service.name"),
        "risk_category": _first(span, "app.risk_category", "risk_category"),
        "model": attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model"),
        "request": request_of(attributes),
        "context": context,
        "response": response,
        "judge": _verdicts(span, by_id),
        "attributes": _row_attributes(span),
    }
    return {key: value for key, value in row.items() if value is not None}


def _first(span: Span, *keys: str) -> Any:
    """The first of `keys` set on the span, else on its resource."""
    for source in (span.attributes, span.resource):
        for key in keys:
            if source.get(key) not in (None, ""):
                return source[key]
    return None


def _context(
    span: Span, spans: list[Span], handed_on: dict[int, list[dict[str, str]]]
) -> list[dict[str, str]]:
    """What the trace's tool and retrieval spans had handed on when the call started."""
    earlier = sorted(
        (other for other in spans if other is not span and other.start <= span.start),
        key=lambda other: other.start,
    )
    items = [item for other in earlier for item in handed_on[id(other)]]
    return _unique_texts(items + message_tool_results(span.attributes))


def _unique_texts(items: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    seen: set[str] = set()
    unique = []
    for item in items:
        if item["text"] not in seen:
            seen.add(item["text"])
            unique.append(item)
    return unique


def _verdicts(span: Span, by_id: dict[str, Span]) -> list[dict[str, Any]]:
    """The span's own verdicts, then those on the spans above it (root span, agent)."""
    verdicts: list[dict[str, Any]] = []
    for holder in (span, *_ancestors(span, by_id)):
        verdicts.extend(v for _line, v in holder.verdicts if v not in verdicts)
    return verdicts


def _row_attributes(span: Span) -> dict[str, Any]:
    scalars = {
        key: value
        for key, value in span.attributes.items()
        if key.startswith("gen_ai.")
        and not is_content_key(key)
        and isinstance(value, str | int | float | bool)
    }
    return {
        "otel_trace_id": span.trace_id,
        "otel_span_id": span.span_id,
        "span_name": span.name,
        "service_name": span.resource.get("service.name"),
        **scalars,
    }
