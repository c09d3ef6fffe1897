"""`python -m tests.connectors.send phoenix|mlflow URL NAME ROUNDS [KIND,...]`: real traffic to a
real server (every kind of tests/producers/traffic.py, or those named).

Owns one run of the producers' traffic (tests/producers/traffic.py, the real anthropic SDK
against the fake Messages API) under the instrumentation each server's users run: Arize's
OpenInference instrumentor exporting OTLP/HTTP to Phoenix (project NAME), and
`mlflow.anthropic.autolog()` logging to the MLflow tracking server (experiment NAME). In a
process of its own: instrumentors patch the SDK for the whole process.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from tests.fake_anthropic import FakeAnthropic, start, stop
from tests.producers.producers import SERVICE, setup_openinference
from tests.producers.traffic import (
    App,
    ask_document_blocks,
    ask_pasted,
    ask_streamed,
    ask_tool_call,
    queue_replies,
)

ASKS = {"pasted": ask_pasted, "document_blocks": ask_document_blocks, "tool_call": ask_tool_call,
        "streamed": ask_streamed}  # fmt: skip


def phoenix_app(client: Any, url: str, project: str) -> tuple[App, Any]:
    # Phoenix files a span under the project its resource names
    os.environ["OTEL_RESOURCE_ATTRIBUTES"] = f"openinference.project.name={project}"
    return setup_openinference(client, url)


def mlflow_app(client: Any, url: str, experiment: str) -> tuple[App, Any]:
    os.environ.update(MLFLOW_TRACKING_URI=url, MLFLOW_DISABLE_TELEMETRY="true")
    os.environ["OTEL_SERVICE_NAME"] = SERVICE
    import mlflow

    from tests.producers.observed import MlflowApp

    mlflow.set_experiment(experiment)
    app = MlflowApp(client)
    return app, lambda: mlflow.flush_trace_async_logging(terminate=True)


APPS = {"phoenix": phoenix_app, "mlflow": mlflow_app}


def send(kind: str, url: str, name: str, rounds: int, kinds: tuple[str, ...] = tuple(ASKS)) -> None:
    fake = FakeAnthropic()
    thread = start(fake)
    try:
        app, finish = APPS[kind](fake.client(max_retries=0), url, name)
        for _ in range(rounds):
            queue_replies(fake)
            for asked in kinds:
                ASKS[asked](app)
        finish()
    finally:
        stop(fake, thread)


if __name__ == "__main__":
    named = tuple(sys.argv[5].split(",")) if len(sys.argv) > 5 else tuple(ASKS)
    send(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), named)
