"""Values at the edges of what a row may hold: Parquet binary, NaN and bad bytes in a JSON array,
integers at and past 64 bits, empty labels, non-finite attributes.

Each test runs `annotate import` in-process and asserts its exit code, its messages and what the
store then holds (QA repros 07, 08, 09 and 13)."""

from __future__ import annotations

import datetime
import decimal
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from conftest import errors, stored

STOPPED = (
    "Reading stopped here: this item and every item after it were not read ({kept}); fix the "
    "file and import it again (items already imported are skipped as duplicates)"
)


def write(tmp_path: Path, data: bytes, name: str) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def attributes(db_path: Path) -> dict[str, dict]:
    rows = stored(db_path, "SELECT trace_id, attributes FROM traces ORDER BY trace_id")
    return {trace_id: json.loads(value) for trace_id, value in rows}


def parquet(tmp_path: Path, columns: dict) -> str:
    path = tmp_path / "traces.parquet"
    pq.write_table(pa.table(columns), path)
    return str(path)


# 1. Parquet binary values


def test_a_parquet_binary_value_that_is_not_text_is_rejected_naming_the_column(
    cli, tmp_path, db_path
):
    """Catches b'\\x00\\xffhello' stored as the Python repr text "b'\\x00\\xffhello'" (exit 0)."""
    path = parquet(
        tmp_path,
        {
            "trace_id": ["p1", "p2"],
            "response": ["r", "r"],
            "context": [["c"], ["c"]],
            "blob": pa.array([b"\x00\xffhello", None], pa.binary()),
        },
    )
    result = cli("import", path, "--json")
    assert result.code == 1
    assert errors(result) == [
        (
            1,
            "blob",
            "is binary data, not text (7 bytes: 00 ff 68 65 6c 6c 6f; byte 2 (0xff) is not "
            "UTF-8); cast the column to a string when you write the file, or drop the column",
        )
    ]
    assert attributes(db_path) == {"p2": {}}


def test_parquet_binary_holding_utf8_text_is_that_text_and_other_binary_is_refused(
    cli, tmp_path, db_path
):
    """A string column an older writer stored as BINARY is read as its text (in a field, an
    attribute or nested); binary that decodes but holds control bytes is refused, named by path."""
    path = parquet(
        tmp_path,
        {
            "trace_id": pa.array([b"b1", b"b2", b"b3"], pa.binary()),
            "response": pa.array(["caf\u00e9".encode(), b"r", b"r"], pa.binary()),
            "context": pa.array([[b"doc"], [b"doc", b"\x01\x02"], [b"doc"]], pa.list_(pa.binary())),
            "tag": pa.array([b"a\tb", b"x", b"\x1bz"], pa.binary()),
        },
    )
    result = cli("import", path, "--json")
    assert result.code == 1
    assert errors(result) == [
        (
            2,
            "context[1]",
            "is binary data, not text (2 bytes: 01 02; it holds the control character 0x01); "
            "cast the column to a string when you write the file, or drop the column",
        ),
        (
            3,
            "tag",
            "is binary data, not text (2 bytes: 1b 7a; it holds the control character 0x1b); "
            "cast the column to a string when you write the file, or drop the column",
        ),
    ]
    assert stored(db_path, "SELECT trace_id, response, attributes FROM traces") == [
        ("b1", "caf\u00e9", '{"tag":"a\\tb"}')
    ]
    assert stored(db_path, "SELECT text FROM contexts") == [("doc",)]


def test_parquet_decimals_dates_and_float32_become_the_documented_attribute_values(
    cli, tmp_path, db_path
):
    path = parquet(
        tmp_path,
        {
            "trace_id": ["p1"],
            "response": ["r"],
            "context": [["c"]],
            "dec": pa.array([decimal.Decimal("1.10")], pa.decimal128(5, 2)),
            "f32": pa.array([0.1], pa.float32()),
            "day": [datetime.date(2026, 3, 1)],
            "at": [datetime.datetime(2026, 3, 1, 12, 30)],
        },
    )
    assert cli("import", path).code == 0
    assert attributes(db_path) == {
        "p1": {
            "dec": "1.10",
            "f32": 0.10000000149011612,
            "day": "2026-03-01",
            "at": "2026-03-01T12:30:00",
        }
    }


# 2. A JSON array that stops


def test_nan_in_a_json_array_names_the_item_the_value_and_the_fix(cli, tmp_path, db_path):
    """Catches "lexical error: invalid char in json text" as the only word on a NaN."""
    data = (
        b'[{"trace_id": "n0", "response": "r", "context": ["c"]},\n'
        b' {"trace_id": "n1", "response": "r", "context": ["c"],'
        b' "judge": [{"label": "s", "score": NaN}]},\n'
        b' {"trace_id": "n2", "response": "r", "context": ["c"]}]'
    )
    result = cli("import", write(tmp_path, data, "nan.json"))
    assert result.code == 1
    assert "imported 1, rejected 1" in result.out  # the summary is a result: stdout
    assert result.err.splitlines() == [
        "  item 2: holds NaN as the value of 'score': JSON has no NaN, Infinity or -Infinity; "
        "write null for no value. " + STOPPED.format(kept="the 1 item before it was read")
    ]
    assert stored(db_path, "SELECT trace_id FROM traces") == [("n0",)]


