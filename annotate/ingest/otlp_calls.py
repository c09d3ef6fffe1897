"""From one file's spans (OTLP, or a tracing tool's table turned back into spans) to trace
rows: which spans are model calls, what each was asked and answered, and its context.

One call, one trace: a model call is a span that a convention reads as one (see
annotate.ingest.conventions) and that recorded content. A call span without content beside
or beneath one with content (the anthropic SDK's own `anthropic.messages.create` span under
an instrumentation's) is the same call: not a trace, not an error. A call with content that
has another beneath it (an agent, a framework wrapper) is not a second trace either. A call
whose output calls tools is an agent step, skipped: text it says first is a preamble, not an
answer.

Context: the retrieval and tool spans of the same OTel trace that started no later than the
call, then what the call's own messages carry (tool results, document blocks, the prompt),
chosen by `--context` kinds (annotate.ingest.call_context).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from annotate.ingest.call_context import (
    ALL_CONTEXT,
    Item,
    answer_of,
    chosen,
    is_agent_step,
    message_context,
    request_of,
)
from annotate.ingest.conventions import LLM, TOOL, SpanView, view_of
from annotate.ingest.conventions.messages import decoded
from annotate.ingest.conventions.mlflow import OUTPUTS
from annotate.ingest.conventions.provider import is_object_repr
from annotate.ingest.otlp_evaluations import EVALUATION, Span
from annotate.ingest.otlp_messages import OUTPUT, is_content_key, output_problem
from annotate.ingest.otlp_values import timestamp_of
from annotate.traces import Record, RowError, unexpected_error

SDK_SCOPE = "com.anthropic.sdk.python"
OUTPUT_FIELDS = {  # where each convention records a call's answer
    "openinference": "output.value",
    "mlflow": OUTPUTS,
    "langfuse": "langfuse.observation.output",
}
Views = dict[int, SpanView]


def records_of_spans(
    traces: dict[str, list[Span]], context: frozenset[str] = ALL_CONTEXT
) -> list[Record | RowError]:
    """Every call of these OTel traces (trace id -> its spans, verdicts already attached) as a
    Record, or a RowError naming why it cannot be one. The one route from spans to trace rows,
    for OTLP files and for the tracing tools' own tables (Phoenix, MLflow) alike."""
    spans = [span for trace in traces.values() for span in trace]
    views = {id(span): view_of(span.attributes, span.events) for span in spans}
    twins = _twins(spans, views)
    found: list[Record | RowError] = []
    for trace_spans in traces.values():
        found.extend(_guarded(trace_spans, views, twins, context))
    return found


def _twins(spans: list[Span], views: Views) -> set[int]:
    """Model-call spans without content that record a call another span records with content
    (the anthropic SDK's own span beside an instrumentation's, often in another OTel trace):
    the same response id, else the innermost call with content whose time holds theirs. The
    call with content takes the model and response id it lacks from its twin."""
    calls = [span for span in spans if _is_call(views[id(span)])]
    by_response = {views[id(c)].response_id: c for c in calls if views[id(c)].response_id}
    twins: set[int] = set()
    for span in spans:
        view = views[id(span)]
        if view.kind != LLM or view.has_content:
            continue
        twin = by_response.get(view.response_id) if view.response_id else None
        holding = [c for c in calls if c.start <= span.start <= c.end]  # a stream ends later
        if twin is None and holding:
            twin = min(holding, key=lambda c: (c.trace_id != span.trace_id, c.end - c.start))
        if twin is not None:
            twins.add(id(span))
            found = views[id(twin)]
            found.model = found.model or view.model
            found.response_id = found.response_id or view.response_id
    return twins


def _guarded(
    spans: list[Span], views: Views, twins: set[int], context: frozenset[str]
) -> list[Record | RowError]:
    """One OTel trace's rows; a bug while building them costs that trace, never the file."""
    try:
        return list(_trace_records(spans, views, twins, context))
    except Exception as exc:
        first = min(spans, key=lambda span: span.line)
        return [unexpected_error(Record(first.line, None), exc)]


def is_llm_span(attributes: dict[str, Any]) -> bool:
    """A model call by its convention, content or not."""
    return view_of(attributes).kind == LLM


def _is_call(view: SpanView) -> bool:
    return view.kind == LLM and view.has_content


