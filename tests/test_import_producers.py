"""Traces made by the real tracing libraries import with no flag and no mapping: for every
producer (tests/producers: the anthropic SDK against a local fake Messages API, under
OpenLLMetry in both modes, OpenInference, Langfuse and MLflow autolog, exported as OTLP JSON)
and each kind of traffic, the request as sent, the answer, and the context the model was
given, exactly; the SDK's own span is never a second trace, a tool-call preamble never an
answer. Expected values come from the traffic (tests/producers/traffic.py), not from us."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from annotate.ingest.importer import import_traces
from annotate.store import Store
from tests.producers import traffic
from tests.producers.producers import SETUPS
from tests.producers.traffic import DOCUMENT_BLOCKS, PASTED, STREAMED, TOOL_CALL, Expected

ROOT = Path(__file__).resolve().parents[1]
# The material of the pasted prompt: everything the user sent but the final question.
PASTED_MATERIAL = traffic.PASTED_PROMPT.removesuffix("\n\n" + PASTED.question)
# Producers whose app records its retriever as a span of its own (Langfuse, MLflow).
WITH_RETRIEVER = ("langfuse", "mlflow")
MLFLOW = ("mlflow", "mlflow_genai")
PRODUCERS = tuple(name for name in SETUPS if name != "sdk_only")  # the SDK's span: below


def expected_context(producer: str, kind: Expected) -> list[tuple[str, str]]:
    if kind is TOOL_CALL:
        return [("tool lookup_order", traffic.ORDER_RECORD)]
    if producer in WITH_RETRIEVER:
        return [(f"retrieval policy-{n}", text) for n, text in enumerate(kind.contexts, 1)]
    if kind is PASTED:
        return [("message 1", PASTED_MATERIAL)]
    if kind is DOCUMENT_BLOCKS:
        return [
            ("document 1: Warranty", traffic.WARRANTY_POLICY),
            ("document 2: Refund policy", traffic.REFUND_POLICY),
        ]
    assert kind is STREAMED and kind.system is not None
    return [("system", kind.system)]


def expected_origin(producer: str, kind: Expected) -> str:
    if kind is TOOL_CALL:
        return "tools"
    if producer in WITH_RETRIEVER:
        return "retrieval,documents" if kind is DOCUMENT_BLOCKS else "retrieval"
    return "documents" if kind is DOCUMENT_BLOCKS else "prompt"


def imported(store: Store, path) -> dict[str, dict]:
    """Each stored trace by its response: request, context (source, text), where from."""
    report = import_traces(store, path)
    rows = store.fetchall(
        "SELECT trace_id, request, response, judgeable, attributes->>'context_from' "
        "FROM traces ORDER BY trace_id"
    )
    found = {}
    for trace_id, request, response, judgeable, origin in rows:
        context = store.fetchall(
            "SELECT source, text FROM contexts WHERE trace_id = ? ORDER BY position", [trace_id]
        )
        found[response] = {
            "request": request,
            "context": [tuple(item) for item in context],
            "judgeable": judgeable,
            "origin": origin,
        }
    return {"report": report, "traces": found}


@pytest.mark.parametrize("producer", PRODUCERS)
def test_each_kind_of_traffic_imports_with_its_request_answer_and_context(
    producer, produced, fresh_store
):
    result = imported(fresh_store, produced(producer))
    report, traces = result["report"], result["traces"]
    kinds = [PASTED, DOCUMENT_BLOCKS, TOOL_CALL, STREAMED]
    if producer in MLFLOW:  # MLflow's autolog does not trace messages.stream(): below
        kinds.remove(STREAMED)
    assert set(traces) == {kind.answer for kind in kinds}  # no preamble, no SDK span
    for kind in kinds:
        trace = traces[kind.answer]
        request = traffic.PASTED_PROMPT if kind is PASTED else kind.question
        assert trace["request"] == request, kind.kind
        assert trace["context"] == expected_context(producer, kind), kind.kind
        assert trace["judgeable"], kind.kind
        assert trace["origin"] == expected_origin(producer, kind), kind.kind
    if producer not in MLFLOW:
        assert report.is_clean and report.rejected == 0, [str(e) for e in report.errors]


@pytest.mark.parametrize("producer", MLFLOW)
def test_a_stream_mlflow_did_not_trace_is_named_with_the_fix(producer, produced, fresh_store):
    report = import_traces(fresh_store, produced(producer))
    assert report.rejected == 1
    assert "MLflow's anthropic autolog traces Messages.create only" in str(report.errors[0])
    assert "@mlflow.trace" in str(report.errors[0])


def test_the_sdk_span_alone_is_rejected_saying_it_records_no_messages(produced, fresh_store):
    report = import_traces(fresh_store, produced("sdk_only"))
    assert report.imported == 0
    assert report.rejected == 5  # five Messages calls, none with content
    assert all(
        "the anthropic SDK's own span, which records no messages" in str(e) for e in report.errors
    )


def test_a_stream_mlflow_recorded_as_an_object_is_no_answer(tmp_path, fresh_store):
    """MLflow's autolog of messages.create(stream=True) records the Stream object's repr as
    the call's output: never stored as the answer; rejected naming it and the fix."""
    pytest.importorskip("mlflow")
    path = tmp_path / "mlflow_create_stream.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "tests.producers.mlflow_create_stream", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    report = import_traces(fresh_store, path)
    assert (report.imported, report.rejected) == (0, 1)  # the SDK's span is the same call
    (error,) = report.errors
    assert error.field == "mlflow.spanOutputs"
    assert "recorded the stream object, not the streamed answer (<anthropic.Stream object" in (
        error.message
    )
    assert '@mlflow.trace(span_type="LLM")' in error.message
