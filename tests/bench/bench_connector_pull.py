"""Pulling N traces from a local Phoenix server (`annotate import --from phoenix`) beside the
tool's own route for the same traces in the same run: Phoenix's spans dataframe exported
(get_spans_dataframe, to Parquet) and that file imported. Time and peak memory of each, each
in a fresh interpreter.

Sized by ANNOTATE_BENCH_CONNECTOR (default 10,000 traces). Each trace is a RAG turn sent over
OTLP/HTTP by the OpenTelemetry SDK with OpenInference attributes (a CHAIN span, a RETRIEVER
span with two documents, an LLM span): made by hand, not by the instrumentor, so that 10,000
need no 10,000 SDK calls. The server (tests/connectors/servers.py) runs from its own
virtualenv; ANNOTATE_BENCH_PHOENIX_URL names one already running instead, and with it
ANNOTATE_BENCH_PHOENIX_PROJECT a project of that server already holding the N traces (sending
10,000 takes a busy machine a quarter of an hour: Phoenix files them slower than they are sent).
"""

from __future__ import annotations

import os
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.bench.figures import OWN_PEAK, bench_size, child_result, megabytes, show

DEFAULT_SIZE = 10_000
CHUNK = 500  # traces sent before waiting for Phoenix to file them: its queue answers 503 when full
DOCUMENTS = (
    "Refunds are issued within 5 business days of the warehouse receiving the return.",
    "Opened items are refunded at 80% of the price unless they arrived damaged.",
)

_PULL = (
    OWN_PEAK
    + """
import json, sys, time
from annotate.connectors.phoenix import PhoenixServer
from annotate.connectors.pull import pull
from annotate.store import open_store
url, project, db = sys.argv[1:4]
started = time.perf_counter()
store = open_store(db)
report = pull(store, PhoenixServer(url, project))
store.close()
print(json.dumps({"seconds": time.perf_counter() - started, "peak": own_peak(),
                  "imported": report.imported, "pulled": report.pulled}))
"""
)
_EXPORT = (
    OWN_PEAK
    + """
import json, sys, time
from phoenix.client import Client
from annotate.ingest.importer import import_traces
from annotate.store import open_store
url, project, db, path = sys.argv[1:5]
started = time.perf_counter()
frame = Client(base_url=url).spans.get_spans_dataframe(project_identifier=project, limit=10**9,
                                                       timeout=600)
frame.to_parquet(path)
exported = time.perf_counter() - started
store = open_store(db)
report = import_traces(store, path)
store.close()
print(json.dumps({"seconds": time.perf_counter() - started, "export_seconds": exported,
                  "peak": own_peak(), "imported": report.imported}))
"""
)


def send_traces(url: str, project: str, size: int) -> float:
    """`size` RAG turns as OTLP/HTTP, OpenInference attributes, into `project`, a chunk at a
    time, each filed before the next is sent; the seconds spent waiting for Phoenix."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"openinference.project.name": project}))
    exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces")
    provider.add_span_processor(
        BatchSpanProcessor(exporter, max_queue_size=CHUNK * 3 + 1000, max_export_batch_size=256)
    )
    tracer = provider.get_tracer("bench_connector_pull")
    waited, chunk_start = 0.0, datetime.now(UTC)
    for index in range(size):
        question = f"Order KW-{index}: how long does a refund take?"
        with tracer.start_as_current_span(
            "answer_question", attributes={"openinference.span.kind": "CHAIN"}
        ):
            with tracer.start_as_current_span("search_policies", attributes=_retrieved(question)):
                pass
            with tracer.start_as_current_span("messages.create", attributes=_call(question, index)):
                pass
        if (index + 1) % CHUNK == 0 or index + 1 == size:
            provider.force_flush()
            waited += wait_for(url, project, chunk_start, index % CHUNK + 1)
            chunk_start = datetime.now(UTC)
    provider.shutdown()
    return waited


def _retrieved(question: str) -> dict[str, Any]:
    found: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": question}
    for position, text in enumerate(DOCUMENTS):
        found[f"retrieval.documents.{position}.document.content"] = text
    return found


def _call(question: str, index: int) -> dict[str, Any]:
    answer = f"Order KW-{index} is refunded within 5 business days of the return reaching us."
    return {
        "openinference.span.kind": "LLM", "llm.model_name": "claude-haiku-4-5",
        "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": question,
        "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": answer,
        "input.value": question, "output.value": answer,
    }  # fmt: skip


def wait_for(url: str, project: str, since: datetime, count: int) -> float:
    """Seconds until Phoenix lists the `count` traces started since `since` (one chunk)."""
    from phoenix.client import Client

    client, started = Client(base_url=url), time.perf_counter()
    while time.perf_counter() - started < 600:
        try:
            found = client.traces.get_traces(
                project_identifier=project, start_time=since, limit=count + 1
            )
            if len(found) >= count:
                return time.perf_counter() - started
        except Exception:  # the project appears with its first span
            pass
        time.sleep(0.5)
    raise RuntimeError(f"Phoenix did not file {count} traces in 10 minutes")


def run() -> None:
    size = bench_size("ANNOTATE_BENCH_CONNECTOR", DEFAULT_SIZE)
    project = f"bench-{size}-{int(time.time())}"
    with ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        url = os.environ.get("ANNOTATE_BENCH_PHOENIX_URL")
        if not url:
            from tests.connectors.servers import running_server

            url = stack.enter_context(running_server("phoenix", Path(folder)))
        started = time.perf_counter()
        if (
            os.environ.get("ANNOTATE_BENCH_PHOENIX_PROJECT")
            and "ANNOTATE_BENCH_PHOENIX_URL" in os.environ
        ):
            project = os.environ["ANNOTATE_BENCH_PHOENIX_PROJECT"]
            show(f"project {project} of {url}: its traces were sent by an earlier run")
        else:
            filed = send_traces(url, project, size)
            show(f"sent {size:,} traces (3 spans each) in {time.perf_counter() - started:.1f} s, "
                 f"{filed:.1f} s of it waiting for Phoenix to file them")  # fmt: skip
        export = child_result(
            _EXPORT,
            url,
            project,
            f"{folder}/export.duckdb",
            f"{folder}/spans.parquet",
            what="export",
        )
        pulled = child_result(_PULL, url, project, f"{folder}/pull.duckdb", what="pull")
    show(f"baseline, the tool's own export: get_spans_dataframe to Parquet {export['export_seconds']:.1f} s, then annotate import: "
         f"{export['seconds']:.1f} s in all, peak {megabytes(export['peak'])}, {export['imported']:,} calls")  # fmt: skip
    show(f"annotate import --from phoenix: {pulled['seconds']:.1f} s, peak {megabytes(pulled['peak'])}, "
         f"{pulled['imported']:,} calls of {pulled['pulled']:,} traces pulled")  # fmt: skip
    show(f"ratio pull / export route: time {pulled['seconds'] / export['seconds']:.2f}, "
         f"peak memory {pulled['peak'] / export['peak']:.2f}")  # fmt: skip