def ancestors(span: Span, by_id: dict[str, Span]) -> Iterator[Span]:
    seen = {span.span_id}
    parent = by_id.get(span.parent_id or "")
    while parent is not None and parent.span_id not in seen:  # a cycle must not hang us
        seen.add(parent.span_id)
        yield parent
        parent = by_id.get(parent.parent_id or "")


def _calls(spans: list[Span], by_id: dict[str, Span], views: Views, twins: set[int]) -> list[Span]:
    """The innermost model calls with content, and the calls no span with content records."""
    llm = [span for span in spans if views[id(span)].kind == LLM]
    with_content = [span for span in llm if views[id(span)].has_content]
    above = {id(a) for span in with_content for a in ancestors(span, by_id)}
    content_ids = {span.span_id for span in with_content}
    calls = [span for span in with_content if id(span) not in above]
    for span in llm:
        if span in with_content:
            continue
        related = {a.span_id for a in ancestors(span, by_id)} | {
            s.span_id for s in with_content if s.parent_id == span.parent_id
        }
        beneath = id(span) in above
        if not (related & content_ids or beneath or id(span) in twins):
            calls.append(span)
    return calls


def _trace_records(
    spans: list[Span], views: Views, twins: set[int], context: frozenset[str]
) -> Iterator[Record | RowError]:
    by_id = {span.span_id: span for span in spans}
    calls = [s for s in _calls(spans, by_id, views, twins) if not _step(views[id(s)])]
    for span in calls:
        view = views[id(span)]
        answer = answer_of(view.outputs)
        if span.problem is not None:
            yield RowError(span.line, *span.problem)
        elif answer is None:
            field = OUTPUT_FIELDS.get(view.convention, OUTPUT)
            yield RowError(span.line, field, _no_output(span, view, _under_mlflow(spans)))
        else:
            trace_id = span.trace_id if len(calls) == 1 else f"{span.trace_id}-{span.span_id}"
            items, origin = chosen(_candidates(span, spans, views), context)
            row = _trace_row(span, by_id, view, answer, trace_id, items)
            row["attributes"]["context_from"] = origin
            yield Record(span.line, row)
    yield from _stray_verdicts(spans, calls, by_id)


def _step(view: SpanView) -> bool:
    return is_agent_step(view.outputs)


def _stray_verdicts(
    spans: list[Span], calls: list[Span], by_id: dict[str, Span]
) -> Iterator[RowError]:
    """Verdicts on a span with no call at or beneath it (a tool, a retrieval) judge nothing."""
    covered = {s.span_id for call in calls for s in (call, *ancestors(call, by_id))}
    for span in spans:
        for line, verdict in span.verdicts if span.span_id not in covered else []:
            yield RowError(
                line,
                EVALUATION,
                f"from {verdict['judge']!r} is on span {span.name!r} ({span.span_id}), which is "
                "not an LLM call nor above one; attach the evaluation to the LLM span it judged",
            )


def _under_mlflow(spans: list[Span]) -> bool:
    """MLflow traced this request: its spans carry its scope or its attributes."""
    return any(s.scope.startswith("mlflow") or "mlflow.spanType" in s.attributes for s in spans)


def _no_output(span: Span, view: SpanView, mlflow: bool = False) -> str:
    """Why the call has no answer: its output unreadable, textless, or not recorded."""
    error = span.attributes.get("error.type")
    failed = f" (it failed: error.type={error})" if error else ""
    named = f"LLM span {span.name!r} ({span.span_id}){failed}"
    problem = output_problem(span.attributes, named) if view.convention == "genai" else None
    if problem is not None:
        return problem
    if view.convention == "mlflow" and is_object_repr(decoded(span.attributes.get(OUTPUTS))):
        return (
            f"is missing: {named} recorded the stream object, not the streamed answer "
            f"({decoded(span.attributes.get(OUTPUTS))}): MLflow's anthropic autolog does not "
            'read streams; trace the call with @mlflow.trace(span_type="LLM") recording the '
            "streamed text"
        )
    if span.scope == SDK_SCOPE and mlflow:
        return (
            f"is missing: {named} is the anthropic SDK's own span, and MLflow recorded no "
            "call beside it: MLflow's anthropic autolog traces Messages.create only, so a "
            "call made with messages.stream() has no messages; trace that call with "
            '@mlflow.trace(span_type="LLM") recording its messages and answer'
        )
    if span.scope == SDK_SCOPE and not view.has_content:
        return (
            f"is missing: {named} is the anthropic SDK's own span, which records no messages; "
            "instrument the client with content capture on (OpenLLMetry, OpenInference, MLflow "
            "or Langfuse) and export that instrumentation's spans with it"
        )
    return (
        f"is missing: {named} has no output text; {CAPTURE.get(view.convention, CAPTURE['genai'])}"
    )


