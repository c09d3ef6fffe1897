"""OTLP and transcript import edges: what is wrong with a call's output messages, its start
time or its ids is said as it is; every import's errors read in line order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, errors, stored

import annotate.ingest.importer as importer

GOOD = FIXTURES / "generic" / "production.jsonl"
START = "1772877600000000000"  # 2026-03-07T10:00:00
NANOS_FIX = (
    'write it as a whole number of nanoseconds since 1970, such as "1772877600000000000" '
    '(or "0" when the start is unknown): fix the exporter or re-export the spans'
)
MESSAGES_FIX = (
    'it must be the output messages as JSON, such as [{"role": "assistant", "parts": '
    '[{"type": "text", "content": "..."}]}]; fix the instrumentation that records it, then '
    "export the span again"
)
EXPORTER = "export the spans again with an OTLP exporter"


def trace_id(n: int) -> str:
    return f"{n:032x}"


def span_id(n: int) -> str:
    return f"{n:016x}"


def value(item: Any) -> dict[str, Any]:
    """An OTLP AnyValue; a dict is taken as one already ({"intValue": "5"})."""
    if isinstance(item, dict):
        return item
    if isinstance(item, bool):
        return {"boolValue": item}
    if isinstance(item, int):
        return {"intValue": str(item)}
    return {"stringValue": item}


def output(text: str) -> str:
    return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


MISSING = object()


def call(n: int, answer: Any = "Refunds take 14 days.", **span: Any) -> dict[str, Any]:
    """One OTLP export line holding one LLM call span; `answer` None leaves the output out,
    a dict is the gen_ai.output.messages AnyValue as given; `span` overrides span fields
    (MISSING removes the field)."""
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    if isinstance(answer, str):
        attributes["gen_ai.output.messages"] = output(answer)
    elif answer is not None:
        attributes["gen_ai.output.messages"] = answer
    raw = {
        "traceId": trace_id(n),
        "spanId": span_id(n),
        "name": "chat m",
        "kind": 3,
        "startTimeUnixNano": START,
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
    }
    raw.update(span)
    raw = {key: item for key, item in raw.items() if item is not MISSING}
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [raw]}]}]}


def evaluation(n: int) -> dict[str, Any]:
    record = {
        "eventName": "gen_ai.evaluation.result",
        "traceId": trace_id(n),
        "spanId": span_id(n),
        "attributes": [
            {"key": "gen_ai.evaluation.name", "value": {"stringValue": "j"}},
            {"key": "gen_ai.evaluation.score.label", "value": {"stringValue": "supported"}},
        ],
    }
    return {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}


def write(tmp_path: Path, *lines: Any, name: str = "export.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


def stored_traces(db_path: Path) -> list[tuple[Any, ...]]:
    return stored(db_path, "SELECT trace_id, source_line, timestamp FROM traces ORDER BY 2")


def test_malformed_output_messages_say_what_is_wrong_and_missing_ones_say_missing(
    cli, db_path, tmp_path
):
    """Caught: "not json", an intValue and a list of strings were all reported as
    "is missing ... enable message content capture", which sends the user to the wrong fix."""
    path = write(
        tmp_path,
        call(1, {"stringValue": "not json"}),
        call(2, {"intValue": "5"}),
        call(3, {"stringValue": "5"}),  # a JSON number as text
        call(4, {"stringValue": json.dumps(["Refunds take 14 days."])}),
        call(5, {"stringValue": "[]"}),
        call(6, None),
        call(7),
    )
    result = cli("import", path, "--json")
    assert result.code == 1
    span = "of LLM span 'chat m'"
    assert errors(result) == [
        (
            1,
            "gen_ai.output.messages",
            f"{span} (0000000000000001) is not valid JSON (Expecting value at column 1); "
            f"{MESSAGES_FIX}",
        ),
        (
            2,
            "gen_ai.output.messages",
            f"{span} (0000000000000002) must be a list of messages, got a number (5); "
            f"{MESSAGES_FIX}",
        ),
        (
            3,
            "gen_ai.output.messages",
            f"{span} (0000000000000003) must be a list of messages, got a string whose JSON "
            f"is a number (5); {MESSAGES_FIX}",
        ),
        (
            4,
            "gen_ai.output.messages",
            f"{span} (0000000000000004) must be a list of message objects, got a string "
            f"whose JSON is a list (['Refunds take 14 days.']); {MESSAGES_FIX}",
        ),
        (
            5,
            "gen_ai.output.messages",
            f"{span} (0000000000000005) holds no assistant text (got '[]'): there is no answer "
            "to judge, so the call is skipped; if the model did answer, check that the "
            "instrumentation records its text parts",
        ),
        (
            6,
            "gen_ai.output.messages",
            "is missing: LLM span 'chat m' (0000000000000006) has no output text; enable "
            "message content capture (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) so "
            "spans record gen_ai.output.messages or gen_ai.completion",
        ),
    ]
    assert [row[:2] for row in stored_traces(db_path)] == [(trace_id(7), 7)]


def test_a_start_time_that_is_not_a_count_of_nanoseconds_rejects_the_call_naming_it(
    cli, db_path, tmp_path
):
    """Caught: "abc" and "-5" were imported with no timestamp and no word. Decided: the call
    is rejected, as one past the year 9999 already was and as a bad `timestamp` is in every
    other format; a start time left out (or "0", OTLP's unset) still imports without one."""
    path = write(
        tmp_path,
        call(1, startTimeUnixNano="abc"),
        call(2, startTimeUnixNano="-5"),
        call(3, startTimeUnixNano="1.5"),
        call(4, startTimeUnixNano=True),
        call(5, startTimeUnixNano="1" * 25),
        call(6),
        call(7, startTimeUnixNano=MISSING),
        call(8, startTimeUnixNano="0"),
        call(9, startTimeUnixNano=int(START)),  # a JSON number, as some exporters write it
    )
    result = cli("import", path, "--json")
    assert result.code == 1
    span = "startTimeUnixNano", "of LLM span 'chat m'"
    assert errors(result) == [
        (
            1,
            span[0],
            f"{span[1]} (0000000000000001) is a string ('abc'), not a whole number; {NANOS_FIX}",
        ),
        (2, span[0], f"{span[1]} (0000000000000002) is -5, which is before 1970; {NANOS_FIX}"),
        (
            3,
            span[0],
            f"{span[1]} (0000000000000003) is a string ('1.5'), not a whole number; {NANOS_FIX}",
        ),
        (
            4,
            span[0],
            f"{span[1]} (0000000000000004) is a boolean (True), not a whole number; {NANOS_FIX}",
        ),
        (
            5,
            span[0],
            f"{span[1]} (0000000000000005) is {'1' * 25}, which is after the year "
            "9999 (the latest time the store holds); it must count nanoseconds since 1970: fix "
            "the exporter's clock or units",
        ),
    ]
    assert result.json()["warnings"] == []
    at = "2026-03-07 10:00:00"
    assert [(t, line, str(when) if when else None) for t, line, when in stored_traces(db_path)] == [
        (trace_id(6), 6, at),
        (trace_id(7), 7, None),
        (trace_id(8), 8, None),
        (trace_id(9), 9, at),
    ]


def test_a_missing_trace_or_span_id_is_called_missing(cli, db_path, tmp_path):
    """Caught: a span without traceId was reported as "got 'None'"."""
    path = write(
        tmp_path,
        call(1, traceId=MISSING),
        call(2, traceId=None),
        call(3, traceId=""),
        call(4, traceId=5),
        call(5, spanId=MISSING),
        call(6, spanId="zz"),
    )
    result = cli("import", path, "--json")
    assert result.code == 1
    trace_shape = "(32 hex digits or the base64 of 16 bytes)"
    assert errors(result) == [
        (1, "traceId", f"is missing: every span needs one {trace_shape}; {EXPORTER}"),
        (2, "traceId", f"is missing (it is null): every span needs one {trace_shape}; {EXPORTER}"),
        (3, "traceId", f"is empty: every span needs one {trace_shape}; {EXPORTER}"),
        (
            4,
            "traceId",
            f"must be 32 hex digits or the base64 of 16 bytes, got a number (5); {EXPORTER}",
        ),
        (
            5,
            "spanId",
            f"is missing: every span needs one (16 hex digits or the base64 of 8 "
            f"bytes); {EXPORTER}",
        ),
        (6, "spanId", f"must be 16 hex digits or the base64 of 8 bytes, got 'zz'; {EXPORTER}"),
    ]
    assert stored_traces(db_path) == []


def listed(cli: Any, import_id: int) -> list[int]:
    return [e["line"] for e in cli("errors", str(import_id), "--json").json()["errors"]]


def test_otlp_errors_are_in_line_order_evaluations_and_conflicts_included(cli, db_path, tmp_path):
    """Caught: a loose evaluation's error (line 4) came first and a conflict (line 2) after
    the errors of later lines."""
    first = write(tmp_path, call(2, "Refunds take 14 days."), name="first.jsonl")
    assert cli("import", first).code == 0
    path = write(
        tmp_path,
        call(1, None),  # no output
        call(2, "Refunds take 30 days."),  # a conflict with the first import
        call(3, startTimeUnixNano="abc"),
        evaluation(99),  # its span is in neither the file nor the store
        call(5),
    )
    result = cli("import", path, "--json")
    assert result.code == 1
    assert [(line, field) for line, field, _ in errors(result)] == [
        (1, "gen_ai.output.messages"),
        (2, "trace_id"),
        (3, "startTimeUnixNano"),
        (4, "gen_ai.evaluation.result"),
    ]
    assert listed(cli, 2) == [1, 2, 3, 4]
    assert stored(db_path, "SELECT line FROM import_errors WHERE import_id = 2") == [
        (1,),
        (2,),
        (3,),
        (4,),
    ]


def test_the_errors_of_one_line_are_stored_in_the_order_reported(cli, db_path, tmp_path):
    spans = [call(n, startTimeUnixNano="abc")["resourceSpans"][0] for n in range(1, 31)]
    path = write(tmp_path, {"resourceSpans": spans}, evaluation(99))
    result = cli("import", path, "--json")
    reported = [(line, message) for line, _, message in errors(result)]
    assert [line for line, _ in reported] == [1] * 30 + [2]
    assert [message.split(")")[0] for _, message in reported[:2]] == [
        "of LLM span 'chat m' (0000000000000001",
        "of LLM span 'chat m' (0000000000000002",
    ]
    rows = "SELECT line, message FROM import_errors WHERE import_id = 1 ORDER BY line, rowid"
    assert stored(db_path, rows) == reported


def message(role: str, content: Any) -> dict[str, Any]:
    return {"role": role, "content": content}


@pytest.mark.parametrize("batch", [importer.BATCH_SIZE, 1])
def test_transcript_errors_are_in_line_order(cli, db_path, tmp_path, monkeypatch, batch):
    """Caught: a turn is reported once the next one starts, so its "response is empty" (line 1)
    came after the broken line inside it (line 2); one row a batch, across batches too."""
    monkeypatch.setattr(importer, "BATCH_SIZE", batch)
    path = tmp_path / "chat.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(message("user", "Hi")),
                "{not json",
                json.dumps(message("assistant", [])),
                json.dumps(message("user", "How long do refunds take?")),
                json.dumps(message("assistant", "14 days.")),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    result = cli("import", str(path), "--json")
    assert result.code == 1
    assert [(line, field) for line, field, _ in errors(result)] == [(1, "response"), (2, "")]
    assert listed(cli, 1) == [1, 2]
    assert stored(db_path, "SELECT trace_id, source_line FROM traces") == [("chat:2", 4)]


def test_label_errors_keep_the_first_thousand_by_line_conflicts_included(cli, db_path, tmp_path):
    """Caught: conflicts are found once the file is read; with 1,000 errors already kept,
    the conflicts on lines 1 and 2 were left out of the report, which held lines 3 to 1,002."""
    assert cli("import", str(GOOD)).code == 0
    rows = [
        {"trace_id": "t-1", "claim": 1, "reviewer": "zed", "label": "supported"},
        {"trace_id": "t-1", "claim": 1, "reviewer": "zed", "label": "contradicted"},
    ]
    rows += [{"trace_id": "nope", "claim": 0, "reviewer": "zed", "label": "supported"}] * 1000
    path = write(tmp_path, *rows, name="labels.jsonl")
    result = cli("import-labels", path, "--json")
    assert result.code == 1
    assert result.json()["conflicts"] == 2 and result.json()["rejected"] == 1000
    found = errors(result)
    assert [line for line, _, _ in found] == list(range(1, 1001))
    assert [field for _, field, _ in found[:3]] == ["label", "label", "trace_id"]
    assert listed(cli, 2) == list(range(1, 1003))
