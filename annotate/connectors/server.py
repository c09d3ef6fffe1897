"""What every tracing server offers the connectors: its trace list, a page of whole traces in
an import format, and a place for our verdicts and card. Plain data; no client library here."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from annotate.errors import AnnotateError

CLIENT_MODULES = ("httpx", "httpcore", "mlflow", "requests", "urllib3")


class ServerError(AnnotateError):
    """A tracing server did not answer as asked: unreachable, refused, or an unknown name."""


@contextmanager
def talking_to(source: str, doing: str) -> Iterator[None]:
    """A client library's failure as a ServerError saying which server and what was asked;
    anything else (a bug here) goes up as it is."""
    try:
        yield
    except AnnotateError:
        raise
    except Exception as exc:
        if not (isinstance(exc, OSError) or type(exc).__module__.startswith(CLIENT_MODULES)):
            raise
        raise ServerError(
            f"{source}: {doing} failed ({type(exc).__name__}: {str(exc)[:300]}); check the "
            "address, the project or experiment name, and that the server is running"
        ) from exc


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