CAPTURE = {  # how each convention's instrumentation is told to record the answer
    "genai": "enable message content capture (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) "
    "so spans record gen_ai.output.messages or gen_ai.completion",
    "openinference": "turn off hiding outputs (OPENINFERENCE_HIDE_OUTPUTS, "
    "OPENINFERENCE_HIDE_OUTPUT_MESSAGES) so spans record output.value or llm.output_messages",
    "mlflow": "check that autologging records the call's outputs (mlflow.spanOutputs)",
    "langfuse": "record the generation's output (langfuse.observation.output)",
}


def _candidates(span: Span, spans: list[Span], views: Views) -> dict[str, list[Item]]:
    """What the trace's retrieval and tool spans had handed on when the call started, then
    what the call's own messages carry."""
    earlier = sorted(
        (other for other in spans if other is not span and other.start <= span.start),
        key=lambda other: other.start,
    )
    found = message_context(views[id(span)].inputs)
    found["retrieval"] = [item for other in earlier for item in _retrieved(other, views)]
    found["tools"] = [item for o in earlier for item in _tool_result(o, views)] + found["tools"]
    return found


def _retrieved(span: Span, views: Views) -> list[Item]:
    view = views[id(span)]
    if view.kind == LLM:
        return []
    fallback = str(span.attributes.get("gen_ai.data_source.id") or span.name)
    return [
        {"source": f"retrieval {doc_id or f'{fallback} #{index}'}", "text": text}
        for index, (doc_id, text) in enumerate(view.documents)
    ]


def _tool_result(span: Span, views: Views) -> list[Item]:
    view = views[id(span)]
    if view.kind != TOOL or view.tool_result is None or not view.tool_result.strip():
        return []
    return [{"source": f"tool {view.tool_name or span.name}", "text": view.tool_result}]


def _trace_row(
    span: Span,
    by_id: dict[str, Span],
    view: SpanView,
    answer: str,
    trace_id: str,
    context: list[Item],
) -> dict[str, Any]:
    row = {
        "trace_id": trace_id,
        "timestamp": timestamp_of(span.start),
        "feature": _first(span, "app.feature", "feature") or span.resource.get("service.name"),
        "risk_category": _first(span, "app.risk_category", "risk_category"),
        "model": view.model,
        "request": request_of(view.inputs),
        "context": context,
        "response": answer,
        "judge": _verdicts(span, by_id),
        "attributes": _row_attributes(span, view),
    }
    return {key: value for key, value in row.items() if value is not None}


def _first(span: Span, *keys: str) -> Any:
    """The first of `keys` set on the span, else on its resource."""
    for source in (span.attributes, span.resource):
        for key in keys:
            if source.get(key) not in (None, ""):
                return source[key]
    return None


def _verdicts(span: Span, by_id: dict[str, Span]) -> list[dict[str, Any]]:
    """The span's own verdicts, then those on the spans above it (root span, agent)."""
    verdicts: list[dict[str, Any]] = []
    for holder in (span, *ancestors(span, by_id)):
        verdicts.extend(v for _line, v in holder.verdicts if v not in verdicts)
    return verdicts


KEPT_PREFIXES = ("gen_ai.", "llm.token_count.")
KEPT_KEYS = frozenset({"llm.provider", "llm.system", "openinference.span.kind"})


def _row_attributes(span: Span, view: SpanView) -> dict[str, Any]:
    scalars = {
        key: value
        for key, value in span.attributes.items()
        if (key.startswith(KEPT_PREFIXES) or key in KEPT_KEYS)
        and not is_content_key(key)
        and isinstance(value, str | int | float | bool)
    }
    return {
        "otel_trace_id": span.trace_id,
        "otel_span_id": span.span_id,
        "span_name": span.name,
        "service_name": span.resource.get("service.name"),
        "convention": view.convention,
        **scalars,
    }
