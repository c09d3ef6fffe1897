"""Agent session transcripts (Claude Code files, plain Messages lines) become one trace per turn."""

from __future__ import annotations

import io
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from annotate.ingest import detect_format
from annotate.ingest.importer import import_traces
from annotate.ingest.transcript import read_records
from annotate.traces import Record, RowError, Trace, parse_record

TRANSCRIPTS = FIXTURES / "transcript"
CLAUDE_CODE = TRANSCRIPTS / "claude_code_session.jsonl"
MESSAGES = TRANSCRIPTS / "messages_transcript.jsonl"
BROKEN = TRANSCRIPTS / "broken_transcript.jsonl"
SESSION = "5b1e7c2a-3f4d-4a8e-9c1b-2d3e4f5a6b7c"
MODEL = "claude-sonnet-4-5-20250929"
ONE_MESSAGE = 'one message a line, such as {"role": "user", "content": "..."}'


def read(source: Path | io.BytesIO) -> list[Record | RowError]:
    if isinstance(source, io.BytesIO):
        return list(read_records(source))
    with open(source, "rb") as fh:
        return list(read_records(fh))


def traces_in(source: Path | io.BytesIO) -> list[Trace]:
    """Every record through parse_record, in file order; each must become a Trace."""
    traces = []
    for item in read(source):
        if isinstance(item, Record):
            trace = parse_record(item)
            assert isinstance(trace, Trace), trace
            traces.append(trace)
    return traces


def errors_in(source: Path | io.BytesIO) -> list[str]:
    return [str(item) for item in read(source) if isinstance(item, RowError)]


def contexts(trace: Trace) -> list[tuple[str | None, str]]:
    return [(item.source, item.text) for item in trace.contexts]


def lines(*rows: Any) -> io.BytesIO:
    return io.BytesIO(b"".join(json.dumps(row).encode() + b"\n" for row in rows))


