"""What every tracing server offers the connectors: its trace list, a page of whole traces in
an import format, and a place for our verdicts and card. Plain data; no client library here."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from annotate.errors import UsageError


@dataclass(frozen=True)
class Listed:
    """One trace of the server's list: its ids and start, and the stratum columns when asked."""

    tool_id: str  # the tool's own trace id (Phoenix: the OTel trace id; MLflow: tr-...)
    otel_trace_id: str | None
    start: datetime | None
    strata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Feedback:
    """One annotation (Phoenix) or assessment (MLflow) we write on a trace's call span."""

    trace_id: str  # ours
    tool_id: str
    span_id: str | None
    name: str  # annotate.gold | annotate.judge
    kind: str  # HUMAN | LLM
    label: str  # supported | unsupported
    score: float | None  # share of claims unsupported
    explanation: str
    source_id: str  # the reviewers, or the judge
    metadata: dict[str, str]


class Server(Protocol):
    kind: str
    fmt: str  # the import format of page_rows' rows
    source: str  # 'phoenix <url> project <name>': the store's key for this server's traces

    def list_traces(
        self, since: datetime | None, until: datetime | None, strata: bool = False
    ) -> Iterator[Listed]: ...

    def page_rows(self, listed: Sequence[Listed]) -> list[dict[str, Any]]: ...

    def send(self, feedback: Feedback, remote_id: str | None) -> str | None: ...

    def set_card(self, name: str, text: str) -> None: ...


def connect(kind: str, url: str, name: str) -> Server:
    """The server of `kind` at `url`: `name` is its Phoenix project or MLflow experiment."""
    if not str(url or "").strip():
        raise UsageError(f"give the {kind} server's address, e.g. http://localhost:6006")
    if kind == "phoenix":
        from annotate.connectors.phoenix import PhoenixServer

        return PhoenixServer(url, name)
    if kind == "mlflow":
        from annotate.connectors.mlflow import MlflowServer

        return MlflowServer(url, name)
    raise UsageError(f"unknown tracing server {kind!r}; use phoenix or mlflow")
