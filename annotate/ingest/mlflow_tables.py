"""MLflow's `search_traces()` table (Parquet or JSON Lines): one trace a row, with its spans
and its assessments.

Owns turning each row's `spans` back into spans (ids as MLflow writes them, attributes such as
mlflow.spanType / mlflow.spanInputs / mlflow.spanOutputs kept as they are) and its LLM_JUDGE
and CODE feedback into verdicts on the span they name (the root span when they name none).
Must not read what a span means: spans go through otlp.records_of_spans, as OTLP's do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from annotate.ingest.call_context import ALL_CONTEXT
from annotate.ingest.otlp_evaluations import Evaluation, Span
from annotate.ingest.otlp_values import nanos_of, normalise_id
from annotate.ingest.phoenix_tables import dotted, human_note, spans_to_records, table_rows
from annotate.traces import Record, RowError, describe_type

TRACE_IDS = ("trace_id", "request_id")  # request_id: MLflow 2's name
STRATUM_TAGS = ("feature", "risk_category", "model")  # as connectors/mlflow.py lists them
TRACE_COLUMNS = frozenset({"assessments", "trace_metadata", "request_metadata", "execution_duration", "execution_time_ms"})  # fmt: skip
JUDGES = ("LLM_JUDGE", "CODE")
_REEXPORT = "export the table again with mlflow.search_traces()"


def looks_like(first: Any) -> bool:
    """Format detection: a search_traces() row (its first row's column names)."""
    if not isinstance(first, dict):
        return False
    keys = first.keys()
    return "spans" in keys and any(k in keys for k in TRACE_IDS) and bool(TRACE_COLUMNS & keys)


def read_records(
    fh: IO[bytes], context: frozenset[str] = ALL_CONTEXT
) -> Iterator[Record | RowError]:
    """Every call of every row's trace as a trace row; bad rows and assessments by row."""
    found: list[Record | RowError] = []
    spans: list[Span] = []
    evaluations: list[Evaluation] = []
    unit = "line"
    for item in table_rows(fh):
        unit = item.unit
        if isinstance(item, RowError):
            found.append(item)
            continue
        problem = _row_problem(item)
        if problem is not None:
            found.append(problem)
            continue
        tagged = _stratum_tags(item.data)
        row_spans = [
            _span(raw, item.line, tagged) for raw in item.data["spans"] if isinstance(raw, dict)
        ]
        spans.extend(row_spans)
        for index, raw in enumerate(item.data.get("assessments") or []):
            verdict = _assessment(raw, index, item, row_spans)
            if isinstance(verdict, RowError | Record):
                found.append(verdict)
            elif verdict is not None:
                evaluations.append(verdict)
    found.extend(spans_to_records(spans, evaluations, context, unit))
    yield from sorted(found, key=lambda entry: entry.line)


def _row_problem(record: Record) -> RowError | None:
    data = record.data
    if not isinstance(data, dict):
        message = f"must be one trace (an object), got {describe_type(data)}; {_REEXPORT}"
        return RowError(record.line, "", message, record.unit)
    spans = data.get("spans")
    if not isinstance(spans, list) or not spans:
        got = "empty" if spans == [] else describe_type(spans)
        message = (
            f"is {got}: the row's spans are what its request, answer and documents are read "
            f"from; {_REEXPORT} (keep its spans column)"
        )
        return RowError(record.line, "spans", message, record.unit)
    return None


def _stratum_tags(row: dict[str, Any]) -> dict[str, Any]:
    """The trace's tags and metadata that name a stratum (feature, risk_category, model, or
    app.* of them), given to its spans as their resource: MLflow tags a trace, not a span, and
    a sample drawn from the server's trace list stratifies by the same tags."""
    given: dict[str, Any] = {}
    for column in ("trace_metadata", "request_metadata", "tags"):
        if isinstance(row.get(column), dict):
            given.update(row[column])
    names = {f"{prefix}{name}" for name in STRATUM_TAGS for prefix in ("", "app.")}
    return {key: value for key, value in given.items() if key in names and value}


def _span(raw: dict[str, Any], line: int, resource: dict[str, Any]) -> Span:
    trace_id = normalise_id(raw.get("trace_id"), 16)
    span_id = normalise_id(raw.get("span_id"), 8)
    start = nanos_of(raw.get("start_time_unix_nano"))
    problem = None
    if trace_id is None or span_id is None:
        key = "trace_id" if trace_id is None else "span_id"
        problem = (f"spans.{key}", f"is {describe_type(raw.get(key))}, not an id; {_REEXPORT}")
    elif isinstance(start, str):
        problem = ("spans.start_time_unix_nano", start)
    attributes: dict[str, Any] = {}
    for key, value in (raw.get("attributes") or {}).items():
        dotted(str(key), value, attributes)
    end = nanos_of(raw.get("end_time_unix_nano"))
    return Span(
        line,
        trace_id or str(raw.get("trace_id")),
        span_id or str(raw.get("span_id")),
        normalise_id(raw.get("parent_span_id"), 8),
        str(raw.get("name") or ""),
        start if isinstance(start, int) else 0,
        attributes,
        dict(resource),
        problem,
        end=end if isinstance(end, int) else 0,
    )


def _assessment(
    raw: Any, index: int, record: Record, spans: list[Span]
) -> Evaluation | RowError | Record | None:
    """An LLM_JUDGE or CODE feedback as an evaluation of its span; an expectation (a ground
    truth, not a verdict) or an assessment since overridden (valid: false) is none."""
    where = f"assessments[{index}]"
    if not isinstance(raw, dict) or not isinstance(raw.get("feedback"), dict):
        return None
    if raw.get("valid") is False:
        return None
    given = raw.get("source")
    source: dict[str, Any] = given if isinstance(given, dict) else {}
    kind, source_id = source.get("source_type"), source.get("source_id")
    name = str(raw.get("assessment_name") or "feedback")
    if kind == "HUMAN":
        return human_note(record, where, name, source_id)
    if kind not in JUDGES:
        message = f"has source_type {kind!r}; a judge's is one of {', '.join(JUDGES)}"
        return RowError(record.line, f"{where}.source", message, record.unit)
    label = _label(raw["feedback"].get("value"))
    if isinstance(label, RowError):
        return RowError(record.line, f"{where}.feedback", label.message, record.unit)
    span = _assessed_span(raw, spans)
    if span is None:
        message = f"names span {raw.get('span_id')!r}, which is not among the row's spans"
        return RowError(record.line, f"{where}.span_id", message, record.unit)
    attributes = {
        "gen_ai.evaluation.name": f"{source_id or kind}/{name}",
        "gen_ai.evaluation.score.label": label[0],
        "gen_ai.evaluation.score.value": label[1],
        "gen_ai.evaluation.explanation": raw.get("rationale"),
    }
    return Evaluation(record.line, span.trace_id, span.span_id, attributes)


def _label(value: Any) -> tuple[str, float | None] | RowError:
    """(label, score) of a feedback value: true/false, a text, or a number (label and score)."""
    if isinstance(value, bool):
        return ("true" if value else "false"), None
    if isinstance(value, int | float):
        return str(value), float(value)
    if isinstance(value, str) and value.strip():
        return value, None
    return RowError(
        0,
        "",
        f"has value {describe_type(value)}: a verdict needs a label (a text, a number or "
        "true/false); a feedback that failed (an error, no value) judges nothing",
    )


def _assessed_span(raw: dict[str, Any], spans: list[Span]) -> Span | None:
    named = raw.get("span_id")
    if named:
        wanted = {normalise_id(named, 8), str(named)}
        return next((span for span in spans if span.span_id in wanted), None)
    ids = {span.span_id for span in spans}
    return next((span for span in spans if span.parent_id not in ids), spans[0] if spans else None)