def claude_code(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message = {"id": "msg_01", "type": "message", "model": MODEL, **message}
    return {"sessionId": "s-1", "type": kind, "message": message, "uuid": "u", **extra}


def test_a_claude_code_session_gives_one_trace_per_human_turn():
    traces = traces_in(CLAUDE_CODE)
    assert [(t.trace_id, t.line, t.request) for t in traces] == [
        (f"{SESSION}:1", 3, "Why does test_invoice_total fail?"),
        (f"{SESSION}:2", 12, "Run the whole test suite."),
        (f"{SESSION}:3", 16, "Thanks. What is 2 + 2?"),
    ]
    assert [t.response for t in traces] == [
        "Let me look at the test and the code.\n\n"
        "invoice_total([10, 20]) returns 30, but the test expects 33.\n"
        "The expected value in the test is wrong; it should be 30.",
        "One test fails: test_invoice_total, the one we looked at. The other 11 pass.",
        "2 + 2 = 4.",
    ]
    assert errors_in(CLAUDE_CODE) == []  # snapshot, meta, system and sidechain lines are ignored


def test_tool_results_become_context_named_by_tool_and_input():
    first, second, _ = traces_in(CLAUDE_CODE)
    assert contexts(first) == [
        (
            "Read: /home/dev/billing/tests/test_invoice.py",
            "     1\u2192from billing.invoice import invoice_total\n     2\u2192\n     3\u2192\n"
            "     4\u2192def test_invoice_total():\n"
            "     5\u2192    assert invoice_total([10, 20]) == 33\n     6\u2192",
        ),
        (
            "Bash: grep -n -A2 'def invoice_total' billing/invoice.py",
            '12:def invoice_total(amounts):\n13-    """Sum of the line amounts."""\n'
            "14-    return sum(amounts)",
        ),
    ]
    assert contexts(second) == [
        (
            "Bash: pytest -q",
            "Exit code 1\nF...........                                                             "
            "[100%]\nFAILED tests/test_invoice.py::test_invoice_total - assert 30 == 33\n"
            "1 failed, 11 passed in 0.31s",
        )
    ]
    assert first.is_judgeable and second.is_judgeable


def test_a_turn_without_tools_is_kept_but_not_judgeable():
    third = traces_in(CLAUDE_CODE)[2]
    assert (third.contexts, third.is_judgeable) == ((), False)
    assert "Sub-agent" not in third.response  # the sidechain line's text


def test_each_turn_records_its_session_tools_errors_model_and_time():
    traces = traces_in(CLAUDE_CODE)
    assert [t.attributes for t in traces] == [
        {
            "session_id": SESSION,
            "turn": 1,
            "tools_used": ["Read", "Bash"],
            "tool_errors": 0,
            "agent": "claude-code",
        },
        {
            "session_id": SESSION,
            "turn": 2,
            "tools_used": ["Bash"],
            "tool_errors": 1,
            "agent": "claude-code",
        },
        {
            "session_id": SESSION,
            "turn": 3,
            "tools_used": [],
            "tool_errors": 0,
            "agent": "claude-code",
        },
    ]
    assert {t.model for t in traces} == {MODEL}  # not the sidechain's haiku
    assert traces[0].timestamp == datetime(2026, 3, 4, 9, 15, 2, 117000)


def test_a_plain_messages_transcript_is_named_after_its_file():
    (trace,) = traces_in(MESSAGES)
    assert (trace.trace_id, trace.line, trace.request, trace.model, trace.timestamp) == (
        "messages_transcript:1",
        1,
        "What is the refund window for annual plans?",
        None,
        None,
    )
    assert trace.response == (
        "Let me check the refund policy.\n\n"
        "Annual plans can be refunded within 30 days of purchase, to the original payment method."
    )
    assert contexts(trace) == [
        (
            "search_kb: refund annual plan",
            "Annual plans can be refunded within 30 days of purchase.\n\n"
            "Refunds go back to the original payment method.",
        )
    ]
    assert trace.attributes == {
        "session_id": "messages_transcript",
        "turn": 1,
        "tools_used": ["search_kb"],
        "tool_errors": 0,
        "agent": "messages",
    }


def test_a_turn_where_the_assistant_wrote_no_text_is_reported_on_its_user_line():
    assert errors_in(MESSAGES) == [
        'line 5: "response" is empty: the assistant wrote no text in this turn; '
        "nothing to judge, so the turn is skipped"
    ]


def test_bad_lines_are_reported_with_their_numbers_and_reading_continues():
    assert errors_in(BROKEN) == [
        "line 3: is not valid JSON (Unterminated string starting at column 34); "
        "each line must hold one complete JSON object",
        f"line 6: must be a JSON object, got a list; write {ONE_MESSAGE}",
        f'line 7: "role" must be "user" or "assistant", got "tool"; write {ONE_MESSAGE}',
    ]
    first, second = traces_in(BROKEN)
    assert (first.trace_id, first.response) == (
        "broken_transcript:1",
        "There are two open tickets: T-1 and T-2.",
    )
    assert contexts(first) == [
        ("list_tickets: status=open", "T-1 open: login fails\nT-2 open: slow export")
    ]
    assert (second.trace_id, second.line, second.response) == (
        "broken_transcript:2",
        8,
        "I closed T-2.",
    )


def test_an_invalid_utf8_line_is_reported_and_the_turn_survives():
    data = lines({"role": "user", "content": "Hi"}).getvalue()
    data += b'{"role": "assistant", "content": "caf\xe9"}\n'
    data += lines({"role": "assistant", "content": "Hello."}).getvalue()
    source = io.BytesIO(data)
    assert errors_in(source) == [
        "line 2: the line is not valid UTF-8 (byte 0xe9 at column 38); re-save the file as UTF-8"
    ]
    source.seek(0)
    assert [(t.trace_id, t.response) for t in traces_in(source)] == [("session:1", "Hello.")]


def test_interruptions_local_commands_and_meta_lines_start_no_turn():
    source = lines(
        claude_code("user", "Tidy the imports."),
        claude_code("assistant", [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {}}]),
        claude_code(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "rejected",
                    "is_error": True,
                },
                {"type": "text", "text": "[Request interrupted by user for tool use]"},
            ],
        ),
        claude_code("user", "Caveat: The messages below were generated by...", isMeta=True),
        claude_code("user", "<local-command-stdout>Set model to opus</local-command-stdout>"),
        claude_code("assistant", "Understood, I left the imports alone."),
        claude_code("assistant", "API Error: 529 Overloaded", isApiErrorMessage=True),
    )
    (trace,) = traces_in(source)
    assert (trace.trace_id, trace.response, contexts(trace)) == (
        "s-1:1",
        "Understood, I left the imports alone.",
        [("Edit", "rejected")],
    )
    assert (trace.attributes["tool_errors"], trace.model) == (1, MODEL)


