"""Which client talks to a server: `connect` picks the Phoenix or MLflow class by kind. Apart
from server.py (plain data) so that a server's module may import server.py without a cycle;
each client library loads only when its kind is used."""

from __future__ import annotations

from annotate.connectors.server import Server, talking_to
from annotate.errors import UsageError


def connect(kind: str, url: str, name: str, where: str | None = None) -> Server:
    """The server of `kind` at `url`: `name` is its Phoenix project or MLflow experiment;
    `where`, MLflow's own search_traces filter (`tags.env = 'prod'`), ANDed with the window."""
    if not str(url or "").strip():
        raise UsageError(f"give the {kind} server's address, e.g. http://localhost:6006")
    with talking_to(f"{kind} {url}", "connecting"):
        return _connected(kind, url, name, where)


def _connected(kind: str, url: str, name: str, where: str | None) -> Server:
    if kind == "phoenix":
        from annotate.connectors.phoenix import PhoenixServer

        if where:
            raise UsageError(
                "--server-filter is MLflow's search_traces filter; for Phoenix use --since/--until"
            )
        return PhoenixServer(url, name)
    if kind == "mlflow":
        from annotate.connectors.mlflow import MlflowServer

        return MlflowServer(url, name, where=where)
    raise UsageError(f"unknown tracing server {kind!r}; use phoenix or mlflow")
