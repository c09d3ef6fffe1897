"""Generic JSON Lines / JSON array / CSV / Parquet import, from fixtures written as producers write them."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from conftest import FIXTURES

from annotate.errors import InputError, UsageError
from annotate.ingest.importer import import_traces, parse_mapping
from annotate.store.status import store_status, trace_detail

GENERIC = FIXTURES / "generic"


def stored_ids(store) -> list[str]:
    return [row[0] for row in store.fetchall("SELECT trace_id FROM traces ORDER BY trace_id")]


def test_issue_example_row_keeps_context_claims_verdicts_and_attributes(fresh_store):
    report = import_traces(fresh_store, GENERIC / "production.jsonl")
    assert (report.imported, report.rejected, report.format) == (3, 0, "jsonl")
    trace = trace_detail(fresh_store, "t-1")
    assert trace["timestamp"] == datetime(2026, 3, 1, 12, 0)
    assert (trace["feature"], trace["risk_category"], trace["model"]) == (
        "billing_qa",
        "financial",
        "m-1",
    )
    assert [(c["source"], c["text"][:20]) for c in trace["contexts"]] == [
        (None, "Invoice INV-2291 was"),
        ("kb/12", "Duplicate charges ar"),
    ]
    assert [
        (c["text"], c["start_offset"], c["end_offset"], c["origin"]) for c in trace["claims"]
    ] == [
        ("Invoice INV-2291 was issued on 2026-02-03.", 0, 42, "provided"),
        ("Duplicate charges are refunded within 5 business days.", 43, 97, "provided"),
    ]
    verdicts = {
        (v["level"], v["claim_index"]): (v["label"], v["score"]) for v in trace["judge_verdicts"]
    }
    assert verdicts == {
        ("claim", 0): ("supported", 0.93),
        ("claim", 1): ("unsupported", 0.2),
        ("response", None): ("supported", None),
    }
    assert json.loads(trace["attributes"]) == {"chunking": "1000-200", "tenant": "acme"}


def test_offset_timestamps_are_stored_in_utc(fresh_store):
    import_traces(fresh_store, GENERIC / "production.jsonl")
    assert trace_detail(fresh_store, "t-2")["timestamp"] == datetime(2026, 3, 1, 11, 5, 10)


def test_empty_context_is_kept_but_not_judgeable(fresh_store):
    import_traces(fresh_store, GENERIC / "production.jsonl")
    assert trace_detail(fresh_store, "t-3")["judgeable"] is False
    status = store_status(fresh_store)
    assert (status["traces"], status["judgeable"]) == (3, 2)


def test_json_array_document_is_detected_and_imported(fresh_store):
    report = import_traces(fresh_store, GENERIC / "production_array.json")
    assert (report.format, report.imported) == ("json", 2)
    assert trace_detail(fresh_store, "a-2")["response"] == "Keep it below 25 °C."


def test_csv_with_quoted_newlines_and_json_cells(fresh_store):
    report = import_traces(fresh_store, GENERIC / "export.csv")
    assert (report.format, report.imported, report.rejected) == ("csv", 3, 0)
    first = trace_detail(fresh_store, "c-1")
    assert first["request"] == "Refund, please"
    assert first["response"] == "Refunds take 5 days.\r\nAnything else?"
    assert [(c["source"], c["text"]) for c in first["contexts"]] == [
        (None, "Refunds take 5 days."),
        ("kb/7", "Line one\r\nline two"),
    ]
    assert json.loads(first["attributes"]) == {"region": "eu"}
    assert [c["text"] for c in trace_detail(fresh_store, "c-2")["contexts"]] == [
        "Employees get 25 days."
    ]
    assert trace_detail(fresh_store, "c-3")["judgeable"] is False


def test_parquet_from_pyarrow_imports_nested_context_and_reports_missing_response(fresh_store):
    report = import_traces(fresh_store, GENERIC / "warehouse_export.parquet")
    assert (report.format, report.imported, report.rejected) == ("parquet", 2, 1)
    assert [str(e) for e in report.errors] == [
        'row 3: "response" is required: add a response (a string) to the row'
    ]
    trace = trace_detail(fresh_store, "p-1")
    assert trace["timestamp"] == datetime(2026, 3, 2, 9, 30)
    assert [(c["source"], c["text"]) for c in trace["contexts"]] == [
        ("kb/1", "Plan Pro costs $30 a month.")
    ]
    assert json.loads(trace["attributes"]) == {"latency_ms": 812}


def test_map_takes_fields_from_nested_paths(fresh_store):
    mapping = parse_mapping(
        [
            "trace_id=id",
            "response=output.text",
            "request=input.messages.0.content",
            "context=retrieval.docs",
            "feature=app",
        ]
    )
    report = import_traces(fresh_store, GENERIC / "nested.jsonl", mapping=mapping)
    assert (report.imported, report.rejected) == (2, 1)
    trace = trace_detail(fresh_store, "n-1")
    assert (trace["request"], trace["response"], trace["feature"]) == (
        "When does the sale end?",
        "The sale ends on 31 March.",
        "shop_qa",
    )
    assert [c["text"] for c in trace["contexts"]] == ["Spring sale: 1-31 March 2026."]
    fix = (
        ", or give the row that key "
        '(a key with dots in its name is written in double quotes: a."b.c")'
    )
    assert [str(e) for e in report.errors] == [  # a source the row lacks rejects it, named
        "line 3: \"response\" is mapped from 'output.text', which this row does not have; "
        "correct the path in --map response=output.text" + fix,
        "line 3: \"request\" is mapped from 'input.messages.0.content', which this row does "
        "not have; correct the path in --map request=input.messages.0.content" + fix,
    ]


def test_bad_mapping_is_a_usage_error():
    with pytest.raises(UsageError, match="must look like FIELD=SOURCE"):
        parse_mapping(["response"])


def test_unknown_format_detection_fails_with_the_formats_it_knows(fresh_store, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some prose\nwith no structure\n")
    with pytest.raises(
        InputError, match="cannot tell the format of .*notes.txt; expected JSON Lines"
    ):
        import_traces(fresh_store, path)
    assert store_status(fresh_store)["imports"] == []


def test_a_mapped_field_with_a_wrong_value_names_its_source_without_calling_it_missing(
    fresh_store, tmp_path
):
    """Catches "must be a string, got a number (mapped from 'output.text', which this row
    does not have)" for a row that has output.text; and a mapped optional field with no
    mention of its source."""
    rows = [
        {"id": "m-1", "output": {"text": 5}, "docs": ["d"], "meta": {"f": "ok"}},
        {"id": "m-2", "output": {"text": "fine"}, "docs": ["d"], "meta": {"f": [7]}},
    ]
    path = tmp_path / "mapped.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    mapping = parse_mapping(
        ["trace_id=id", "response=output.text", "context=docs", "feature=meta.f"]
    )
    report = import_traces(fresh_store, path, mapping=mapping)
    assert [str(e) for e in report.errors] == [
        "line 1: \"response\" must be a string, got a number (mapped from 'output.text')",
        "line 2: \"feature\" must be a string, got a list (mapped from 'meta.f')",
    ]
