"""Each producer: one tracing setup a team would really use, exporting OTLP to our receiver.

Owns the setup and teardown of the tracing libraries (providers, instrumentors, env settings);
each `setup_*` returns the `App` that sends the traffic and a `finish` that flushes every span.
It must not send traffic itself (traffic.py does) nor read what was exported.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from tests.producers.traffic import App

SERVICE = "kettleworks-support-bot"
Finish = Callable[[], None]
Setup = Callable[[Any, str], tuple[App, Finish]]

# The distributions each producer needs (any one of a tuple): absent, its tests are skipped.
OTEL = ("opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http")
PACKAGES: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "sdk_only": OTEL,
    "openllmetry": (*OTEL, "opentelemetry-instrumentation-anthropic"),
    "openllmetry_events": (*OTEL, "opentelemetry-instrumentation-anthropic"),
    "openinference": (*OTEL, "openinference-instrumentation-anthropic"),
    "langfuse": (*OTEL, "langfuse"),
    "mlflow": (*OTEL, ("mlflow-tracing", "mlflow-skinny", "mlflow")),
    "mlflow_genai": (*OTEL, ("mlflow-tracing", "mlflow-skinny", "mlflow")),
}


def otel_providers(url: str, logs: bool = False) -> tuple[Any, Any, Finish]:
    """The global tracer (and logger) provider an app sets up, exporting OTLP/HTTP to `url`."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": SERVICE})
    tracer_provider = TracerProvider(resource=resource)
    exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces")
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(tracer_provider)
    logger_provider = otel_logger_provider(url, resource) if logs else None

    def finish() -> None:
        tracer_provider.shutdown()
        if logger_provider is not None:
            logger_provider.shutdown()

    return tracer_provider, logger_provider, finish


def otel_logger_provider(url: str, resource: Any) -> Any:
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

    logger_provider = LoggerProvider(resource=resource)
    exporter = OTLPLogExporter(endpoint=f"{url}/v1/logs")
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
    set_logger_provider(logger_provider)
    return logger_provider


def setup_sdk_only(client: Any, url: str) -> tuple[App, Finish]:
    """No instrumentation: only the anthropic SDK's own span (and the app's parent span)."""
    _, _, finish = otel_providers(url)
    return App(client), finish


def setup_openllmetry(client: Any, url: str) -> tuple[App, Finish]:
    """OpenLLMetry's AnthropicInstrumentor, default (content as span attributes)."""
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    tracer_provider, _, finish = otel_providers(url)
    AnthropicInstrumentor().instrument(tracer_provider=tracer_provider)
    return App(client), finish


def setup_openllmetry_events(client: Any, url: str) -> tuple[App, Finish]:
    """OpenLLMetry with `use_attributes=False`: content as gen_ai.* log events, not attributes."""
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    tracer_provider, logger_provider, finish = otel_providers(url, logs=True)
    AnthropicInstrumentor(use_attributes=False).instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    return App(client), finish


def setup_openinference(client: Any, url: str) -> tuple[App, Finish]:
    """Arize's OpenInference AnthropicInstrumentor (Phoenix's convention)."""
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    tracer_provider, _, finish = otel_providers(url)
    AnthropicInstrumentor().instrument(tracer_provider=tracer_provider)
    return App(client), finish


def setup_langfuse(client: Any, url: str) -> tuple[App, Finish]:
    """The Langfuse SDK pointed at our receiver as its host; it sets the global provider."""
    os.environ.update(
        LANGFUSE_PUBLIC_KEY="pk-lf-local-test",
        LANGFUSE_SECRET_KEY="sk-lf-local-test",
        LANGFUSE_HOST=url,
        LANGFUSE_TRACING_ENVIRONMENT="test",
        OTEL_SERVICE_NAME=SERVICE,  # Langfuse builds its provider's resource from the environment
    )
    from tests.producers.observed import LangfuseApp

    app = LangfuseApp(client)
    return app, app.finish


def setup_mlflow(client: Any, url: str, genai_semconv: bool = False) -> tuple[App, Finish]:
    """`mlflow.anthropic.autolog()` exporting OTLP/HTTP; MLflow shares the global provider so
    the SDK's own span is exported beside MLflow's (unified mode)."""
    os.environ.update(
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{url}/v1/traces",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/protobuf",
        OTEL_SERVICE_NAME=SERVICE,
        MLFLOW_USE_DEFAULT_TRACER_PROVIDER="false",
        # mlflow-tracing without a tracking URI looks for ./mlruns with a module only full mlflow
        # has (sqlparse) and never starts tracing; any non-Databricks URI skips that look
        MLFLOW_TRACKING_URI=url,
        MLFLOW_ENABLE_OTEL_GENAI_SEMCONV="true" if genai_semconv else "false",
        MLFLOW_DISABLE_TELEMETRY="true",  # no usage reports from a test run
    )
    from tests.producers.observed import MlflowApp

    app = MlflowApp(client)
    return app, app.finish


SETUPS: dict[str, Setup] = {
    "sdk_only": setup_sdk_only,
    "openllmetry": setup_openllmetry,
    "openllmetry_events": setup_openllmetry_events,
    "openinference": setup_openinference,
    "langfuse": setup_langfuse,
    "mlflow": setup_mlflow,
    "mlflow_genai": lambda client, url: setup_mlflow(client, url, genai_semconv=True),
}
