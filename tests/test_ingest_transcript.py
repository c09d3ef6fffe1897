"""Agent session transcripts (Claude Code files and plain Messages lines) become one trace per turn."""

from __future__ import annotations

import json

from conftest import FIXTURES

from annotate.ingest import detect_format
from annotate.ingest.importer import import_traces
from annotate.store.status import trace_detail

TRANSCRIPTS = FIXTURES / "transcript"
SESSION = "5b1e7c2a-3f4d-4a8e-9c1b-2d3e4f5a6b7c"


def test_both_shapes_are_detected_and_generic_rows_are_not(tmp_path):
    for name in ("claude_code_session.jsonl", "messages_transcript.jsonl"):
        with (TRANSCRIPTS / name).open("rb") as fh:
            assert detect_format(fh, name) == "transcript"
    generic = tmp_path / "g.jsonl"
    generic.write_text('{"trace_id": "x", "response": "r", "context": []}\n')
    with generic.open("rb") as fh:
        assert detect_format(fh, "g.jsonl") == "jsonl"


def test_a_claude_code_session_gives_one_trace_per_user_turn(fresh_store):
    report = import_traces(fresh_store, TRANSCRIPTS / "claude_code_session.jsonl")
    assert (report.format, report.imported, report.rejected) == ("transcript", 3, 0)
    first = trace_detail(fresh_store, f"{SESSION}:1")
    assert first["request"] == "Why does test_invoice_total fail?"
    assert first["response"] == (
        "Let me look at the test and the code.\n\nThe test expects 33 but invoice_total([10, 20]) "
        "returns 30. The expected value in the test is wrong."
    )
    assert [(c["source"], c["text"]) for c in first["contexts"]] == [
        (
            "Read: /home/dev/billing/tests/test_invoice.py",
            "def test_invoice_total():\n    assert invoice_total([10, 20]) == 33",
        ),
        ("Bash: pytest tests/test_invoice.py -q", "F\nE   assert 30 == 33\n1 failed in 0.04s"),
    ]
    assert first["model"] == "claude-sonnet-4-5-20250929"
    attributes = json.loads(first["attributes"])
    assert attributes == {
        "session_id": SESSION,
        "turn": 1,
        "tools_used": ["Bash", "Read"],
        "tool_errors": 0,
        "agent": "claude-code",
    }
    second = trace_detail(fresh_store, f"{SESSION}:2")
    assert json.loads(second["attributes"])["tool_errors"] == 1
    third = trace_detail(fresh_store, f"{SESSION}:3")
    assert (third["response"], third["judgeable"]) == (
        "2 + 2 is 4.",
        False,
    )  # sidechain ignored, no tools


def test_plain_messages_transcript_and_a_turn_without_assistant_text(fresh_store):
    report = import_traces(fresh_store, TRANSCRIPTS / "messages_transcript.jsonl")
    assert report.imported == 1
    assert [str(e) for e in report.errors] == [
        'line 5: "response" the assistant wrote no text in this turn; nothing to judge'
    ]
    trace = trace_detail(fresh_store, "messages_transcript:1")
    assert [(c["source"], c["text"]) for c in trace["contexts"]] == [
        (
            "search_kb: refund annual plan",
            "Annual plans can be refunded within 30 days of purchase.",
        )
    ]


def test_a_malformed_line_is_reported_and_the_turn_still_imports(fresh_store):
    report = import_traces(fresh_store, TRANSCRIPTS / "broken_transcript.jsonl")
    assert [str(e) for e in report.errors] == [
        "line 2: is not valid JSON (Expecting ',' delimiter at column 99); each line must hold one complete JSON object"
    ]
    trace = trace_detail(fresh_store, "broken_transcript:1")
    assert trace["response"] == "There are two open tickets: T-1 and T-2."
    assert [c["text"] for c in trace["contexts"]] == ["T-1 open, T-2 open"]
