"""An MLflow tracking server through its own client (`mlflow-skinny`, the `mlflow` extra): an
experiment's trace list, whole traces as search_traces() rows (spans and assessments, the
`mlflow` import format), our verdicts written back as assessments (feedback, source HUMAN or
LLM_JUDGE, with rationale) and the calibration card as an experiment tag. Must not read what
a span means (annotate.ingest does)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from annotate.connectors import client_module
from annotate.connectors.server import Feedback, Listed
from annotate.errors import UsageError
from annotate.ingest.mlflow_tables import STRATUM_TAGS

PAGE = 500  # traces per search_traces request (the server's own maximum is larger)
OURS = "annotate."  # names of what we wrote: never pulled back as a judge's verdicts
SOURCES = {"HUMAN": "HUMAN", "LLM": "LLM_JUDGE"}
CARD_TAG = "annotate.calibration_card"
STRATA = STRATUM_TAGS  # the tags a trace list gives as stratum columns: the import reads the same


class MlflowServer:
    kind = "mlflow"
    fmt = "mlflow"

    def __init__(
        self,
        uri: str,
        experiment: str,
        clients: tuple[Any, Any] | None = None,
        where: str | None = None,
    ) -> None:
        self.where = where
        if not experiment:
            raise UsageError("name the MLflow experiment: --experiment NAME")
        self.uri, self.experiment = uri.rstrip("/"), experiment
        self.source = f"mlflow {self.uri} experiment {experiment}"
        if clients is None:
            client_module("mlflow")
            from mlflow import MlflowClient
            from mlflow.tracing.client import TracingClient

            clients = (MlflowClient(tracking_uri=self.uri), TracingClient(tracking_uri=self.uri))
        self.client: Any = clients[0]
        self.tracing: Any = clients[1]
        found = self.client.get_experiment_by_name(experiment)
        if found is None:
            raise UsageError(f"MLflow at {self.uri} has no experiment named {experiment!r}")
        self.experiment_id = found.experiment_id

    def list_traces(
        self, since: datetime | None, until: datetime | None, strata: bool = False
    ) -> Iterator[Listed]:
        """The experiment's traces, oldest first (their info only, no spans)."""
        token = None
        while True:
            page = self.tracing.search_traces(
                experiment_ids=[self.experiment_id],
                filter_string=_time_filter(since, until, self.where),
                max_results=PAGE,
                order_by=["timestamp_ms ASC"],
                page_token=token,
                include_spans=False,
            )
            for trace in page:
                info = trace.info
                started = datetime.fromtimestamp(info.request_time / 1000, UTC)
                values = _tagged(info) if strata else {}
                yield Listed(info.trace_id, otel_id(info.trace_id), started, values)
            token = page.token
            if not token:
                return

    def page_rows(self, listed: Sequence[Listed]) -> list[dict[str, Any]]:
        """One search_traces() row per trace, without the assessments we wrote."""
        traces = [self.tracing.get_trace(entry.tool_id) for entry in listed]
        rows = []
        for trace in traces:
            row = trace.to_pandas_dataframe_row()
            row.pop("trace", None)  # the whole trace again, as a JSON string
            row["assessments"] = [a for a in row["assessments"] if not _is_ours(a)]
            rows.append(json.loads(json.dumps(row, default=str)))
        return rows

    def send(self, feedback: Feedback, remote_id: str | None) -> str | None:
        """Log the assessment, or update the one logged before (its id kept in the store)."""
        from mlflow.entities import AssessmentSource
        from mlflow.entities import Feedback as Assessment

        assessment = Assessment(
            name=feedback.name,
            value=feedback.label,
            source=AssessmentSource(SOURCES[feedback.kind], feedback.source_id),
            rationale=feedback.explanation,
            metadata={**feedback.metadata, "score": str(feedback.score)},
            span_id=feedback.span_id,
        )
        if remote_id:
            return str(
                self.tracing.update_assessment(
                    feedback.tool_id, remote_id, assessment
                ).assessment_id
            )
        return str(self.tracing.log_assessment(feedback.tool_id, assessment).assessment_id)

    def set_card(self, name: str, text: str) -> None:
        self.client.set_experiment_tag(self.experiment_id, f"{CARD_TAG}.{name}", text)


def otel_id(trace_id: str) -> str | None:
    """MLflow 3's trace id is `tr-` and the OTel trace id in hex."""
    return trace_id[3:] if trace_id.startswith("tr-") else None


def _tagged(info: Any) -> dict[str, Any]:
    """The stratum columns a trace's list entry carries: its tags or metadata of those names
    (an MLflow trace's info holds no span attribute, so no model unless tagged)."""
    given = {**(info.trace_metadata or {}), **(info.tags or {})}
    return {column: given.get(f"app.{column}") or given.get(column) for column in STRATA}


def _is_ours(assessment: dict[str, Any]) -> bool:
    return str(assessment.get("assessment_name") or "").startswith(OURS)


def _time_filter(
    since: datetime | None, until: datetime | None, where: str | None = None
) -> str | None:
    parts = [where] if where else []
    if since is not None:
        parts.append(f"timestamp_ms >= {int(since.timestamp() * 1000)}")
    if until is not None:
        parts.append(f"timestamp_ms < {int(until.timestamp() * 1000)}")
    return " AND ".join(parts) or None
