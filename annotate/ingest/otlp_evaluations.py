"""OTLP evaluation records (gen_ai.evaluation.result span events and log records) and the
spans they attach to: linked by traceId/spanId, or by gen_ai.response.id when the record names
no span. One whose span is not in the file goes on as an "evaluation" Record for the importer;
one that cannot be a verdict (no label, a score that is not a finite number) is rejected on its
own line, naming the attribute, and its span is imported without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from annotate.ingest.otlp_messages import verdict_of
from annotate.ingest.otlp_values import any_value, as_object, attributes_of, normalise_id, objects
from annotate.traces import Record, RowError, check_verdict, describe_type, shown

# the default rubric's criteria: an evaluation named so with a score and no label is a rating
CRITERIA = ("relevance", "coherence")

EVALUATION = "gen_ai.evaluation.result"
# The evaluation name `annotate export-otel` gives the reviewers' gold: such a record is this
# app's own human verdict coming back, never a judge (one scored against the gold it was made
# from agrees with it by construction), and is refused on its line.
OWN_HUMAN = "annotate.human_review"
SCORE = "gen_ai.evaluation.score.value"
OTEL_FIELDS = {  # a verdict's field -> the attribute it came from
    "judge": "gen_ai.evaluation.name",
    "label": "gen_ai.evaluation.score.label",
    "score": SCORE,
    "explanation": "gen_ai.evaluation.explanation",
}


@dataclass
class Span:
    line: int
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    attributes: dict[str, Any]
    resource: dict[str, Any]
    problem: tuple[str, str] | None = None  # (field, message): unreadable ids or start time
    verdicts: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    scope: str = ""  # the instrumentation scope's name
    end: int = 0  # endTimeUnixNano; 0 when unknown
    events: list[tuple[str, Any]] = field(default_factory=list)  # GenAI message events, in order


@dataclass(frozen=True)
class Evaluation:
    line: int
    trace_id: str | None
    span_id: str | None
    attributes: dict[str, Any]


def raw_spans(
    document: dict[str, Any],
) -> Iterator[tuple[dict[str, Any], dict[str, Any], str]]:
    """(span, resource attributes, scope name) for every span; older exporters say
    instrumentationLibrary."""
    for resource_spans in objects(document.get("resourceSpans")):
        resource = attributes_of(as_object(resource_spans.get("resource")).get("attributes"))
        scopes = resource_spans.get("scopeSpans") or resource_spans.get(
            "instrumentationLibrarySpans"
        )
        for scope in objects(scopes):
            name = as_object(scope.get("scope") or scope.get("instrumentationLibrary")).get("name")
            for raw in objects(scope.get("spans")):
                yield raw, resource, name if isinstance(name, str) else ""


def evaluations_of(document: dict[str, Any], line: int) -> Iterator[Evaluation]:
    """gen_ai.evaluation.result span events, then log records (eventName or event.name)."""
    for raw, _resource, _scope in raw_spans(document):
        trace_id = normalise_id(raw.get("traceId"), 16)
        span_id = normalise_id(raw.get("spanId"), 8)
        for event in objects(raw.get("events")):
            if event.get("name") == EVALUATION:
                yield Evaluation(line, trace_id, span_id, attributes_of(event.get("attributes")))
    for resource_logs in objects(document.get("resourceLogs")):
        for scope in objects(resource_logs.get("scopeLogs")):
            for record in objects(scope.get("logRecords")):
                yield from _log_evaluation(record, line)


def _log_evaluation(record: dict[str, Any], line: int) -> Iterator[Evaluation]:
    attributes = attributes_of(record.get("attributes"))
    if EVALUATION not in (record.get("eventName"), attributes.get("event.name")):
        return
    body = any_value(record.get("body"))
    if isinstance(body, dict):  # some SDKs put the event's fields in a kvlist body
        attributes = {**body, **attributes}
    yield Evaluation(
        line,
        normalise_id(record.get("traceId"), 16),
        normalise_id(record.get("spanId"), 8),
        attributes,
    )


def attach_verdicts(
    traces: dict[str, list[Span]], evaluations: list[Evaluation]
) -> Iterator[Record | RowError]:
    """Give each verdict to the span it names; one naming a span not in this file is passed
    on as an "evaluation" Record, for the importer to attach to a span in the store."""
    by_response = {
        _response_id(span.attributes): span for spans in traces.values() for span in spans
    }
    for evaluation in evaluations:
        verdict = _checked_verdict(evaluation)
        span = _evaluated_span(traces, by_response, evaluation)
        if isinstance(verdict, tuple):  # the evaluation is rejected on its line, its span kept
            yield RowError(evaluation.line, *verdict)
        elif span is None:
            yield Record(evaluation.line, _loose(evaluation, verdict), kind="evaluation")
        elif all(verdict != held for _line, held in span.verdicts):
            span.verdicts.append((evaluation.line, verdict))


def _evaluated_span(
    traces: dict[str, list[Span]], by_response: dict[str | None, Span], evaluation: Evaluation
) -> Span | None:
    for span in traces.get(evaluation.trace_id or "", []):
        if span.span_id == evaluation.span_id:
            return span
    response_id = _response_id(evaluation.attributes)
    return by_response.get(response_id) if response_id else None


def _response_id(attributes: dict[str, Any]) -> str | None:
    response_id = attributes.get("gen_ai.response.id")
    return response_id if isinstance(response_id, str) and response_id else None


def _checked_verdict(evaluation: Evaluation) -> dict[str, Any] | tuple[str, str]:
    """The evaluation's verdict, or (attribute, message) saying why it cannot be one."""
    if evaluation.attributes.get(OTEL_FIELDS["judge"]) == OWN_HUMAN:
        return OTEL_FIELDS["judge"], _own_human(evaluation.attributes)
    verdict = verdict_of(evaluation.attributes) or rating_of(evaluation.attributes)
    if verdict is None:
        return OTEL_FIELDS["label"], _no_label(evaluation)
    score = verdict.get("score")
    if score is not None and not isinstance(score, float):
        return SCORE, (
            f"must be a number, got {describe_type(score)} ({shown(score)}) on the evaluation "
            f"from {verdict['judge']!r}; record the score as a doubleValue or intValue, or leave "
            "it out: a grade such as 'high' belongs in gen_ai.evaluation.score.label"
        )
    checked = check_verdict(verdict)
    if isinstance(checked, tuple):
        name, message = checked
        return OTEL_FIELDS.get(name, EVALUATION), message
    return verdict