def test_minus_infinity_as_the_first_item_says_none_came_before(cli, tmp_path, db_path):
    data = b'[{"trace_id": "i0", "response": "r", "context": [], "x": -Infinity}]'
    result = cli("import", write(tmp_path, data, "inf.json"), "--json")
    assert result.code == 1
    assert errors(result) == [
        (
            1,
            "",
            "holds -Infinity as the value of 'x': JSON has no NaN, Infinity or -Infinity; "
            "write null for no value. " + STOPPED.format(kept="none came before it"),
        )
    ]


def test_a_latin1_byte_in_a_json_array_names_the_byte_and_the_fix_not_a_bytes_repr(
    cli, tmp_path, db_path
):
    data = (
        b'[{"trace_id": "l0", "response": "r", "context": ["c"]},'
        b'{"trace_id": "l1", "response": "r", "context": ["c"]},'
        b'{"trace_id": "l2", "response": "caf\xe9", "context": ["c"]},'
        b'{"trace_id": "l3", "response": "r", "context": ["c"]}]'
    )
    result = cli("import", write(tmp_path, data, "latin.json"))
    assert result.code == 1
    assert "imported 2, rejected 1" in result.out
    assert result.err.splitlines() == [
        "  item 3: holds the byte 0xe9, which is not UTF-8 (the file may be Latin-1 or "
        "Windows-1252); re-save the file as UTF-8. "
        + STOPPED.format(kept="the 2 items before it were read")
    ]
    assert "b'" not in result.err and "\\x" not in result.err
    assert stored(db_path, "SELECT trace_id FROM traces ORDER BY 1") == [("l0",), ("l1",)]


# 3. Integers past 64 bits: one rule in a JSON array and on a JSON line


def test_an_integer_past_64_bits_in_a_text_field_is_refused_in_a_json_array_too(
    cli, tmp_path, db_path
):
    """Catches `"model": 99999999999999999999` stored as the text "99999999999999999999" from
    a JSON array while the same row on a JSON line is rejected."""
    rows = [
        b'{"trace_id": "q0", "response": "r", "context": [], "model": 99999999999999999999}',
        b'{"trace_id": 18446744073709551616, "response": "r", "context": []}',
        b'{"trace_id": 7, "response": "r", "context": [], "model": -9223372036854775808}',
    ]
    result = cli("import", write(tmp_path, b"[" + b",".join(rows) + b"]", "big.json"), "--json")
    assert result.code == 1
    assert errors(result) == [
        (
            1,
            "model",
            "holds the integer 99999999999999999999, beyond 64 bits; write it as a string",
        ),
        (
            2,
            "trace_id",
            "holds the integer 18446744073709551616, beyond 64 bits; write it as a string",
        ),
    ]
    assert stored(db_path, "SELECT trace_id, model FROM traces") == [("7", "-9223372036854775808")]
    line = cli("import", write(tmp_path, rows[0] + b"\n", "big.jsonl"), "--json")
    assert line.code == 1
    assert [(e["line"], e["field"]) for e in line.json()["errors"]] == [(1, "model")]


# 4. The int64 minimum, an empty label, a non-finite attribute


def test_the_int64_minimum_is_an_attribute_integer_that_fits(cli, tmp_path, db_path):
    """Catches -9223372036854775808 rejected as "beyond 64 bits"."""
    row = {"trace_id": "a", "response": "r", "context": [], "attributes": {"neg": -(2**63)}}
    array = {"trace_id": "b", "response": "r", "context": [], "top": -(2**63)}
    cli("import", write(tmp_path, json.dumps(row).encode() + b"\n", "t.jsonl"))
    result = cli("import", write(tmp_path, json.dumps([array]).encode(), "t.json"), "--json")
    assert result.code == 0, result.out
    assert attributes(db_path) == {"a": {"neg": -(2**63)}, "b": {"top": -(2**63)}}


def test_an_empty_judge_label_says_it_is_empty(cli, tmp_path, db_path):
    data = b'{"trace_id": "b", "response": "r", "context": [], "judge": [{"label": ""}]}\n'
    result = cli("import", write(tmp_path, data, "t.jsonl"), "--json")
    assert result.code == 1
    assert errors(result) == [
        (1, "judge[0].label", "must be a non-empty string, got an empty string")
    ]


def test_a_non_finite_attribute_is_not_told_about_scores(cli, tmp_path, db_path):
    """Catches "write null (or leave it out) for no score" on an attribute."""
    data = (
        b'{"trace_id": "a", "response": "r", "context": [], "attributes": {"x": 1e999}}\n'
        b'{"trace_id": "b", "response": "r", "context": [], "ratio": NaN}\n'
        b'{"trace_id": "c", "response": "r", "context": [], "model": -Infinity}\n'
    )
    result = cli("import", write(tmp_path, data, "t.jsonl"), "--json")
    assert result.code == 1
    fix = "NaN and Infinity cannot be stored: write null or leave it out, or write it as a string"
    assert errors(result) == [
        (1, "attributes.x", f"must be a finite number, got inf; {fix}"),
        (2, "ratio", f"must be a finite number, got nan; {fix}"),
        (3, "model", f"must be a finite number, got -inf; {fix}"),
    ]
    assert stored(db_path, "SELECT count(*) FROM traces") == [(0,)]
