"""An Arize Phoenix server through its own client (`arize-phoenix-client`, the `phoenix`
extra): the project's trace list, whole traces with their span annotations, and our verdicts
written back as span annotations (upserted by name, span and identifier) and the calibration
card as the project's description. Must not read what a span means (annotate.ingest does)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from annotate.connectors import client_module
from annotate.connectors.server import Feedback, Listed
from annotate.errors import UsageError

TRACES_PER_REQUEST = 50  # trace ids in one get_spans query string (about 1.7 KB of ids)
EVERYTHING = 10**9  # the client pages by 100 until it has this many
OURS = "annotate."  # names of what we wrote: never pulled back as a judge's verdicts
IDENTIFIER = "annotate"
TIMEOUT = 120  # seconds per request: the client's default (5 s) fails a busy server's large pages
# A project's LLM spans with the columns a stratum is read from (span attributes, as the
# conventions read feature, risk category and model): `annotate sample --from phoenix`.
STRATUM_ATTRIBUTES = {
    "feature": ("app.feature", "feature"),
    "risk_category": ("app.risk_category", "risk_category"),
    "model": ("llm.model_name", "gen_ai.request.model"),
}


class PhoenixServer:
    kind = "phoenix"
    fmt = "phoenix_traces"

    def __init__(self, url: str, project: str, client: Any = None) -> None:
        if not project:
            raise UsageError("name the Phoenix project: --project NAME")
        self.url, self.project = url.rstrip("/"), project
        self.source = f"phoenix {self.url} project {project}"
        self.client = client or client_module("phoenix").Client(base_url=self.url)

    def list_traces(
        self, since: datetime | None, until: datetime | None, strata: bool = False
    ) -> Iterator[Listed]:
        """The project's traces, oldest first (ids and start time; `strata`: with the stratum
        columns their model calls carry, and only traces holding a model call)."""
        rows = self.client.traces.get_traces(
            project_identifier=self.project,
            start_time=since,
            end_time=until,
            sort="start_time",
            order="asc",
            limit=EVERYTHING,
            timeout=TIMEOUT,
        )
        values = self._stratum_values(since, until) if strata else {}
        for row in rows:
            trace_id = str(row["trace_id"])
            if not strata or trace_id in values:
                yield Listed(
                    trace_id, trace_id, _moment(row.get("start_time")), values.get(trace_id, {})
                )

    def _stratum_values(
        self, since: datetime | None, until: datetime | None
    ) -> dict[str, dict[str, Any]]:
        """trace id -> stratum column -> value, from its LLM spans' attributes alone (a span
        query selecting those columns: no messages, no documents)."""
        from phoenix.client.types.spans import SpanQuery

        keys = [key for names in STRATUM_ATTRIBUTES.values() for key in names]
        query = SpanQuery().where("span_kind == 'LLM'").select("context.trace_id", *keys)
        frame = self.client.spans.get_spans_dataframe(
            query=query, project_identifier=self.project, start_time=since, end_time=until,
            limit=EVERYTHING, timeout=TIMEOUT,
        )  # fmt: skip
        found: dict[str, dict[str, Any]] = {}
        for row in frame.to_dict("records"):
            values = found.setdefault(str(row["context.trace_id"]), {})
            for column, names in STRATUM_ATTRIBUTES.items():
                given = next(
                    (row.get(k) for k in names if isinstance(row.get(k), str) and row.get(k)), None
                )
                values[column] = values.get(column) or given
        return found

    def page_rows(self, listed: Sequence[Listed]) -> list[dict[str, Any]]:
        """One row per trace: its spans and the judge annotations on them."""
        spans = self._spans([entry.tool_id for entry in listed])
        annotations = self.client.spans.get_span_annotations(
            spans=spans, project_identifier=self.project, timeout=TIMEOUT
        )
        by_trace: dict[str, dict[str, Any]] = {
            e.tool_id: {"trace_id": e.tool_id, "spans": [], "annotations": []} for e in listed
        }
        trace_of: dict[str, str] = {}
        for span in spans:
            context = span.get("context") or {}
            trace = str(context.get("trace_id"))
            trace_of[str(context.get("span_id"))] = trace
            by_trace.setdefault(trace, {"trace_id": trace, "spans": [], "annotations": []})
            by_trace[trace]["spans"].append(span)
        for annotation in annotations:
            if not str(annotation.get("name") or "").startswith(OURS):
                owner = trace_of.get(str(annotation.get("span_id")), "")
                if owner in by_trace:
                    by_trace[owner]["annotations"].append(annotation)
        return [row for row in by_trace.values() if row["spans"]]

    def _spans(self, trace_ids: list[str]) -> list[dict[str, Any]]:
        spans: list[dict[str, Any]] = []
        for start in range(0, len(trace_ids), TRACES_PER_REQUEST):
            spans.extend(
                self.client.spans.get_spans(
                    project_identifier=self.project,
                    trace_ids=trace_ids[start : start + TRACES_PER_REQUEST],
                    limit=EVERYTHING,
                    timeout=TIMEOUT,
                )
            )
        return spans

    def send(self, feedback: Feedback, remote_id: str | None) -> str | None:
        """Upsert one span annotation: Phoenix keys it by name, span and identifier."""
        if not feedback.span_id:
            raise UsageError(f"trace {feedback.trace_id} has no span id to annotate in Phoenix")
        self.client.spans.add_span_annotation(
            span_id=feedback.span_id,
            annotation_name=feedback.name,
            annotator_kind=feedback.kind,
            label=feedback.label,
            score=feedback.score,
            explanation=feedback.explanation,
            metadata={**feedback.metadata, "source": feedback.source_id},
            identifier=IDENTIFIER,
            sync=True,
        )
        return None

    def set_card(self, name: str, text: str) -> None:
        self.client.projects.update(project_name=self.project, description=text)


def _moment(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
