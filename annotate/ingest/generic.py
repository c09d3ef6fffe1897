"""Readers for the generic one-trace-a-row formats: JSON Lines, a JSON array, CSV, Parquet.

Each reader streams a binary file and yields Records (raw dicts with their line or
row number) or RowErrors for rows that cannot even be parsed. Validation of the
fields is not done here: see annotate.traces.parse_record (and annotate.traces.decoded, which
read_jsonl_traces asks first for each JSON line).
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Iterator, Mapping
from typing import IO, Any

import orjson

from annotate.errors import InputError
from annotate.ingest.json_array import read_json_array
from annotate.ingest.parquet import (
    ROWS_KEPT,
    read_parquet,  # noqa: F401 (the readers table)
)
from annotate.ingest.parquet import parquet_record as _parquet_record  # noqa: F401 (import_rows)
from annotate.traces import Record, RowError, Trace
from annotate.traces.decoded import plain_trace
from annotate.traces.limits import MAX_TEXT_CHARS

BOM = codecs.BOM_UTF8
JSON_CELLS = ("context", "claims", "judge", "attributes")
_UTF8_FIX = "is not valid UTF-8 ({reason}); re-save the file as UTF-8"


def decode_line(raw: bytes, number: int) -> str | RowError:
    if number == 1 and raw.startswith(BOM):
        raw = raw[len(BOM) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1}"
        return RowError(number, "", "the line " + _UTF8_FIX.format(reason=reason))


def parse_json_line(text: str, number: int) -> Record | RowError:
    try:
        return Record(number, _loads(text))
    except (ValueError, RecursionError):
        return RowError(
            number,
            "",
            f"is not valid JSON ({json_problem(text)}); each line must hold one complete JSON object",
        )


def json_problem(text: str) -> str:
    """The stdlib's wording and column for a document orjson refused (the slow path, errors only)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        joiner = " " if exc.msg.endswith(" at") else " at "  # "Unterminated string starting at"
        return f"{exc.msg}{joiner}column {exc.colno}"
    except RecursionError:
        return "nested too deeply"
    return "not accepted by the strict parser"


def read_jsonl(fh: IO[bytes]) -> Iterator[Record | RowError]:
    """One JSON value a line; blank lines are skipped, every bad line is reported."""
    for number, raw in enumerate(fh, start=1):
        item = _jsonl_item(raw, number)
        if item is not None:
            yield item


def read_jsonl_traces(fh: IO[bytes]) -> Iterator[Trace | Record | RowError]:
    """read_jsonl, with each line of the usual shape already a checked Trace (decoded in C,
    annotate.traces.decoded); every other line a Record for parse_record, as read_jsonl's."""
    for number, raw in enumerate(fh, start=1):
        item = jsonl_trace_item(raw, number)
        if item is not None:
            yield item


def jsonl_trace_item(raw: bytes, number: int) -> Trace | Record | RowError | None:
    """One line as read_jsonl_traces reads it; None: a blank line."""
    return plain_trace(raw, number) or _jsonl_item(raw, number)


def _jsonl_item(raw: bytes, number: int) -> Record | RowError | None:
    """One line's record, or the error that names what is wrong with it; None: a blank line."""
    try:  # the usual line: orjson checks UTF-8 itself and refuses NUL bytes and blanks
        return Record(number, orjson.loads(raw))
    except orjson.JSONDecodeError:
        pass  # the checks below name what is wrong with the line
    text = decode_line(raw, number)
    if isinstance(text, RowError):
        return text
    if not text.strip():
        return None
    if "\x00" in text:
        return stray_nul(text, number)
    return parse_json_line(text.rstrip("\r\n"), number)


def stray_nul(text: str, number: int) -> RowError:
    column = text.index("\x00") + 1
    return RowError(
        number,
        "",
        f"holds a NUL byte at column {column}, which is not text; remove it "
        "(a few such bytes in a text file are damage, not a binary file)",
    )


def read_json_document(fh: IO[bytes]) -> Iterator[Record | RowError]:
    """A file holding one JSON value: an array of traces, or a single trace object."""
    start = _first_significant_byte(fh)
    fh.seek(0)
    if start == b"[":
        yield from read_json_array(fh)
        return
    data = fh.read()
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        yield Record(1, orjson.loads(data))
    except orjson.JSONDecodeError as exc:
        yield _document_record(data, exc)


def _document_record(data: bytes, exc: Exception) -> Record | RowError:
    try:  # lone surrogates: the field check names the field, as on a JSON line
        return Record(1, json.loads(data.decode("utf-8")))
    except (ValueError, RecursionError):
        return RowError(1, "", f"the file is not valid JSON ({exc})")


def read_csv(fh: IO[bytes]) -> Iterator[Record | RowError]:
    """CSV with a header row; quoted newlines are fine; JSON cells are decoded.

    Strict quoting: a quote that is never closed, or a cell longer than a text may be,
    stops the reader; that row is reported and the rows before it are kept. A header that
    cannot be meant as it reads (a name twice, another delimiter) refuses the file."""
    if csv.field_size_limit() < MAX_TEXT_CHARS:
        csv.field_size_limit(MAX_TEXT_CHARS)
    text = io.TextIOWrapper(fh, encoding="utf-8-sig", errors="surrogateescape", newline="")
    reader = csv.reader(text, strict=True)
    header: list[str] | None = None
    columns: frozenset[str] = frozenset()
    unnamed: list[int] = []
    line = 0
    try:
        for cells in reader:
            start, line = line + 1, reader.line_num
            if not cells:  # a blank line
                continue
            if header is None:
                header = _csv_header(cells)
                columns = frozenset(header)
                unnamed = [i for i, name in enumerate(header) if not name]
            elif len(cells) != len(header):
                yield _ragged(start, len(cells), len(header))
            elif len(unnamed) > 1 and any(cells[i] for i in unnamed):
                yield RowError(start, "", _UNNAMED.format(next(i + 1 for i in unnamed if cells[i])))
            else:
                yield _csv_record(dict(zip(header, cells, strict=True)), start, columns)
    except csv.Error as exc:
        yield _csv_stop(str(exc), line + 1 if header is not None else 1)


