"""The JSON array reader: one document holding an array of trace objects, streamed item by item.

A malformed item stops the reader (what follows it cannot be told apart from it): that item is
reported with what is wrong and the fix, and every item before it is kept.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from typing import IO, Any

import ijson

from annotate.errors import counted
from annotate.traces import Record, RowError

BOM = codecs.BOM_UTF8
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_PY_JSON = ijson.get_backend("python")
_NOT_A_NUMBER = re.compile(rb"-?Infinity|NaN")
_KEY_BEFORE = re.compile(rb'"([^"\\]{1,64})"\s*:\s*$')
_STOPPED = (
    ijson.JSONError,
    UnicodeDecodeError,
    ValueError,  # the pure-Python parser's string errors (a control character)
)


def read_json_array(fh: IO[bytes]) -> Iterator[Record | RowError]:
    head = fh.read(len(BOM))
    if head != BOM:
        fh.seek(0)
    start = fh.tell()
    read = 0
    backend = _json_backend(fh)
    try:
        for read, item in enumerate(backend.items(fh, "item", use_float=True), start=1):
            yield Record(read, item, unit="item")
    except _STOPPED as exc:
        if backend is not _PY_JSON and "integer overflow" in _message(exc):
            fh.seek(start)  # the C parser stops at integers past 64 bits; the Python one reads on
            yield from _items_after(fh, read)
        else:
            yield array_stop(read, exc)


def _items_after(fh: IO[bytes], skip: int) -> Iterator[Record | RowError]:
    read = 0
    try:
        for read, item in enumerate(_PY_JSON.items(fh, "item", use_float=True), start=1):
            if read > skip:
                yield Record(read, item, unit="item")
    except _STOPPED as exc:
        yield array_stop(read, exc)


def array_stop(read: int, exc: Exception) -> RowError:
    """Item read + 1 as the row that stopped the reader: what is wrong, the fix, what was kept."""
    was = "was" if read == 1 else "were"
    kept = f"the {counted(read, 'item')} before it {was} read" if read else "none came before it"
    return RowError(
        read + 1,
        "",
        f"{_problem(exc)}. Reading stopped here: this item and every item after it were not "
        f"read ({kept}); fix the file and import it again (items already imported are skipped "
        "as duplicates)",
        unit="item",
    )


def _problem(exc: Exception) -> str:
    """The parser's complaint in the user's words, never a Python bytes repr."""
    message, snippet, caret = _parts(exc)
    undecodable = _undecodable(exc, snippet, caret)
    if undecodable is not None:
        return (
            f"holds the byte 0x{undecodable:02x}, which is not UTF-8 (the file may be Latin-1 "
            "or Windows-1252); re-save the file as UTF-8"
        )
    token, at = _bad_number(exc, snippet, caret)
    if token is not None:
        key = _KEY_BEFORE.search(snippet[:at])
        where = f" as the value of {key.group(1).decode('utf-8', 'replace')!r}" if key else ""
        return (
            f"holds {token}{where}: JSON has no NaN, Infinity or -Infinity; write null for no value"
        )
    if "inside string" in message or "Invalid control character" in message:
        return (
            "holds a control character (a raw tab, line break or other byte below 0x20) inside "
            "a string, which JSON does not allow; write it escaped (\\t, \\n, \\u0001)"
        )
    if "premature EOF" in message or "Incomplete JSON" in message:
        return "the file ends inside this item: it is cut short or its brackets do not close"
    near = snippet.decode("utf-8", "replace").strip() if snippet else ""
    shown = f" near {near[:60]!r}" if near else ""
    first = message.splitlines()[0].strip() if message.strip() else type(exc).__name__
    return f"is not valid JSON ({first}{shown})"


def _message(exc: Exception) -> str:
    arg = exc.args[0] if exc.args else ""
    if isinstance(arg, bytes):
        return arg.decode("utf-8", "replace")
    return str(arg)


def _parts(exc: Exception) -> tuple[str, bytes, int]:
    """The message, the C parser's snippet of the text (bytes) and the column its caret marks."""
    arg = exc.args[0] if exc.args else ""
    raw = arg if isinstance(arg, bytes) else str(arg).encode("utf-8", "replace")
    lines = raw.split(b"\n")
    if len(lines) >= 3 and b"^" in lines[2]:
        return _message(exc), lines[1], lines[2].index(b"^")
    return _message(exc), b"", -1


def _undecodable(exc: Exception, snippet: bytes, caret: int) -> int | None:
    inner = exc.args[0] if exc.args else None
    if isinstance(inner, UnicodeDecodeError):  # the Python parser
        return inner.object[inner.start]
    if isinstance(exc, UnicodeDecodeError):
        return exc.object[exc.start]
    if "invalid bytes in UTF8" not in _message(exc) or not snippet:
        return None
    for at in range(max(caret - 4, 0), len(snippet)):  # the caret sits just past the byte
        if snippet[at] >= 0x80:
            try:
                snippet[at:].decode("utf-8")
            except UnicodeDecodeError as bad:
                if bad.start == 0:
                    return snippet[at]
    return None


def _bad_number(exc: Exception, snippet: bytes, caret: int) -> tuple[str | None, int]:
    """NaN, Infinity or -Infinity where the parser stopped, and where it starts in the snippet."""
    message = _message(exc)
    if message.startswith("Unexpected symbol"):  # the Python parser: "Unexpected symbol 'N' at 15"
        symbol = message.split("'")[1] if "'" in message else ""
        return {"N": "NaN", "I": "Infinity", "-": "-Infinity"}.get(symbol), 0
    if not snippet or not ("invalid char" in message or "malformed number" in message):
        return None, 0
    for found in _NOT_A_NUMBER.finditer(snippet):
        if found.start() <= caret <= found.end():
            return found.group().decode(), found.start()
    return None, 0


def _json_backend(fh: IO[bytes]) -> Any:
    """The C parser, unless the file escapes surrogates: it turns a lone one into "?" silently,
    the pure-Python one keeps it so the field check rejects it like on a JSON line."""
    start = fh.tell()
    found, tail = False, b""
    while chunk := fh.read(1 << 20):
        if _SURROGATE_ESCAPE.search(tail + chunk):
            found = True
            break
        tail = chunk[-8:]
    fh.seek(start)
    return _PY_JSON if found else ijson
