"""--map SOURCE paths: keys with dots in their names (quoted, or whole on the row), nested
paths and list items, and a mapped source a row lacks rejecting only that row."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotate.errors import UsageError
from annotate.ingest.importer import import_traces, parse_mapping
from annotate.store.status import trace_detail

PHOENIX_ROW = {
    "context.span_id": "s-1",
    "attributes.llm.model_name": "gpt-4o",
    "attributes.input.value": "When does the sale end?",
    "attributes.output.value": "The sale ends on 31 March.",
    "docs": ["Spring sale: 1-31 March 2026."],
}
PHOENIX_MAP = [
    'trace_id="context.span_id"',
    'model="attributes.llm.model_name"',
    'request="attributes.input.value"',
    'response="attributes.output.value"',
    "context=docs",
]


def write_jsonl(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def stored_fields(store, trace_id: str) -> tuple:
    trace = trace_detail(store, trace_id)
    return trace["model"], trace["request"], trace["response"], json.loads(trace["attributes"])


def test_a_quoted_key_with_dots_maps_from_json_lines(fresh_store, tmp_path):
    path = write_jsonl(tmp_path, [PHOENIX_ROW])
    report = import_traces(fresh_store, path, mapping=parse_mapping(PHOENIX_MAP))
    assert (report.imported, report.rejected) == (1, 0), report.errors
    assert stored_fields(fresh_store, "s-1") == (
        "gpt-4o",
        "When does the sale end?",
        "The sale ends on 31 March.",
        {},  # a mapped top-level key moves: none is kept beside its field as an attribute
    )


def test_an_unquoted_source_the_row_has_whole_is_that_key(fresh_store, tmp_path):
    path = write_jsonl(tmp_path, [PHOENIX_ROW])
    mapping = parse_mapping([pair.replace('"', "") for pair in PHOENIX_MAP])
    report = import_traces(fresh_store, path, mapping=mapping)
    assert (report.imported, report.rejected) == (1, 0), report.errors
    assert stored_fields(fresh_store, "s-1")[:3] == (
        "gpt-4o",
        "When does the sale end?",
        "The sale ends on 31 March.",
    )


def test_a_parquet_column_named_with_dots_maps_and_its_null_is_no_value(fresh_store, tmp_path):
    """A null cell is no value (the row is kept, without a model), not a missing source."""
    second = {**PHOENIX_ROW, "context.span_id": "s-2", "attributes.llm.model_name": None}
    path = tmp_path / "spans.parquet"
    pq.write_table(pa.Table.from_pylist([PHOENIX_ROW, second]), path)
    assert "attributes.llm.model_name" in pq.read_schema(path).names
    report = import_traces(fresh_store, path, mapping=parse_mapping(PHOENIX_MAP))
    assert (report.imported, report.rejected) == (2, 0), report.errors
    assert stored_fields(fresh_store, "s-1")[0] == "gpt-4o"
    assert stored_fields(fresh_store, "s-2")[0] is None


def test_a_missing_mapped_source_rejects_only_its_row(fresh_store, tmp_path):
    rows = [
        PHOENIX_ROW,
        {**PHOENIX_ROW, "context.span_id": "s-2"},
        {k: v for k, v in PHOENIX_ROW.items() if k != "attributes.llm.model_name"}
        | {"context.span_id": "s-3"},
    ]
    path = write_jsonl(tmp_path, rows)
    report = import_traces(fresh_store, path, mapping=parse_mapping(PHOENIX_MAP))
    assert (report.imported, report.rejected) == (2, 1)
    assert [str(e) for e in report.errors] == [
        'line 3: "model" is mapped from \'"attributes.llm.model_name"\', which this row does '
        'not have; correct the path in --map model="attributes.llm.model_name", or give the '
        'row that key (a key with dots in its name is written in double quotes: a."b.c")'
    ]


def test_a_missing_source_and_another_error_of_the_row_are_both_reported(fresh_store, tmp_path):
    path = write_jsonl(tmp_path, [{"id": "m-1", "out": 5, "docs": ["d"]}])
    mapping = parse_mapping(["trace_id=id", "response=out", "model=meta.model", "context=docs"])
    report = import_traces(fresh_store, path, mapping=mapping)
    assert [str(e) for e in report.errors] == [
        "line 1: \"model\" is mapped from 'meta.model', which this row does not have; correct "
        "the path in --map model=meta.model, or give the row that key (a key with dots in its "
        'name is written in double quotes: a."b.c")',
        "line 1: \"response\" must be a string, got a number (mapped from 'out')",
    ]


def test_a_json_null_on_the_way_is_no_value_and_a_required_field_says_so(fresh_store, tmp_path):
    rows = [
        {"id": "n-1", "out": {"text": "r"}, "docs": ["d"], "meta": None},
        {"id": "n-2", "out": {"text": None}, "docs": ["d"], "meta": {"model": None}},
    ]
    path = write_jsonl(tmp_path, rows)
    mapping = parse_mapping(
        ["trace_id=id", "response=out.text", "model=meta.model", "context=docs"]
    )
    report = import_traces(fresh_store, path, mapping=mapping)
    assert (report.imported, report.rejected) == (1, 1)
    assert stored_fields(fresh_store, "n-1")[0] is None
    assert [str(e) for e in report.errors] == [
        'line 2: "response" is required: add a response (a string) to the row '
        "(mapped from 'out.text', which has no value on this row)"
    ]


def test_nested_paths_list_items_and_quoted_keys_inside_a_path(fresh_store, tmp_path):
    row = {
        "id": "p-1",
        "input": {"messages.v2": [{"content": "first"}, {"content": "last"}]},
        "output": {"choices": [{"text": "The answer."}]},
        "retrieval": {"docs": ["doc"]},
    }
    path = write_jsonl(tmp_path, [row, {**row, "id": "p-2", "output": {"choices": []}}])
    mapping = parse_mapping(
        [
            "trace_id=id",
            'request=input."messages.v2".-1.content',
            "response=output.choices.0.text",
            "context=retrieval.docs",
        ]
    )
    report = import_traces(fresh_store, path, mapping=mapping)
    assert (report.imported, report.rejected) == (1, 1)
    assert stored_fields(fresh_store, "p-1")[1:3] == ("last", "The answer.")
    assert [e.message.split(";")[0] for e in report.errors] == [
        "is mapped from 'output.choices.0.text', which this row does not have"
    ]


def test_a_quoted_key_is_only_that_key_never_a_path(fresh_store, tmp_path):
    """`"a"."b"` means the path even where the row has a key named `a.b`."""
    path = write_jsonl(tmp_path, [{"id": "q-1", "a.b": "flat", "a": {"b": "nested"}, "c": ["d"]}])
    mapping = parse_mapping(["trace_id=id", 'response="a"."b"', "context=c"])
    import_traces(fresh_store, path, mapping=mapping)
    assert stored_fields(fresh_store, "q-1")[2] == "nested"


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        (
            'model="attributes.llm',
            "--map 'model=\"attributes.llm': the quote at character 1 of SOURCE is never "
            'closed; put the key, dots and all, between two double quotes: a."b.c".d',
        ),
        (
            'model=a"b.c"',
            "--map 'model=a\"b.c\"': a quote must enclose a whole key; put the key, dots and "
            'all, between two double quotes: a."b.c".d',
        ),
        (
            'model="a.b"c',
            "--map 'model=\"a.b\"c': a quote must enclose a whole key; put the key, dots and "
            'all, between two double quotes: a."b.c".d',
        ),
        *[
            (
                f"model={source}",
                f"--map 'model={source}': SOURCE has an empty key (two dots together, a dot "
                'at either end, or ""); write a key between every two dots',
            )
            for source in ("a..b", "a.", ".a", '""', 'a.""')
        ],
    ],
)
def test_a_quoting_mistake_is_a_usage_error_saying_how_to_write_it(pair, message):
    with pytest.raises(UsageError) as caught:
        parse_mapping([pair])
    assert str(caught.value) == message


def test_the_cli_refuses_a_quoting_mistake_before_reading(cli, tmp_path, db_path):
    path = write_jsonl(tmp_path, [PHOENIX_ROW])
    result = cli("import", str(path), "--map", 'model="attributes.llm')
    assert result.code == 2
    assert "the quote at character 1 of SOURCE is never closed" in result.err
    assert not db_path.exists()