def test_results_in_the_message_that_starts_a_turn_belong_to_the_previous_turn():
    source = lines(
        {"role": "user", "content": "Look up order 7."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t1", "name": "orders", "input": {"id": 7}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "order 7: shipped"},
                {"type": "tool_result", "tool_use_id": "t9", "content": "stray"},
                {"type": "text", "text": "Never mind, what about order 8?"},
            ],
        },
        {"role": "assistant", "content": "I cannot see order 8."},
    )
    first, second = traces_in(source)
    assert contexts(first) == [("orders: id=7", "order 7: shipped"), ("unknown tool (t9)", "stray")]
    assert (second.request, second.contexts) == ("Never mind, what about order 8?", ())


def test_a_turn_is_yielded_as_soon_as_the_next_one_starts():
    source = lines(
        {"role": "user", "content": "One?"},
        {"role": "assistant", "content": "One."},
        {"role": "user", "content": "Two?"},
        {"role": "assistant", "content": "Two."},
    )
    records = read_records(source)
    first = next(records)
    assert isinstance(first, Record) and first.data["trace_id"] == "session:1"
    through_second_request = b"".join(source.getvalue().splitlines(keepends=True)[:3])
    assert source.tell() == len(through_second_request)  # nothing of turn 2's reply was read


@pytest.mark.parametrize("name", ["claude_code_session.jsonl", "messages_transcript.jsonl"])
def test_both_shapes_are_detected_as_transcripts(name):
    with (TRANSCRIPTS / name).open("rb") as fh:
        assert detect_format(fh, name) == "transcript"


@pytest.mark.parametrize(
    "first",
    [
        {"type": "summary", "summary": "Fix failing invoice test", "leafUuid": "9f1c2d7e"},
        {"type": "queue-operation", "operation": "dequeue", "sessionId": SESSION},
        claude_code("user", "Hi"),
        claude_code("assistant", [{"type": "text", "text": "Hi"}]),
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
    ],
)
def test_claude_code_and_message_first_lines_are_recognised(tmp_path, first):
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(first) + "\n")
    with path.open("rb") as fh:
        assert detect_format(fh, path.name) == "transcript"


@pytest.mark.parametrize(
    "row",
    [
        {"trace_id": "t-1", "response": "r", "context": []},
        {"trace_id": "t-1", "response": "r", "context": [], "type": "user", "uuid": "u"},
        {"role": "user", "content": "Hi", "response": "Hello", "context": []},
    ],
)
def test_generic_trace_rows_still_detect_as_jsonl(tmp_path, row):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with path.open("rb") as fh:
        assert detect_format(fh, path.name) == "jsonl"


def test_an_imported_session_lands_in_the_store(fresh_store):
    report = import_traces(fresh_store, CLAUDE_CODE)
    assert (report.format, report.imported, report.rejected) == ("transcript", 3, 0)
    report = import_traces(fresh_store, MESSAGES)
    assert (report.imported, [str(e) for e in report.errors]) == (1, errors_in(MESSAGES))