_UNNAMED = "has a value in column {}, one of several columns with no name in the header; name it"
_DELIMITERS = {";": "semicolons (;)", "\t": "tabs", "|": "vertical bars (|)"}


def _csv_header(names: list[str]) -> list[str]:
    """The column names, without spaces around them. Trimming is safe: a space at either end of
    a name is never what tells two columns apart (two that would then share a name refuse the
    file), no cell is touched, and `trace_id, response` is then what its writer meant."""
    if len(names) == 1:
        found = max(_DELIMITERS, key=names[0].count)
        if found in names[0]:
            raise InputError(
                f"the CSV header is one column named {names[0]!r}: the file seems to use "
                f"{_DELIMITERS[found]} between its columns, not commas. annotate reads "
                "comma-separated CSV: save the file again with commas as the delimiter"
            )
    trimmed = [name.strip() for name in names]
    columns: dict[str, list[int]] = {}
    for position, name in enumerate(trimmed, start=1):
        if name:  # several unnamed columns are fine while their cells are empty
            columns.setdefault(name, []).append(position)
    repeated = [
        f"{name!r} in columns {', '.join(map(str, at[:-1]))} and {at[-1]}"
        for name, at in columns.items()
        if len(at) > 1
    ]
    if repeated:
        spaced = " (names are compared without the spaces around them)"
        raise InputError(
            f"the CSV header names a column more than once: {'; '.join(repeated)}"
            f"{spaced if trimmed != names else ''}. A row holds one value a name, so the cells "
            "of all but one such column would be lost. Rename or remove the extra columns "
            "(a renamed column can be made a field with --map FIELD=NEW_NAME)"
        )
    return trimmed


def _ragged(line: int, cells: int, columns: int) -> RowError:
    fix = (
        "quote cells that hold commas"
        if cells > columns
        else "which one is missing cannot be told; write every column's cell (an empty one "
        "as nothing between two commas)"
    )
    more = "more" if cells > columns else "fewer"
    return RowError(
        line, "", f"has {more} cells ({cells}) than the header has columns ({columns}); {fix}"
    )


def _csv_stop(problem: str, start: int) -> RowError:
    if "field larger than field limit" in problem:
        why = (
            f"a cell is longer than {MAX_TEXT_CHARS:,} characters, the most the store takes; "
            "shorten it"
        )
    elif "unexpected end of data" in problem:
        why = (
            'a quoted cell that begins on this line is never closed: its " quote runs to the '
            "end of the file and swallows every line after it; close the quote (write a quote "
            'inside a cell as "")'
        )
    else:
        why = f'the CSV quoting is broken ({problem}); a quote inside a cell is written as ""'
    return RowError(start, "", f"{why}. Reading stopped here. {ROWS_KEPT}")


def _csv_record(row: dict[str, Any], line: int, columns: frozenset[str]) -> Record | RowError:
    """One row's fields; context/claims/judge/attributes cells decoded (decode_mapped decodes
    the cells --map brings to those fields from other columns)."""
    record: dict[str, Any] = {}
    for key, cell in row.items():
        if cell is None:
            continue
        if _has_surrogates(cell):
            return RowError(line, key, _UTF8_FIX.format(reason="undecodable bytes in this cell"))
        value = _csv_cell(key, cell)
        if isinstance(value, RowError):
            return RowError(line, value.field, value.message)
        if value != "" or key in ("context", "response", "trace_id"):
            record[key] = value
    return Record(line, record, columns=columns)


def decode_mapped(data: dict[str, Any], mapping: Mapping[str, str]) -> dict[str, Any] | RowError:
    """A CSV row after --map: a cell that --map brought to context/claims/judge/attributes from
    another column is still its text; decoded here by the field it landed in, as a cell under
    that field's own name is (`--map context=docs` with `["a", "b"]`: two documents)."""
    decoded = dict(data)
    for target, source in mapping.items():
        value = data.get(target)
        if target in JSON_CELLS and source not in JSON_CELLS and isinstance(value, str):
            cell = _csv_cell(target, value)
            if isinstance(cell, RowError):
                return cell
            decoded[target] = cell
    return decoded


def _csv_cell(key: str, cell: str) -> Any:
    if key not in JSON_CELLS:
        return cell
    stripped = cell.strip()
    if key == "context" and not stripped:
        return []
    if not stripped.startswith(("[", "{")):
        return cell if key == "context" else (None if not stripped else cell)
    try:
        return _loads(stripped)
    except (ValueError, RecursionError):
        return RowError(
            0,
            key,
            f"looks like JSON but is not valid ({json_problem(stripped)}); fix the cell's JSON",
        )


def _loads(text: str) -> Any:
    """orjson, else the stdlib for what a field check names better (NaN, lone surrogates)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _first_significant_byte(fh: IO[bytes]) -> bytes:
    head = fh.read(4096)
    if head.startswith(BOM):
        head = head[len(BOM) :]
    stripped = head.lstrip()
    return stripped[:1]
