"""Arize Phoenix's exported tables: the spans dataframe (Parquet or JSON Lines), get_spans()
JSON, the span annotations dataframe and get_input_output_context().

Owns turning those rows back into spans (attribute columns unflattened to the dotted keys OTLP
has) and annotations into verdicts on their span. Must not read what a span means (which is
a call, its request, answer, documents): spans go through otlp.records_of_spans, as OTLP's do.
get_input_output_context() has no spans: its rows are trace rows at once.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import IO, Any

from annotate.ingest.call_context import ALL_CONTEXT
from annotate.ingest.generic import read_json_document, read_jsonl, read_parquet
from annotate.ingest.otlp import records_of_spans
from annotate.ingest.otlp_evaluations import Evaluation, Span, attach_verdicts
from annotate.ingest.otlp_values import normalise_id
from annotate.traces import Record, RowError, describe_type

SPAN_COLUMNS = frozenset({"context.trace_id", "context.span_id", "span_kind"})
ANNOTATION_COLUMNS = frozenset({"span_id", "annotation_name", "annotator_kind"})
CONTEXT_COLUMNS = frozenset({"context.trace_id", "input", "output", "context"})
DOCUMENT_SEPARATOR = "\n\n"  # how get_input_output_context joins the retrieved documents
_ATTRIBUTES = "attributes."
SPAN_KIND = "openinference.span.kind"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_REEXPORT = "export the table from Phoenix again"


def table_format(first: Any) -> str | None:
    """The Phoenix table whose first row (or get_spans() item) this is, if any."""
    if not isinstance(first, dict):
        return None
    keys = first.keys()
    if keys >= SPAN_COLUMNS or _is_api_span(first):
        return "phoenix_spans"
    if keys >= ANNOTATION_COLUMNS:
        return "phoenix_annotations"
    if keys >= CONTEXT_COLUMNS:
        return "phoenix_context"
    return None


def _is_api_span(row: dict[str, Any]) -> bool:
    context = row.get("context")
    return isinstance(context, dict) and "span_id" in context and "span_kind" in row


def table_rows(fh: IO[bytes]) -> Iterator[Record | RowError]:
    """The rows of a Parquet file, a JSON array or JSON Lines (the tools' tables, any of them)."""
    head = fh.read(4096)
    fh.seek(0)
    if head.startswith(b"PAR1"):
        yield from read_parquet(fh)
    elif head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
        yield from read_json_document(fh)
    else:
        yield from read_jsonl(fh)


def in_unit(items: Iterable[Record | RowError], unit: str) -> list[Record | RowError]:
    """Rows and errors said in the file's own unit (a Parquet file has rows, not lines)."""
    return [item if item.unit == unit else dataclasses.replace(item, unit=unit) for item in items]


def spans_to_records(
    spans: list[Span],
    evaluations: list[Evaluation],
    context: frozenset[str],
    unit: str,
) -> list[Record | RowError]:
    """The spans' calls as trace rows, by the one route OTLP takes, verdicts attached first."""
    traces: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        traces[span.trace_id].append(span)
    found = list(attach_verdicts(traces, evaluations))
    found.extend(records_of_spans(traces, context))
    return sorted(in_unit(found, unit), key=lambda item: item.line)


def read_spans(fh: IO[bytes], context: frozenset[str] = ALL_CONTEXT) -> Iterator[Record | RowError]:
    """get_spans_dataframe() rows or get_spans() items: every call as a trace row."""
    found: list[Record | RowError] = []
    spans: list[Span] = []
    unit = "line"
    for item in table_rows(fh):
        unit = item.unit
        if isinstance(item, RowError):
            found.append(item)
        elif not isinstance(item.data, dict):
            found.append(RowError(item.line, "", _not_a_span(item.data), item.unit))
        else:
            spans.append(span_of_row(item.data, item.line))
    yield from sorted([*found, *spans_to_records(spans, [], context, unit)], key=_line)


def _line(item: Record | RowError) -> int:
    return item.line


def _not_a_span(data: Any) -> str:
    return f"must be one span (an object), got {describe_type(data)}; {_REEXPORT}"


def span_of_row(row: dict[str, Any], line: int) -> Span:
    """One span of the dataframe (flat `attributes.*` columns) or of get_spans() (nested)."""
    context = row.get("context")
    ids: dict[str, Any] = context if isinstance(context, dict) else {}
    raw_trace = ids.get("trace_id", row.get("context.trace_id"))
    raw_span = ids.get("span_id", row.get("context.span_id"))
    trace_id, span_id = normalise_id(raw_trace, 16), normalise_id(raw_span, 8)
    start = nanos_of_time(row.get("start_time"))
    problem = None
    if trace_id is None or span_id is None:
        name = "context.trace_id" if trace_id is None else "context.span_id"
        problem = (name, f"is {describe_type(raw_trace if trace_id is None else raw_span)}, "
                   f"not a hex id; {_REEXPORT}")  # fmt: skip
    elif start is None:
        problem = (
            "start_time",
            f"is {describe_type(row.get('start_time'))}, not a time; {_REEXPORT}",
        )
    return Span(
        line,
        trace_id or str(raw_trace),
        span_id or str(raw_span),
        normalise_id(row.get("parent_id"), 8),
        str(row.get("name") or ""),
        start or 0,
        attributes_of_row(row),
        {},
        problem,
        end=nanos_of_time(row.get("end_time")) or 0,
    )


def attributes_of_row(row: dict[str, Any]) -> dict[str, Any]:
    """Attributes under their dotted OTLP keys: `attributes.llm.input_messages` =
    [{"message.role": ...}] becomes `llm.input_messages.0.message.role`, and so on."""
    attributes: dict[str, Any] = {}
    nested = row.get("attributes")
    for key, value in nested.items() if isinstance(nested, dict) else ():
        dotted(str(key), value, attributes)
    for key, value in row.items():
        if key.startswith(_ATTRIBUTES):
            dotted(key[len(_ATTRIBUTES) :], value, attributes)
    if isinstance(row.get("span_kind"), str):  # get_spans() moves it out of the attributes
        attributes.setdefault(SPAN_KIND, row["span_kind"])
    return attributes


def dotted(key: str, value: Any, into: dict[str, Any]) -> None:
    """`value` under `key`, objects and lists of objects spread out to dotted keys; nulls (a
    Parquet struct's fields another row had) dropped; a list of plain values kept whole."""
    if value is None:
        return
    if isinstance(value, dict):
        for name, item in value.items():
            dotted(f"{key}.{name}", item, into)
    elif isinstance(value, list | tuple) and value and all(isinstance(v, dict) for v in value):
        for index, item in enumerate(value):
            dotted(f"{key}.{index}", item, into)
    else:
        into[key] = list(value) if isinstance(value, tuple) else value


def nanos_of_time(value: Any) -> int | None:
    """Unix nanoseconds of a Parquet timestamp, an ISO text, or the epoch number pandas'
    to_json writes (milliseconds by default; seconds, micro- and nanoseconds by size)."""
    if value is None:
        return 0
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        nanos = (moment - _EPOCH) // timedelta(microseconds=1) * 1000
        return nanos + int(getattr(value, "nanosecond", 0))
    if isinstance(value, str):
        try:
            return nanos_of_time(datetime.fromisoformat(value))
        except ValueError:
            return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        for limit, factor in ((1e11, 10**9), (1e14, 10**6), (1e17, 10**3)):
            if abs(value) < limit:
                return int(value * factor)
        return int(value)
    return None


# --- annotations ----------------------------------------------------------------------------


def read_annotations(
    fh: IO[bytes], context: frozenset[str] = ALL_CONTEXT
) -> Iterator[Record | RowError]:
    """get_span_annotations_dataframe() rows: LLM and CODE ones are verdicts for the calls
    imported with their spans; HUMAN ones are reported on their row (see human_problem)."""
    evaluations: list[Evaluation] = []
    found: list[Record | RowError] = []
    unit = "line"
    for item in table_rows(fh):
        unit = item.unit
        if isinstance(item, RowError):
            found.append(item)
            continue
        evaluation = annotation_evaluation(item)
        if isinstance(evaluation, RowError | Record):
            found.append(evaluation)
        else:
            evaluations.append(evaluation)
    found.extend(in_unit(attach_verdicts({}, evaluations), unit))
    yield from sorted(found, key=_line)


def annotation_evaluation(record: Record) -> Evaluation | RowError | Record:
    row = record.data if isinstance(record.data, dict) else {}
    kind = str(row.get("annotator_kind") or "")
    name = str(row.get("annotation_name") or "")
    if kind.upper() == "HUMAN":
        who = row.get("user_id") or "a person"
        return human_note(record, "annotator_kind", name, who)
    span_id = normalise_id(row.get("span_id"), 8)
    if span_id is None:
        message = f"is {describe_type(row.get('span_id'))}, not a span id; {_REEXPORT}"
        return RowError(record.line, "span_id", message, record.unit)
    verdict = {
        "gen_ai.evaluation.name": f"{kind or 'annotation'}/{name}",
        "gen_ai.evaluation.score.label": row.get("result.label"),
        "gen_ai.evaluation.score.value": row.get("result.score"),
        "gen_ai.evaluation.explanation": row.get("result.explanation"),
    }
    return Evaluation(record.line, None, span_id, verdict)


def human_note(record: Record, where: str, name: str, who: Any) -> Record:
    """A person's verdict from the tool, reported as a warning on its row: not kept, the
    row's traces imported."""
    return Record(
        record.line,
        RowError(record.line, where, human_problem(name, who), record.unit),
        kind="note",
    )


def human_problem(name: str, who: Any) -> str:
    """Why a person's verdict from the tool is not kept. It judges the whole answer, while a
    reviewer's label in annotate is on one claim, and at import the trace has no claims yet;
    as a judge verdict it would make a person's opinion a judge to calibrate."""
    return (
        f"{name!r} is a HUMAN assessment by {who}: it judges the whole answer, and labels here "
        "are on claims, which this trace does not have yet, so it was not kept (nor made a "
        "judge verdict). Label the trace's claims in annotate, or import claim-level labels "
        "with `annotate import-labels`"
    )


# --- get_input_output_context() ---------------------------------------------------------


def read_context_table(
    fh: IO[bytes], context: frozenset[str] = ALL_CONTEXT
) -> Iterator[Record | RowError]:
    """get_input_output_context(): one trace a row, its documents joined by a blank line."""
    for item in table_rows(fh):
        yield item if isinstance(item, RowError) else _context_row(item)


def _context_row(record: Record) -> Record | RowError:
    row = record.data if isinstance(record.data, dict) else {}
    output = row.get("output")
    if not isinstance(output, str) or not output.strip():
        message = (
            f"is {describe_type(output)}: the root span of trace {row.get('context.trace_id')} "
            "recorded no answer (output.value); it cannot be judged"
        )
        return RowError(record.line, "output", message, record.unit)
    documents = row.get("context")
    texts = documents.split(DOCUMENT_SEPARATOR) if isinstance(documents, str) else []
    attributes = {
        "otel_trace_id": row.get("context.trace_id"),
        "otel_span_id": row.get("context.span_id"),
        "metadata": row.get("metadata"),
    }
    trace = {
        "trace_id": row.get("context.trace_id"),
        "request": row.get("input"),
        "response": output,
        "context": [{"source": "retrieval", "text": t} for t in texts if t.strip()],
        "attributes": {key: value for key, value in attributes.items() if value is not None},
    }
    return Record(record.line, trace, record.unit)
