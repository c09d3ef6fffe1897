"""Exact messages for values the store cannot hold, and one rule per value in every format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bad_corpus import TEXT, TRACES_FOR_LABELS, bad, csv_file, jsonl, line, parquet_scores

from annotate.errors import InputError
from annotate.ingest import detect_format
from annotate.ingest.importer import import_traces
from annotate.ingest.labels import import_labels
from annotate.store import open_store


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def messages(report) -> list[str]:
    return [str(error) for error in report.errors]


def test_a_timestamp_that_leaves_the_years_1_to_9999_in_utc(fresh_store, tmp_path):
    data = jsonl(line(bad(timestamp="9999-12-31T23:00:00-05:00")))
    report = import_traces(fresh_store, write(tmp_path, "t.jsonl", data))
    assert messages(report) == [
        'line 2: "timestamp" 9999-12-31T23:00:00-05:00 is outside the range the store can hold '
        "(years 1 to 9999 in UTC) once converted to UTC; fix the date or its offset"
    ]


def test_a_claim_offset_past_int32(fresh_store, tmp_path):
    data = jsonl(line(bad(claims=[{"text": TEXT, "start": 0, "end": 2**31}])))
    report = import_traces(fresh_store, write(tmp_path, "t.jsonl", data))
    assert messages(report) == [
        'line 2: "claims[0].end" must be a character offset between 0 and 2,147,483,647, '
        "got 2147483648"
    ]


def test_wrong_offsets_are_repaired_with_a_warning_only_when_certain(fresh_store, tmp_path):
    data = jsonl(line(bad(claims=[{"text": "5 days", "start": 0, "end": 6}])))
    report = import_traces(fresh_store, write(tmp_path, "t.jsonl", data))
    assert report.errors == [] and report.imported == 3
    assert [str(w) for w in report.warnings] == [
        'line 2: "claims[0]" offsets 0:6 did not hold the claim\'s text; it occurs once in the '
        "response, so they were set to 13:19"
    ]
    stored = fresh_store.fetchall(
        "SELECT start_offset, end_offset FROM claims WHERE trace_id = 'bad'"
    )
    assert stored == [(13, 19)]


def test_wrong_offsets_of_a_text_found_twice_are_rejected(fresh_store, tmp_path):
    row = bad(response="No. No.", claims=[{"text": "No.", "start": 1, "end": 4}])
    report = import_traces(fresh_store, write(tmp_path, "t.jsonl", jsonl(line(row))))
    assert messages(report) == [
        "line 2: \"claims[0]\" [1:4] is 'o. ', not the claim's text 'No.', which occurs 2 times "
        "in the response; give offsets with response[start:end] == text (or leave both out)"
    ]


def test_an_unterminated_csv_quote_names_its_line_and_keeps_the_rows_before(fresh_store, tmp_path):
    data = csv_file('bad,"never closed,x', "g-3,a,b")
    report = import_traces(fresh_store, write(tmp_path, "t.csv", data))
    assert messages(report) == [
        'line 3: a quoted cell that begins on this line is never closed: its " quote runs to the '
        "end of the file and swallows every line after it; close the quote (write a quote "
        'inside a cell as ""). Reading stopped here. The rows before it were kept'
    ]
    assert report.imported == 1


def test_nan_is_one_rule_in_json_lines_and_parquet(fresh_store, tmp_path):
    nan_line = b'{"trace_id": "bad", "response": "r", "context": [], "judge": [{"label": "ok", "score": NaN}]}'
    from_json = import_traces(fresh_store, write(tmp_path, "t.jsonl", jsonl(nan_line)))
    other = open_store(":memory:")
    from_parquet = import_traces(other, write(tmp_path, "t.parquet", parquet_scores(float("nan"))))
    other.close()
    expected = (
        '"judge[0].score" must be a finite number, got nan; write null (or leave it out) for '
        "no score"
    )
    assert messages(from_json) == [f"line 2: {expected}"]
    assert messages(from_parquet) == [f"row 2: {expected}"]


def test_a_lone_surrogate_is_one_rule_on_a_json_line_and_in_a_json_array(fresh_store, tmp_path):
    row = b'{"trace_id": "bad", "response": "a\\ud800b", "context": []}'
    on_line = import_traces(fresh_store, write(tmp_path, "t.jsonl", jsonl(row)))
    in_array = import_traces(fresh_store, write(tmp_path, "t.json", b"[" + row + b"]"))
    expected = (
        "\"response\" holds a lone surrogate ('\\ud800' at character 2), which is not valid "
        "Unicode text; re-export the text as UTF-8"
    )
    assert messages(on_line) == [f"line 2: {expected}"]
    assert messages(in_array) == [f"item 1: {expected}"]


def test_one_nul_in_a_text_file_is_a_row_error_not_a_binary_file(fresh_store, tmp_path):
    path = write(tmp_path, "t.jsonl", jsonl(b'{"trace_id": "bad",\x00 "response": "r"}'))
    with path.open("rb") as fh:
        assert detect_format(fh, "t.jsonl") == "jsonl"
    report = import_traces(fresh_store, path)
    assert messages(report) == [
        "line 2: holds a NUL byte at column 20, which is not text; remove it (a few such bytes "
        "in a text file are damage, not a binary file)"
    ]


def test_a_file_mostly_of_control_bytes_is_binary(tmp_path):
    path = write(tmp_path, "t.jsonl", b"\x00\x01{}" * 100)
    with path.open("rb") as fh, pytest.raises(InputError, match="looks like a binary file"):
        detect_format(fh, "t.jsonl")


def test_an_otlp_line_with_no_spans_is_reported(fresh_store, tmp_path):
    data = b'{"resourceSpans": []}\n'
    report = import_traces(fresh_store, write(tmp_path, "t.jsonl", data), "otlp")
    assert messages(report) == [
        "line 1: holds no spans and no gen_ai.evaluation.result log records: there is nothing "
        "to import on this line; check the exporter's output or delete the line"
    ]


def test_a_parquet_file_cut_short_is_refused_with_exit_2(cli, tmp_path):
    path = write(tmp_path, "t.parquet", parquet_scores(0.5)[:-40])
    result = cli("import", str(path))
    assert result.code == 2
    assert result.err == (
        "error: the file is not a readable Parquet file (Parquet magic bytes not found in "
        "footer. Either the file is corrupted or this is not a parquet file.); it may be cut "
        "short: export it again\n"
    )


def test_an_external_reviewer_name_follows_the_user_add_rule(fresh_store, tmp_path):
    import_traces(fresh_store, write(tmp_path, "t.jsonl", TRACES_FOR_LABELS))
    rows = [
        {"trace_id": "g-1", "claim": 0, "reviewer": "r" * 100_000, "label": "supported"},
        {"trace_id": "g-1", "claim": 0, "reviewer": "  ok-name  ", "label": "supported"},
    ]
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    report = import_labels(fresh_store, write(tmp_path, "l.jsonl", data))
    assert messages(report) == [
        'line 1: "reviewer" must be a user name of 1-64 characters with no spaces, got '
        "'rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr…' (100,000 characters)"
    ]
    assert fresh_store.fetchall("SELECT reviewer FROM label_events") == [("ok-name",)]


def test_an_attribute_name_that_is_not_text_is_reported_as_an_escape(fresh_store, tmp_path):
    row = bad(attributes={"k\ud800": 1, "n\x00": 2})
    data = jsonl(json.dumps(row).encode())
    report = import_traces(fresh_store, write(tmp_path, "t.jsonl", data))
    assert messages(report) == [
        "line 2: \"attributes.k\\ud800\" holds a lone surrogate ('\\ud800' at character 2), "
        "which is not valid Unicode text; re-export the text as UTF-8"
    ]
    assert report.imported == 2


def test_an_integer_past_64_bits_in_a_json_array_is_named(fresh_store, tmp_path):
    row = b'{"trace_id": "bad", "response": "r", "context": [], "big": 1180591620717411303424}'
    report = import_traces(fresh_store, write(tmp_path, "t.json", b"[" + row + b"]"))
    assert messages(report) == [
        'item 1: "big" holds the integer 1180591620717411303424, beyond 64 bits; write it as a '
        "string"
    ]


def test_integers_past_64_bits_on_a_json_line_are_refused_not_stored_rounded(fresh_store, tmp_path):
    """Catches an integer that orjson read as a rounded float (2**70 stored as
    1.1805916207174113e+21) and stored as if it were the number written."""
    rows = [
        bad(trace_id="b-1", attributes={"a": 2**64}),
        bad(trace_id="b-2", attributes={"a": -(2**63) - 1}),
        bad(trace_id="b-3", n=10**30),
        bad(trace_id="b-4", attributes={"a": [1, 2**70]}),
        bad(trace_id="b-5", feature=2**64),
        bad(trace_id="b-6", attributes={"a": 1e19}),
        bad(trace_id="ok", attributes={"max": 2**63 - 1, "min": -(2**63) + 1, "f": 1.5e18}),
    ]
    data = jsonl(*(line(row) for row in rows))
    report = import_traces(fresh_store, write(tmp_path, "t.jsonl", data))
    assert messages(report) == [
        'line 2: "attributes.a" holds the number 1.8446744073709552e+19, too large to keep '
        "exactly (an integer past 64 bits arrives rounded); write it as a string",
        'line 3: "attributes.a" holds the number -9.223372036854776e+18, too large to keep '
        "exactly (an integer past 64 bits arrives rounded); write it as a string",
        'line 4: "n" holds the number 1e+30, too large to keep exactly (an integer past 64 bits '
        "arrives rounded); write it as a string",
        'line 5: "attributes.a" holds the number 1.1805916207174113e+21, too large to keep '
        "exactly (an integer past 64 bits arrives rounded); write it as a string",
        'line 6: "feature" holds the number 1.8446744073709552e+19, too large to keep exactly '
        "(an integer past 64 bits arrives rounded); write it as a string",
        'line 7: "attributes.a" holds the number 1e+19, too large to keep exactly (an integer '
        "past 64 bits arrives rounded); write it as a string",
    ]
    stored = fresh_store.scalar("SELECT attributes FROM traces WHERE trace_id = 'ok'")
    assert json.loads(stored) == {"max": 2**63 - 1, "min": -(2**63) + 1, "f": 1.5e18}
    assert report.imported == 3


def test_a_user_name_with_an_invisible_character_is_refused(fresh_store, tmp_path):
    """Catches a name that looks like another: rita and rita with a zero-width space, or a
    right-to-left override that shows a name backwards."""
    from annotate.accounts.users import AuthError, add_user

    for name, shown in (("rita\u200b", "U+200B (ZERO WIDTH SPACE)"),
                        ("a\u202eb", "U+202E (RIGHT-TO-LEFT OVERRIDE)")):  # fmt: skip
        with pytest.raises(
            (AuthError, ValueError), match=re.escape(f"invisible character {shown}")
        ):
            add_user(fresh_store, name, "reviewer", "a long passphrase")
    import_traces(fresh_store, write(tmp_path, "t.jsonl", TRACES_FOR_LABELS))
    row = {"trace_id": "g-1", "claim": 0, "reviewer": "rob\ufeff", "label": "supported"}
    report = import_labels(fresh_store, write(tmp_path, "l.jsonl", line(row) + b"\n"))
    assert messages(report) == [
        'line 1: "reviewer" holds the invisible character U+FEFF (ZERO WIDTH NO-BREAK SPACE), '
        "which would let one name pass for another; type the name again without it"
    ]
    assert add_user(fresh_store, "zoë-ünïcode", "reviewer", "a long passphrase").name == (
        "zoë-ünïcode"
    )
