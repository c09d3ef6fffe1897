"""Input formats: detect a file's format from its content and stream its raw records.

One module per format; each exposes `read_records(fh) -> Iterator[Record | RowError]`
yielding plain dicts in the generic trace shape (see annotate.traces), so validation
and storage are the same for every format. The readers never touch the store; importer.py,
labels.py and inbox.py write through store/. A large JSON Lines import reads and checks its
rows in reader processes (reader_process.py, parsed.py: no store there either). May import
accounts/, store/, traces/, errors.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import orjson

from annotate.errors import AnnotateError, InputError, UsageError
from annotate.ingest import generic, mlflow_tables, otlp, phoenix_tables, phoenix_traces, transcript
from annotate.ingest.call_context import ALL_CONTEXT
from annotate.traces import Record, RowError

Reader = Callable[[IO[bytes]], Iterator[Record | RowError]]

READERS: dict[str, Reader] = {
    "jsonl": generic.read_jsonl,
    "json": generic.read_json_document,
    "csv": generic.read_csv,
    "parquet": generic.read_parquet,
    "otlp": otlp.read_records,
    "transcript": transcript.read_records,
    "phoenix_spans": phoenix_tables.read_spans,
    "phoenix_annotations": phoenix_tables.read_annotations,
    "phoenix_context": phoenix_tables.read_context_table,
    "mlflow": mlflow_tables.read_records,
    "phoenix_traces": phoenix_traces.read_records,  # pulled from a server (annotate.connectors)
}
# Readers that find a call's context themselves, by kind: they take the kinds to keep.
CONTEXT_READERS: dict[str, Callable[[IO[bytes], frozenset[str]], Iterator[Record | RowError]]] = {
    "otlp": otlp.read_records,
    "phoenix_spans": phoenix_tables.read_spans,
    "mlflow": mlflow_tables.read_records,
    "phoenix_traces": phoenix_traces.read_records,
}
FORMATS = tuple(READERS)
_KNOWN = (
    "JSON Lines, a JSON array, CSV, Parquet, OTLP JSON, an agent transcript (JSON Lines), or "
    "a Phoenix or MLflow table"
)


def input_file(
    path: str | os.PathLike[str], command: str = "annotate import PATH", name: str | None = None
) -> Path:
    """The file to import, checked before any store is opened: a typo makes no store.
    `name`: what the user calls it (an upload's name, not its temporary path)."""
    if not str(path).strip():
        raise UsageError(f"give the file to import: {command}")
    file_path = Path(path)
    if not file_path.is_file():
        raise UsageError(f"{file_path} does not exist or is not a file")
    if file_path.stat().st_size == 0:
        raise InputError(f"{name or file_path} is empty: there is nothing to import")
    return file_path


def read_records(
    fh: IO[bytes], fmt: str, context: frozenset[str] = ALL_CONTEXT
) -> Iterator[Record | RowError]:
    """`context`: the kinds of context (call_context.CONTEXT_KINDS) a format that finds a
    call's context itself (OTLP) keeps; the other formats carry theirs in the row."""
    if fmt not in READERS:
        raise InputError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    if fmt in CONTEXT_READERS:
        return _guarded(CONTEXT_READERS[fmt](fh, context))
    return _guarded(READERS[fmt](fh))


def _guarded(records: Iterator[Record | RowError]) -> Iterator[Record | RowError]:
    """A reader that fails unexpectedly stops there: that row is reported, the rows before kept."""
    last: Record | RowError | None = None
    try:
        for item in records:
            last = item
            yield item
    except AnnotateError:
        raise
    except Exception as exc:
        line = last.line + 1 if last is not None else 1
        unit = last.unit if last is not None else "line"
        yield RowError(
            line,
            "",
            f"the file cannot be read from here ({type(exc).__name__}: {str(exc)[:200]}). "
            "Reading stopped; the rows before it were kept: fix the file and import it again",
            unit,
        )


def detect_format(fh: IO[bytes], name: str) -> str:
    """Decide the format from the first bytes; the file position is reset afterwards."""
    head = fh.read(65536)
    fh.seek(0)
    if not head.strip():
        raise InputError(f"{name} is empty: there is nothing to import")
    if head[:4] == b"PAR1":
        return _tool_format(_parquet_columns(fh)) or "parquet"
    if _is_binary(head):
        raise InputError(f"{name} looks like a binary file, not text; expected {_KNOWN}")
    text = head.removeprefix(generic.BOM).lstrip()
    if text.startswith(b"["):
        return _tool_format(_first_item(text)) or "json"
    if text.startswith(b"{"):
        return _detect_json(text)
    if name.lower().endswith(".csv") or b"," in text.split(b"\n", 1)[0]:
        return "csv"
    raise InputError(f"cannot tell the format of {name}; expected {_KNOWN}, or pass --format")


def _detect_json(text: bytes) -> str:
    first_line = text.split(b"\n", 1)[0]
    try:
        first = orjson.loads(first_line)
    except orjson.JSONDecodeError:
        if b'"resourceSpans"' in text or b'"resourceLogs"' in text:
            return "otlp"
        return "json" if first_line.strip() == b"{" else "jsonl"
    if otlp.looks_like(first):
        return "otlp"
    if transcript.looks_like(first):
        return "transcript"
    return _tool_format(first) or "jsonl"


def _tool_format(first: object) -> str | None:
    """A tracing tool's table, told by its first row's keys (a Parquet file's columns)."""
    if mlflow_tables.looks_like(first):
        return "mlflow"
    return phoenix_tables.table_format(first)


def _parquet_columns(fh: IO[bytes]) -> dict[str, None] | None:
    """The Parquet schema's column names as a row's keys; None when it cannot be read (the
    Parquet reader then says why). The file position is reset afterwards."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return dict.fromkeys(pq.read_schema(fh).names)
    except (pa.ArrowException, OSError):
        return None
    finally:
        fh.seek(0)


def _first_item(text: bytes) -> object:
    """The first item of a JSON array when the head read holds it whole, else None."""
    try:
        item, _end = json.JSONDecoder().raw_decode(text[1:].decode("utf-8", "replace").lstrip())
    except ValueError:
        return None
    return item


BINARY_SHARE = 0.10


def _is_binary(head: bytes) -> bool:
    """Binary when more than a tenth of the first 64 KiB are NUL or other control bytes;
    a stray NUL in a text file is reported on its line instead."""
    control = sum(1 for byte in head if byte < 9 or 13 < byte < 32)
    return control > len(head) * BINARY_SHARE
