"""OTLP JSON traces: file-exporter JSON Lines and protobuf-JSON documents, GenAI conventions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import FIXTURES

from annotate.ingest import detect_format
from annotate.ingest.generic import BOM
from annotate.ingest.importer import import_traces
from annotate.ingest.otlp import read_records
from annotate.ingest.otlp_values import any_value, normalise_id
from annotate.traces import Record, RowError, Trace, parse_record

OTLP = FIXTURES / "otlp"
RAG_EXPORT = OTLP / "rag_export.jsonl"  # collector file exporter: hex ids, one export a line
LEGACY_DOCUMENT = OTLP / "legacy_document.json"  # protobuf MessageToJson: base64 ids
RAG_TRACE = "5b8efff798038103d269b633813fc60c"
WALLET_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SMALLTALK_TRACE = "0af7651916cd43dd8448eb211c80319c"
HR_TRACE = "a3ce929d0e0e47364bf92f3577b34da6"


def read(path: Path) -> list[Record | RowError]:
    with open(path, "rb") as fh:
        return list(read_records(fh))


def traces_in(path: Path) -> dict[str, Trace]:
    """Every record of the file through parse_record; each must become a Trace."""
    found = {}
    for item in read(path):
        if isinstance(item, Record) and item.kind == "trace":
            trace = parse_record(item)
            assert isinstance(trace, Trace), trace
            found[trace.trace_id] = trace
    return found


def errors_in(items: list[Record | RowError]) -> list[str]:
    return [str(item) for item in items if isinstance(item, RowError)]


def contexts(trace: Trace) -> list[tuple[str | None, str]]:
    return [(item.source, item.text) for item in trace.contexts]


def verdicts(trace: Trace) -> list[tuple[str, str, str, float | None, str | None]]:
    return [(v.judge, v.level, v.label, v.score, v.explanation) for v in trace.judge]


def otlp_attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    kinds = {bool: "boolValue", int: "intValue", float: "doubleValue", str: "stringValue"}
    return [
        {"key": key, "value": {kinds[type(value)]: str(value) if type(value) is int else value}}
        for key, value in values.items()
    ]


def span_export(trace_id: str, span_id: str, attributes: dict[str, Any]) -> dict[str, Any]:
    span = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": "chat acme-large",
        "kind": 3,
        "startTimeUnixNano": "1772877600000000000",
        "endTimeUnixNano": "1772877601000000000",
        "attributes": otlp_attributes(attributes),
    }
    resource = {"attributes": otlp_attributes({"service.name": "inline"})}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}


def evaluation_export(trace_id: str, span_id: str, attributes: dict[str, Any]) -> dict[str, Any]:
    record = {
        "timeUnixNano": "1772877602000000000",
        "eventName": "gen_ai.evaluation.result",
        "traceId": trace_id,
        "spanId": span_id,
        "attributes": otlp_attributes(attributes),
    }
    return {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}


def answered(text: str = "Refunds take 14 days.") -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "acme-large",
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
        ),
    }


def write_lines(tmp_path: Path, *lines: dict[str, Any] | str) -> Path:
    path = tmp_path / "export.jsonl"
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def test_both_fixture_shapes_are_detected_as_otlp():
    for path in (RAG_EXPORT, LEGACY_DOCUMENT):
        with open(path, "rb") as fh:
            assert detect_format(fh, path.name) == "otlp"


def test_every_record_of_both_fixtures_parses_into_a_trace():
    assert sorted(traces_in(RAG_EXPORT)) == [
        SMALLTALK_TRACE,
        f"{WALLET_TRACE}-2222222222222222",
        f"{WALLET_TRACE}-3333333333333333",
        RAG_TRACE,
    ]
    assert list(traces_in(LEGACY_DOCUMENT)) == [HR_TRACE]


def test_a_rag_chat_span_gets_the_users_question_the_answer_and_the_retrieved_documents():
    trace = traces_in(RAG_EXPORT)[RAG_TRACE]
    assert trace.request == "How long do annual refunds take?"  # not the system prompt
    assert trace.response == "Annual plan refunds are issued within 14 days."
    assert contexts(trace) == [
        (
            "retrieval kb/refunds-12",
            "Refunds for annual plans are issued within 14 days of cancellation.",
        ),
        ("retrieval kb/plans-3", "The Pro plan costs $30 per month."),
    ]
    assert (trace.line, trace.feature, trace.model) == (1, "billing_qa", "gpt-4o-mini-2024-07-18")
    assert (
        trace.timestamp is not None and trace.timestamp.isoformat() == "2026-03-07T10:00:00.200000"
    )
    assert trace.attributes == {
        "otel_trace_id": RAG_TRACE,
        "otel_span_id": "bbb19b7ec3c1b174",
        "span_name": "chat gpt-4o-mini",
        "service_name": "support-bot",
        "convention": "genai",
        "context_from": "retrieval",
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.request.temperature": 0.0,
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.id": "chatcmpl-C1xRagA7",
        "gen_ai.usage.input_tokens": 412,
        "gen_ai.usage.output_tokens": 17,
    }


def test_an_evaluation_log_on_another_line_is_attached_to_the_span_it_names():
    trace = traces_in(RAG_EXPORT)[RAG_TRACE]
    assert verdicts(trace) == [
        ("prod-judge-v3", "response", "supported", 0.91, "Matches kb/refunds-12.")
    ]


def test_two_answers_in_one_trace_are_told_apart_by_span_id():
    found = traces_in(RAG_EXPORT)
    answer = found[f"{WALLET_TRACE}-2222222222222222"]
    translation = found[f"{WALLET_TRACE}-3333333333333333"]
    assert (answer.request, answer.response) == (
        "What is my balance?",
        "Your balance is 120.50 EUR.",
    )
    assert (translation.request, translation.response) == (
        "Your balance is 120.50 EUR.",
        "Ihr Kontostand beträgt 120,50 EUR.",
    )
    # the tool span's result and the same text in the tool_call_response part: kept once
    assert contexts(answer) == [("tool get_balance", "balance: 120.50 EUR")]
    # the verdict names the invoke_agent span, so it applies to both calls beneath it
    assert (
        verdicts(answer) == verdicts(translation) == [("turn-judge", "response", "pass", 1.0, None)]
    )
    # the first chat step only requested the tool: not a trace of its own
    assert not any(t.endswith("1111111111111111") for t in found)


def test_a_call_without_retrieval_or_tools_is_kept_with_an_empty_context():
    trace = traces_in(RAG_EXPORT)[SMALLTALK_TRACE]  # messages as structured arrayValue
    assert trace.request == "Tell me a joke about invoices."
    assert trace.response == "Why did the invoice cross the road? To get to the other balance."
    assert (trace.contexts, trace.is_judgeable, trace.feature) == ((), False, "smalltalk")


def test_a_malformed_line_is_reported_with_its_number_and_later_lines_still_read():
    items = read(RAG_EXPORT)
    errors = [item for item in items if isinstance(item, RowError)]
    assert [(e.line, e.field) for e in errors] == [(3, "")]
    assert errors[0].message.startswith("is not valid JSON (Unterminated string")
    assert errors[0].message.endswith(
        "each line of an OTLP JSON Lines file must be one complete export object: "
        "re-export the file or delete the broken line"
    )
    assert [item.line for item in items] == [1, 3, 4, 4, 5]


def test_a_pretty_printed_document_with_base64_ids_and_indexed_prompts():
    items = read(LEGACY_DOCUMENT)
    assert errors_in(items) == []
    trace = traces_in(LEGACY_DOCUMENT)[HR_TRACE]
    assert (trace.line, trace.request, trace.response) == (
        1,
        "How many leave days do I get?",
        "You get 30 days of paid leave per year.",
    )
    # execute_tool's result; the same text in the prompt's tool message is not repeated
    assert contexts(trace) == [
        (
            "tool lookup_policy",
            "Employees accrue 25 days of paid leave per year. Unused days expire on 31 March.",
        )
    ]
    assert (trace.feature, trace.risk_category, trace.model) == (
        "hr-assistant",
        "privacy",
        "gpt-4.1-2025-04-14",
    )
    assert trace.attributes["otel_span_id"] == "9a8b7c6d5e4f3042"
    assert trace.attributes["gen_ai.usage.prompt_tokens"] == 131
    assert not any(
        key.startswith(("gen_ai.prompt", "gen_ai.completion")) for key in trace.attributes
    )
    # a span event, then a log record that names no span but the response id
    assert verdicts(trace) == [
        ("prod-judge-v3", "response", "unsupported", 0.12, "The policy says 25 days, not 30."),
        ("groundedness-v1", "response", "not_grounded", 0.0, None),
    ]


def test_a_byte_order_mark_is_tolerated_in_both_shapes(tmp_path):
    for source in (RAG_EXPORT, LEGACY_DOCUMENT):
        path = tmp_path / source.name
        path.write_bytes(BOM + source.read_bytes())
        with open(path, "rb") as fh:
            assert detect_format(fh, path.name) == "otlp"
        assert traces_in(path) == traces_in(source)


def test_a_broken_first_line_does_not_hide_the_lines_after_it(tmp_path):
    whole = json.dumps(span_export("11" * 16, "22" * 8, answered()))
    path = write_lines(tmp_path, whole[:60], whole)
    items = read(path)
    assert [(type(item).__name__, item.line) for item in items] == [("RowError", 1), ("Record", 2)]


def test_a_document_that_is_not_json_is_one_error_naming_the_line(tmp_path):
    path = tmp_path / "export.json"
    path.write_text('{\n  "resourceSpans": [\n    {"resource": }\n  ]\n}\n', encoding="utf-8")
    assert errors_in(read(path)) == [
        "line 3: is not valid JSON (Expecting value at line 3, column 18); the file must be "
        "one OTLP JSON document or OTLP JSON Lines, one export a line"
    ]


def test_an_llm_span_without_output_text_is_reported_not_dropped(tmp_path):
    silent = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "acme-large"}
    path = write_lines(tmp_path, span_export("33" * 16, "44" * 8, silent))
    assert errors_in(read(path)) == [
        "line 1: \"gen_ai.output.messages\" is missing: LLM span 'chat acme-large' "
        "(4444444444444444) has no output text; enable message content capture "
        "(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) so spans record "
        "gen_ai.output.messages or gen_ai.completion"
    ]


def test_evaluations_that_cannot_become_verdicts_are_reported(tmp_path, fresh_store):
    trace_id, span_id = "55" * 16, "66" * 8
    path = write_lines(
        tmp_path,
        span_export(trace_id, span_id, answered()),
        evaluation_export(
            trace_id,
            "77" * 8,
            {"gen_ai.evaluation.name": "j", "gen_ai.evaluation.score.label": "pass"},
        ),
        evaluation_export(
            trace_id, span_id, {"gen_ai.evaluation.name": "j", "gen_ai.evaluation.score.value": 0.4}
        ),
    )
    report = import_traces(fresh_store, path)
    assert [str(error) for error in report.errors] == [
        f"line 2: \"gen_ai.evaluation.result\" from 'j' names span 7777777777777777 of trace "
        f"{trace_id}, which is neither in this file nor in the store; import the spans first "
        "(or export spans and evaluations to the same file)",
        "line 3: \"gen_ai.evaluation.score.label\" is missing on the evaluation from 'j': a "
        "verdict needs a label to compare with reviewers; record gen_ai.evaluation.score.label "
        '(such as "supported")',
    ]
    assert [trace.judge for trace in traces_in(path).values()] == [()]


def test_a_score_that_is_not_a_number_rejects_the_evaluation_and_keeps_the_call(
    tmp_path, fresh_store
):
    trace_id, span_id = "55" * 16, "66" * 8
    judged = {"gen_ai.evaluation.name": "j", "gen_ai.evaluation.score.label": "pass"}
    path = write_lines(
        tmp_path,
        span_export(trace_id, span_id, answered()),
        evaluation_export(trace_id, span_id, {**judged, "gen_ai.evaluation.score.value": "high"}),
        evaluation_export(trace_id, span_id, {**judged, "gen_ai.evaluation.score.value": True}),
        evaluation_export(trace_id, span_id, {**judged, "gen_ai.evaluation.score.value": "0.8"}),
    )
    report = import_traces(fresh_store, path)
    fix = (
        "on the evaluation from 'j'; record the score as a doubleValue or intValue, or leave it "
        "out: a grade such as 'high' belongs in gen_ai.evaluation.score.label"
    )
    assert [str(error) for error in report.errors] == [
        f"line 2: \"gen_ai.evaluation.score.value\" must be a number, got a string ('high') {fix}",
        f'line 3: "gen_ai.evaluation.score.value" must be a number, got a boolean (True) {fix}',
    ]
    assert (report.imported, report.rejected) == (1, 2)
    stored = fresh_store.fetchall("SELECT trace_id, judge, label, score FROM judge_verdicts")
    assert stored == [(trace_id, "j", "pass", 0.8)]  # a number written as text still counts


def test_a_score_that_is_not_finite_rejects_the_evaluation_not_the_call(tmp_path, fresh_store):
    trace_id, span_id = "55" * 16, "66" * 8
    evaluation = evaluation_export(
        trace_id, span_id, {"gen_ai.evaluation.name": "j", "gen_ai.evaluation.score.label": "ok"}
    )
    record = evaluation["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    score = {"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": "Infinity"}}
    record["attributes"].append(score)
    path = write_lines(tmp_path, span_export(trace_id, span_id, answered()), evaluation)
    report = import_traces(fresh_store, path)
    assert [str(error) for error in report.errors] == [
        'line 2: "gen_ai.evaluation.score.value" must be a finite number, got inf; write null '
        "(or leave it out) for no score"
    ]
    assert (report.imported, report.rejected) == (1, 1)


def test_an_unreadable_trace_id_on_an_llm_span_is_reported(tmp_path):
    path = write_lines(tmp_path, span_export("not-an-id", "66" * 8, answered()))
    assert errors_in(read(path)) == [
        "line 1: \"traceId\" must be 32 hex digits or the base64 of 16 bytes, got 'not-an-id'; "
        "export the spans again with an OTLP exporter"
    ]


def test_any_value_decodes_every_otlp_form():
    assert any_value({"stringValue": "a"}) == "a"
    assert any_value({"intValue": "12"}) == any_value({"intValue": 12}) == 12
    assert any_value({"doubleValue": 0.5}) == 0.5
    assert any_value({"boolValue": True}) is True
    assert any_value({"bytesValue": "3q2+7w=="}) == "3q2+7w=="
    assert any_value({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "1"}]}}) == [
        "a",
        1,
    ]
    assert any_value(
        {"kvlistValue": {"values": [{"key": "k", "value": {"doubleValue": 1.5}}]}}
    ) == {"k": 1.5}
    assert any_value({"arrayValue": {}}) == []
    assert any_value({"intValue": "twelve"}) is None
    assert any_value({}) is None


def test_ids_in_hex_or_base64_become_lowercase_hex():
    assert normalise_id("o86SnQ4ORzZL+S81d7NNpg==", 16) == HR_TRACE
    assert normalise_id("A3CE929D0E0E47364BF92F3577B34DA6", 16) == HR_TRACE
    assert normalise_id("mot8bV5PMEI=", 8) == "9a8b7c6d5e4f3042"
    assert normalise_id("mot8bV5PMEI=", 16) is None  # 8 bytes is a span id, not a trace id
    assert normalise_id("", 8) is None
    assert normalise_id("zz" * 8, 8) is None


def test_an_export_file_imports_through_the_importer(fresh_store):
    report = import_traces(fresh_store, RAG_EXPORT)
    assert (report.format, report.imported, report.rejected) == ("otlp", 4, 1)
    assert [error.line for error in report.errors] == [3]


def test_an_evaluation_naming_no_span_says_so(tmp_path, fresh_store):
    """Catches (import QA) "names span - of trace -, which is neither in this file nor in the
    store": an evaluation event with no ids says it names nothing, and what to give it."""
    trace_id, span_id = "55" * 16, "66" * 8
    judged = {"gen_ai.evaluation.name": "j", "gen_ai.evaluation.score.label": "pass"}
    path = write_lines(
        tmp_path, span_export(trace_id, span_id, answered()), evaluation_export("", "", judged)
    )
    report = import_traces(fresh_store, path)
    assert [str(error) for error in report.errors] == [
        "line 2: \"gen_ai.evaluation.result\" from 'j' names no span, trace or response it is "
        "about; give the evaluation event its span's ids (or gen_ai.response.id), as an "
        "evaluation recorded in the span itself has them"
    ]
