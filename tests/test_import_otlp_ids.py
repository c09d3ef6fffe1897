"""The calls of one OTel trace exported in several files: each call is stored once, under one
id, and no call is refused as a conflict with another call of its trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import stored
from test_import_otlp_edges import call, span_id, trace_id, write

TRACE = trace_id(7)


def span_call(span: int, answer: str = "Refunds take 14 days.") -> dict[str, Any]:
    """Call `span` of OTel trace 7 (one export line)."""
    return call(span, answer, traceId=TRACE)


def both(*calls: dict[str, Any]) -> dict[str, Any]:
    """One export line holding every span of `calls`."""
    spans = [c["resourceSpans"][0]["scopeSpans"][0]["spans"][0] for c in calls]
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}


def imported(cli: Any, path: str) -> dict[str, Any]:
    result = cli("import", path, "--json")
    assert result.code == 0, result.err
    return result.json()


def stored_ids(db_path: Path) -> list[tuple[str, str]]:
    return stored(
        db_path,
        "SELECT trace_id, json_extract_string(attributes, '$.otel_span_id') FROM traces "
        "ORDER BY trace_id",
    )


def test_two_files_each_with_one_call_of_a_trace_store_both_calls(cli, db_path, tmp_path):
    """Caught: the second file's call took the bare OTel trace id too and was refused as a
    conflict with the first ("was already imported ... with different content")."""
    imported(cli, write(tmp_path, span_call(1, "Refunds take 14 days."), name="a.jsonl"))
    second = imported(cli, write(tmp_path, span_call(2, "Shipping is free."), name="b.jsonl"))
    assert (second["imported"], second["conflicts"]) == (1, 0)
    assert stored_ids(db_path) == [(TRACE, span_id(1)), (f"{TRACE}-{span_id(2)}", span_id(2))]


def test_a_call_stored_beside_another_is_a_duplicate_when_it_comes_alone(cli, db_path, tmp_path):
    """Caught: a call stored as `<trace>-<span>` (its file had two calls) came back alone as
    `<trace>` and was stored a second time."""
    imported(cli, write(tmp_path, both(span_call(1), span_call(2, "Ok.")), name="a.jsonl"))
    again = imported(cli, write(tmp_path, span_call(1), name="b.jsonl"))
    assert (again["imported"], again["duplicates"]) == (0, 1)
    assert stored_ids(db_path) == [
        (f"{TRACE}-{span_id(1)}", span_id(1)),
        (f"{TRACE}-{span_id(2)}", span_id(2)),
    ]


def test_a_call_stored_alone_is_a_duplicate_when_it_comes_with_another(cli, db_path, tmp_path):
    """Caught: a call stored as `<trace>` came back beside a second call as `<trace>-<span>`
    and was stored a second time."""
    imported(cli, write(tmp_path, span_call(1), name="a.jsonl"))
    later = imported(cli, write(tmp_path, both(span_call(1), span_call(2, "Ok.")), name="b.jsonl"))
    assert (later["imported"], later["duplicates"]) == (1, 1)
    assert stored_ids(db_path) == [(TRACE, span_id(1)), (f"{TRACE}-{span_id(2)}", span_id(2))]


def test_a_changed_call_is_still_a_conflict_under_the_id_it_was_stored_with(cli, db_path, tmp_path):
    imported(cli, write(tmp_path, both(span_call(1), span_call(2, "Ok.")), name="a.jsonl"))
    result = cli("import", write(tmp_path, span_call(1, "Refunds take 30 days."), name="b.jsonl"))
    assert result.code == 1
    assert f"'{TRACE}-{span_id(1)}' was already imported by import 1" in result.out + result.err
    assert len(stored_ids(db_path)) == 2


def test_a_call_whose_trace_id_a_generic_row_holds_takes_its_span_id(cli, db_path, tmp_path):
    generic = tmp_path / "generic.jsonl"
    generic.write_text(f'{{"trace_id": "{TRACE}", "response": "r", "context": ["c"]}}\n')
    imported(cli, str(generic))
    call_of_trace = imported(cli, write(tmp_path, span_call(1), name="otlp.jsonl"))
    assert (call_of_trace["imported"], call_of_trace["conflicts"]) == (1, 0)
    assert stored_ids(db_path) == [(TRACE, None), (f"{TRACE}-{span_id(1)}", span_id(1))]
