"""Session fixtures: a real Phoenix server and a real MLflow tracking server, each holding the
producers' real traffic (tests/connectors/send.py), for the connector tests.

Each starts once per test process (xdist worker) on free ports with SQLite in a temporary
folder and is stopped at the session's end; a server whose virtualenv cannot be made (no
package index) skips its tests with the reason.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from importlib import util
from typing import Any

import pytest

from tests.connectors.servers import ServerUnavailable, running_server, send_traffic, server_venv

PROJECT = "kettleworks"  # the Phoenix project and the MLflow experiment
ROUNDS = 2  # each round: the four kinds, five Messages calls (the tool call makes two)
CALLS = 4 * ROUNDS  # the calls with a final answer: one trace each here
SETTLE_SECONDS = 60
# a project where each trace is one call (the sample-from-server test): no streamed call, whose
# SDK span Phoenix files as a trace of its own, and no tool call, whose first call is a step
RAG_PROJECT, RAG_KINDS, RAG_ROUNDS = "kettleworks-rag", "pasted,document_blocks", 4


def needs_client(module: str, extra: str) -> None:
    if util.find_spec(module.split(".")[0]) is None or _missing(module):
        pytest.skip(f"the {extra} client is not installed: pip install -e '.[{extra}]'")


def _missing(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return True
    return False


@pytest.fixture(scope="session")
def phoenix_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    needs_client("phoenix.client", "phoenix")
    with _server("phoenix", tmp_path_factory) as url:
        send_traffic("phoenix", url, PROJECT, ROUNDS)
        send_traffic("phoenix", url, RAG_PROJECT, RAG_ROUNDS, RAG_KINDS)
        _settle(lambda: len(_phoenix_llm_spans(url)), 5 * ROUNDS)
        _settle(lambda: len(_phoenix_llm_spans(url, RAG_PROJECT)), 2 * RAG_ROUNDS)
        yield url


@pytest.fixture(scope="session")
def mlflow_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    needs_client("mlflow.client", "mlflow")
    with _server("mlflow", tmp_path_factory) as url:
        send_traffic("mlflow", url, PROJECT, ROUNDS)
        send_traffic("mlflow", url, RAG_PROJECT, RAG_ROUNDS, RAG_KINDS)
        yield url


def _server(kind: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    try:
        server_venv(kind)  # made here, so that a machine without a package index skips
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    return running_server(kind, tmp_path_factory.mktemp(kind))


def _phoenix_llm_spans(url: str, project: str = PROJECT) -> list[Any]:
    from phoenix.client import Client

    return Client(base_url=url).spans.get_spans(
        project_identifier=project, span_kind="LLM", limit=10_000
    )


def _settle(count: Any, expected: int) -> None:
    """Phoenix files spans asynchronously: wait until all the traffic's spans are there."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        try:
            if count() >= expected:
                return
        except Exception:  # the project appears with its first span
            pass
        time.sleep(0.5)
    raise AssertionError(f"the server holds {count()} of the {expected} spans sent")
