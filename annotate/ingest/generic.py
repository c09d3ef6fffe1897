"""Readers for the generic one-trace-a-row formats: JSON Lines, a JSON array, CSV, Parquet.

Each reader streams a binary file and yields Records (raw dicts with their line or
row number) or RowErrors for rows that cannot even be parsed. Validation of the
fields is not done here: see annotate.traces.parse_record.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Iterator
from typing import IO, Any

import ijson
import orjson

from annotate.traces import Record, RowError

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
        return Record(number, orjson.loads(text))
    except orjson.JSONDecodeError:
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
        text = decode_line(raw, number)
        if isinstance(text, RowError):
            yield text
            continue
        if not text.strip():
            continue
        yield parse_json_line(text.rstrip("\r\n"), number)


def read_json_array(fh: IO[bytes]) -> Iterator[Record | RowError]:
    """One JSON document holding an array of trace objects, streamed item by item."""
    head = fh.read(len(BOM))
    if head != BOM:
        fh.seek(0)
    index = 0
    try:
        for index, item in enumerate(ijson.items(fh, "item", use_float=True), start=1):
            yield Record(index, item, unit="item")
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        yield RowError(
            index + 1,
            "",
            f"the JSON document stops being valid after item {index} ({exc}); "
            "fix the file and import it again (items before it were read)",
            unit="item",
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
        yield RowError(1, "", f"the file is not valid JSON ({exc})")


def read_csv(fh: IO[bytes]) -> Iterator[Record | RowError]:
    """CSV with a header row; quoted newlines are fine; JSON cells are decoded."""
    text = io.TextIOWrapper(fh, encoding="utf-8-sig", errors="surrogateescape", newline="")
    reader = csv.DictReader(text)
    line = reader.line_num + 1
    for row in reader:
        start, line = line + 1, reader.line_num
        yield _csv_record(row, start)


def _csv_record(row: dict[str | Any, Any], line: int) -> Record | RowError:
    if None in row:
        return RowError(
            line, "", "has more cells than the header has columns; quote cells that hold commas"
        )
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
    return Record(line, record)


def _csv_cell(key: str, cell: str) -> Any:
    if key not in JSON_CELLS:
        return cell
    stripped = cell.strip()
    if key == "context" and not stripped:
        return []
    if not stripped.startswith(("[", "{")):
        return cell if key == "context" else (None if not stripped else cell)
    try:
        return orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return RowError(
            0,
            key,
            f"looks like JSON but is not valid ({json_problem(stripped)}); fix the cell's JSON",
        )


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def read_parquet(fh: IO[bytes]) -> Iterator[Record | RowError]:
    """Parquet, streamed in row batches; nested lists and structs arrive as Python objects."""
    import pyarrow.parquet as pq

    number = 0
    for batch in pq.ParquetFile(fh).iter_batches(batch_size=2048):
        for row in batch.to_pylist():
            number += 1
            yield Record(number, {k: v for k, v in row.items() if v is not None}, unit="row")


def _first_significant_byte(fh: IO[bytes]) -> bytes:
    head = fh.read(4096)
    if head.startswith(BOM):
        head = head[len(BOM) :]
    stripped = head.lstrip()
    return stripped[:1]
