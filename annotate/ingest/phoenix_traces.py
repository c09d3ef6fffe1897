"""Traces pulled from a Phoenix server (annotate.connectors): one JSON line a trace, holding
its get_spans() items and its get_span_annotations() items.

Owns joining the two: each annotation becomes a verdict on its span before the spans go
through otlp.records_of_spans (spans_to_records), as a file's spans do, so a judge score on
the root span reaches the call beneath it. Must not read what a span means, nor talk to a
server: the connector writes these lines, this reads them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import IO, Any

from annotate.ingest.call_context import ALL_CONTEXT
from annotate.ingest.otlp_evaluations import Evaluation, Span
from annotate.ingest.phoenix_tables import (
    annotation_evaluation,
    span_of_row,
    spans_to_records,
    table_rows,
)
from annotate.traces import Record, RowError, describe_type


def annotation_row(annotation: dict[str, Any]) -> dict[str, Any]:
    """get_span_annotations() item -> the annotations dataframe's row (its column names)."""
    result = annotation.get("result") or {}
    return {
        "span_id": annotation.get("span_id"),
        "annotation_name": annotation.get("name"),
        "annotator_kind": annotation.get("annotator_kind"),
        "result.label": result.get("label"),
        "result.score": result.get("score"),
        "result.explanation": result.get("explanation"),
        "user_id": annotation.get("user_id"),
    }


def read_records(
    fh: IO[bytes], context: frozenset[str] = ALL_CONTEXT
) -> Iterator[Record | RowError]:
    """Every call of every pulled trace as a trace row, its judge annotations as verdicts."""
    found: list[Record | RowError] = []
    spans: list[Span] = []
    evaluations: list[Evaluation] = []
    for item in table_rows(fh):
        if isinstance(item, RowError):
            found.append(item)
        elif not isinstance(item.data, dict) or not isinstance(item.data.get("spans"), list):
            got = describe_type(
                item.data.get("spans") if isinstance(item.data, dict) else item.data
            )
            found.append(RowError(item.line, "spans", f"must be a list of spans, got {got}"))
        else:
            _read_trace(item, spans, evaluations, found)
    found.extend(spans_to_records(spans, evaluations, context, "line"))
    yield from sorted(found, key=lambda entry: entry.line)


def _read_trace(
    item: Record, spans: list[Span], evaluations: list[Evaluation], found: list[Record | RowError]
) -> None:
    trace_spans = [
        span_of_row(raw, item.line) for raw in item.data["spans"] if isinstance(raw, dict)
    ]
    spans.extend(trace_spans)
    trace_of = {span.span_id: span.trace_id for span in trace_spans}
    for raw in item.data.get("annotations") or []:
        verdict = annotation_evaluation(Record(item.line, annotation_row(raw)))
        if isinstance(verdict, Evaluation):
            evaluations.append(
                dataclasses.replace(verdict, trace_id=trace_of.get(verdict.span_id or ""))
            )
        else:
            found.append(verdict)
