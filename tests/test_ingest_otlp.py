"""OTLP JSON traces: file-exporter JSON Lines and single documents, GenAI semantic conventions."""

from __future__ import annotations

import json

from conftest import FIXTURES

from annotate.ingest import detect_format
from annotate.ingest.importer import import_traces
from annotate.ingest.otlp import any_value, normalise_id
from annotate.store.status import trace_detail

OTLP = FIXTURES / "otlp"


def test_both_shapes_are_detected_as_otlp():
    for name in ("rag_export.jsonl", "legacy_document.json"):
        with (OTLP / name).open("rb") as fh:
            assert detect_format(fh, name) == "otlp"


def test_file_exporter_lines_give_one_trace_per_llm_span(fresh_store):
    report = import_traces(fresh_store, OTLP / "rag_export.jsonl")
    assert (report.format, report.imported, report.rejected) == ("otlp", 4, 1)
    assert [str(e) for e in report.errors] == [
        "line 3: is not valid JSON (Expecting value at column 34); each line must hold one OTLP export"
    ]
    rag = trace_detail(fresh_store, "5b8efff798038103d269b633813fc60c")
    assert (
        rag["request"] == "How long do annual refunds take?"
    )  # the user message, not the system one
    assert rag["response"] == "Annual plan refunds are issued within 14 days."
    assert [(c["source"], c["text"]) for c in rag["contexts"]] == [
        ("kb/refunds-12", "Refunds for annual plans are issued within 14 days."),
        ("kb/plans-3", "The Pro plan costs $30 per month."),
    ]
    assert (rag["feature"], rag["model"]) == ("billing_qa", "acme-large-2026-02")
    # the verdict arrived as a log record on another line, linked by trace and span id
    assert [
        (v["judge"], v["label"], v["score"], v["explanation"]) for v in rag["judge_verdicts"]
    ] == [("prod-judge-v3", "supported", 0.91, "matches kb/refunds-12")]
    attributes = json.loads(rag["attributes"])
    assert (
        attributes["otel_span_id"] == "bbb19b7ec3c1b174"
        and attributes["gen_ai.usage.input_tokens"] == 412
    )


def test_a_span_without_retrieval_or_tools_is_kept_not_judgeable(fresh_store):
    import_traces(fresh_store, OTLP / "rag_export.jsonl")
    lone = trace_detail(fresh_store, "0af7651916cd43dd8448eb211c80319c")
    assert (lone["response"], lone["judgeable"], lone["feature"]) == (
        "Why did the invoice cross the road?",
        False,
        "wallet",
    )


def test_two_llm_spans_in_one_trace_are_told_apart_by_span_id(fresh_store):
    import_traces(fresh_store, OTLP / "rag_export.jsonl")
    first = trace_detail(fresh_store, "4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111")
    second = trace_detail(fresh_store, "4bf92f3577b34da6a3ce929d0e0e4736-2222222222222222")
    assert (first["request"], second["request"]) == ("Balance?", "In dollars?")
    assert [c["text"] for c in first["contexts"]] == ["balance: 120.50 EUR"]


def test_a_pretty_printed_document_with_base64_ids_and_indexed_prompts(fresh_store):
    report = import_traces(fresh_store, OTLP / "legacy_document.json")
    assert (report.imported, report.rejected) == (1, 0)
    trace = trace_detail(
        fresh_store, "a3ce929d0e0e47364bf92f3577b34da6"
    )  # base64 id, stored as hex
    assert trace["request"] == "How many leave days do I get?"
    assert trace["response"] == "You get 30 days of paid leave per year."
    assert [(c["source"], c["text"]) for c in trace["contexts"]] == [
        ("lookup_policy", "Employees accrue 25 days of paid leave per year.")
    ]
    assert trace["risk_category"] == "privacy"
    assert [(v["label"], v["score"]) for v in trace["judge_verdicts"]] == [("unsupported", 0.12)]


def test_any_value_and_ids():
    assert any_value({"intValue": "12"}) == 12
    assert any_value({"arrayValue": {"values": [{"stringValue": "a"}, {"boolValue": True}]}}) == [
        "a",
        True,
    ]
    assert any_value(
        {"kvlistValue": {"values": [{"key": "k", "value": {"doubleValue": 1.5}}]}}
    ) == {"k": 1.5}
    assert normalise_id("W47/95gDgQPSabYzgT/GDA==", 16) == "5b8efff798038103d269b633813fc60c"
    assert (
        normalise_id("5B8EFFF798038103D269B633813FC60C", 16) == "5b8efff798038103d269b633813fc60c"
    )