def rating_of(attributes: dict[str, Any]) -> dict[str, Any] | None:
    """An evaluation with a numeric score and no label that names a criterion rates the
    response on it: its name is a default criterion ("Relevance" -> relevance) or the record
    says `annotate.criterion` (any other, e.g. completeness). A name and a score alone may be
    a judge's confidence, not a rating: that stays a verdict without a label, refused. The
    judge is `annotate.judge` if the record says it, else otel-evaluation."""
    name, score = attributes.get(OTEL_FIELDS["judge"]), attributes.get(SCORE)
    named = attributes.get("annotate.criterion") or name
    if not isinstance(named, str) or isinstance(score, bool) or not isinstance(score, int | float):
        return None
    criterion = "_".join(named.strip().lower().split())
    if criterion not in CRITERIA and "annotate.criterion" not in attributes:
        return None
    judge = attributes.get("annotate.judge")
    return {
        "judge": judge if isinstance(judge, str) and judge else "otel-evaluation",
        "level": "response",
        "ratings": {criterion: float(score)},
    }


def _own_human(attributes: dict[str, Any]) -> str:
    trace, sample = attributes.get("annotate.trace_id"), attributes.get("annotate.sample")
    return (
        f"is {OWN_HUMAN!r}: the record of trace {shown(trace) if trace else 'unnamed'} "
        f"(sample {shown(sample) if sample else 'unnamed'}) is one of this app's own human verdicts, written by "
        "`annotate export-otel` from the reviewers' gold, not a judge's verdict; it is not "
        "imported (a judge scored against the gold it was made from agrees with it by "
        "construction). The labels it came from stay in the store that exported it; bring "
        "reviewers' claim labels with `annotate import-labels`"
    )


def _no_label(evaluation: Evaluation) -> str:
    judge = evaluation.attributes.get("gen_ai.evaluation.name") or "an unnamed judge"
    return (
        f"is missing on the evaluation from {judge!r}: a verdict needs a label to compare "
        'with reviewers; record gen_ai.evaluation.score.label (such as "supported")'
    )


def _loose(evaluation: Evaluation, verdict: dict[str, Any]) -> dict[str, Any]:
    return {
        "otel_trace_id": evaluation.trace_id,
        "otel_span_id": evaluation.span_id,
        "response_id": _response_id(evaluation.attributes),
        "verdict": verdict,
    }
