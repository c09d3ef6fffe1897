"""CSV files whose header or cells are not what they seem: refused or reported, never guessed.

Each test runs `annotate import` in-process and asserts its exit code, its message and what the
store then holds (QA repros 02, 03 and 11)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import errors, stored


def write(tmp_path: Path, text: str, name: str = "traces.csv") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_header_naming_a_column_twice_refuses_the_file(cli, tmp_path, db_path):
    """Catches `trace_id,response,context,response` importing the last `response` cell and
    dropping the first without a word (exit 0)."""
    path = write(tmp_path, "trace_id,response,context,response\nc1,r1,ctx,r1b\n")
    result = cli("import", path)
    assert result.code == 2
    assert result.err == (
        "error: the CSV header names a column more than once: 'response' in columns 2 and 4. "
        "A row holds one value a name, so the cells of all but one such column would be lost. "
        "Rename or remove the extra columns (a renamed column can be made a field with "
        "--map FIELD=NEW_NAME)\n"
    )
    assert not db_path.exists()  # nothing stored: not even an empty store is left


def test_header_names_that_match_once_trimmed_are_the_same_column(cli, tmp_path, db_path):
    path = write(tmp_path, "trace_id,response,context, response,x,x,x\nc1,r1,ctx,r2,a,b,c\n")
    result = cli("import", path)
    assert result.code == 2
    assert (
        "'response' in columns 2 and 4; 'x' in columns 5, 6 and 7 "
        "(names are compared without the spaces around them)." in result.err
    )
    assert not db_path.exists()


def test_mapped_csv_columns_are_decoded_by_the_field_they_land_in(cli, tmp_path, db_path):
    """Catches `--map context=docs` storing `["doc a", "doc b"]` as one document of that text,
    and `--map claims=cl` rejecting a valid JSON claims cell as "got a string"."""
    path = write(
        tmp_path,
        "id,output,docs,cl,meta\n"
        'm1,Paris is big.,"[""doc a"", ""doc b""]",'
        '"[{""text"":""Paris is big."",""start"":0,""end"":13}]","[1, 2]"\n'
        "m2,r2,,,\n"
        'm3,r3,"[oops",,\n'
        'm4,"[""not"", ""json""]",plain doc,"{bad",\n',
    )
    mapping = ["--map", "trace_id=id", "--map", "response=output"]
    result = cli("import", path, *mapping, "--map", "context=docs", "--map", "claims=cl", "--json")
    assert result.code == 1
    assert result.json()["imported"] == 1
    assert errors(result) == [
        (
            3,
            "context",
            "is required: add the documents the model saw, as a list of strings or {source, "
            "text} objects (an empty list [] if it saw none) (mapped from 'docs', which has no "
            "value on this row)",
        ),  # an empty cell is no value, not a missing source
        (
            4,
            "context",
            "looks like JSON but is not valid (Expecting value at column 2); fix the cell's "
            "JSON (mapped from 'docs')",  # as under the column's own name `context`
        ),
        (
            5,
            "claims",
            "looks like JSON but is not valid (Expecting property name enclosed in double "
            "quotes at column 2); fix the cell's JSON (mapped from 'cl')",
        ),
    ]
    assert stored(db_path, "SELECT trace_id, position, text FROM contexts ORDER BY 1, 2") == [
        ("m1", 0, "doc a"),
        ("m1", 1, "doc b"),
    ]
    assert stored(db_path, "SELECT trace_id, text, start_offset, end_offset FROM claims") == [
        ("m1", "Paris is big.", 0, 13)
    ]
    traces = stored(db_path, "SELECT trace_id, response, attributes FROM traces ORDER BY 1")
    assert [(t[0], t[1], json.loads(t[2])) for t in traces] == [
        ("m1", "Paris is big.", {"meta": "[1, 2]"}),  # an unmapped column stays text
    ]


def test_a_mapped_column_keeps_its_text_in_a_text_field(cli, tmp_path, db_path):
    path = write(tmp_path, 'id,output,context\nm1,"[""a"", ""b""]",ctx\n')
    result = cli("import", path, "--map", "trace_id=id", "--map", "response=output")
    assert result.code == 0, result.err
    assert stored(db_path, "SELECT trace_id, response FROM traces") == [("m1", '["a", "b"]')]


def test_a_semicolon_separated_csv_is_refused_naming_its_delimiter(cli, tmp_path, db_path):
    """Catches "trace_id/response/context is required" on every row of a `;`-separated file."""
    path = write(tmp_path, "trace_id;response;context\nc1;r1;ctx\n")
    result = cli("import", path)
    assert result.code == 2
    assert result.err == (
        "error: the CSV header is one column named 'trace_id;response;context': the file "
        "seems to use semicolons (;) between its columns, not commas. annotate reads "
        "comma-separated CSV: save the file again with commas as the delimiter\n"
    )
    assert not db_path.exists()
    tabs = cli("import", write(tmp_path, "trace_id\tresponse\tcontext\nc1\tr1\tctx\n"))
    assert tabs.code == 2 and "seems to use tabs between its columns" in tabs.err


def test_header_names_with_spaces_around_them_are_the_fields(cli, tmp_path, db_path):
    """Catches `trace_id, response, context` failing "response is required" on every row.
    The names are trimmed; the cells are stored as written, spaces and all."""
    path = write(tmp_path, "trace_id, response , context\nw1, r1, ctx\n")
    result = cli("import", path)
    assert result.code == 0, result.err
    assert stored(db_path, "SELECT trace_id, response, attributes FROM traces") == [
        ("w1", " r1", "{}")
    ]
    assert stored(db_path, "SELECT text FROM contexts") == [(" ctx",)]


def test_a_row_with_fewer_or_more_cells_than_the_header_is_reported_so(cli, tmp_path, db_path):
    """Catches a short row reported as "context is required" (its missing cell could be any
    column); the good rows of the file are kept."""
    path = write(
        tmp_path, "trace_id,response,context\nc1,r1,ctx\nc2,r2\n\nc3,r3,ctx,extra\nc4,r4,\n"
    )
    result = cli("import", path, "--json")
    assert result.code == 1
    assert errors(result) == [
        (
            3,
            "",
            "has fewer cells (2) than the header has columns (3); which one is missing cannot "
            "be told; write every column's cell (an empty one as nothing between two commas)",
        ),
        (5, "", "has more cells (4) than the header has columns (3); quote cells that hold commas"),
    ]
    assert stored(db_path, "SELECT trace_id FROM traces ORDER BY 1") == [("c1",), ("c4",)]


def test_a_value_under_one_of_several_unnamed_columns_is_reported(cli, tmp_path, db_path):
    """Two columns without a name were one key: the second's cell replaced the first's."""
    path = write(tmp_path, "trace_id,response,context,,\nc1,r1,ctx,,\nc2,r2,ctx,x,y\n")
    result = cli("import", path, "--json")
    assert result.code == 1
    assert errors(result) == [
        (
            3,
            "",
            "has a value in column 4, one of several columns with no name in the header; name it",
        )
    ]
    assert stored(db_path, "SELECT trace_id, attributes FROM traces") == [("c1", "{}")]
